"""Normalisers from another agent's event stream into evalkit's one transcript model, so the
checkers read the same tool names whichever agent ran. They decide what a verdict sees, so
they are scoring code and hashed with it."""
