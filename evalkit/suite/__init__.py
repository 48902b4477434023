"""A suite on disk: its config, scenarios, the held-out Task reader and the lock."""
