"""The declarative checker: verdicts written as conditions in YAML, no Python needed."""
