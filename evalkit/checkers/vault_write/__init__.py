"""The vault-write eval: its scoring module is hashed into the lock; the rest is reference."""
