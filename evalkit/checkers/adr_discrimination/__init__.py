"""The ADR discrimination eval: its scoring module is hashed; the rest is reference."""
