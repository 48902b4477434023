"""The agents evalkit drives, one adapter each (`claude.py`, `codex.py`, `gemini.py`), to the
protocol and capability table of `base.py`; `registry.adapter(name)` finds one."""
