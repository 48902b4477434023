"""evalkit: held-out evaluations of what a headless coding agent does unprompted."""

__version__ = "0.1.0"
