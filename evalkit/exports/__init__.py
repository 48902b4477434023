"""A results folder in the formats other tools read: one module per format."""
