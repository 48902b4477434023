"""`evalkit tune`: the wording loop run by evalkit, under the held-out rules."""
