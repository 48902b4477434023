"""A rep's kept evidence: its diffs, their replay, and what is redacted before it is kept."""
