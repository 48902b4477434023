"""The results folder: rows, plans, manifest, evidence, verify and report."""
