"""The agents evalkit can drive besides Claude Code: how each is found, configured and
launched. Each agent's launch adapter lives in a module of its own."""
