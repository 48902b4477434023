"""The results folder and its records: where each file lives, how it is appended, read
and refused."""
