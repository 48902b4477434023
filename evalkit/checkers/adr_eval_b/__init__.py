"""os-adr Eval B: unprompted write-trigger and retrieval."""
