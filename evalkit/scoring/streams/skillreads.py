"""A skill's use read from what a shell command read: the body of one skill's SKILL.md.

Codex (and Gemini, through its shell) finds a skill listed and opens its SKILL.md with a
shell command. A command whose output is that one file's body is the skill's use: `cat`,
`cat -n`, `sed -n '1,200p'`, `head`, `tail`, `nl`, `awk`, `less`, `more`, `python3 -c`
with `open(…).read()`, optionally piped through a pager or `head`. Listing or searching
across skills (`ls`, `find`, `grep -l`, `rg`, a glob over several SKILL.md) reads no
skill's body, and neither does a command that does anything else besides.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from evalkit.scoring.shellpaths import Reader, command_name, pipelines

SKILL_FILE = "SKILL.md"
PAGERS = frozenset({"cat", "head", "tail", "nl", "less", "more"})
"""Commands that print a file they are given whole (or its first or last lines)."""
_COUNT = re.compile(r"^[+-]?\d+$")
_SED_PRINT = re.compile(r"^(?:\d+|\$)?(?:,(?:\d+|\$))?p$")
_CODE_PATH = re.compile(r"""(?:open|Path)\(\s*(?:r|f)?(['"])([^'"]+)\1""")
_CODE_READS = re.compile(r"\.read(?:_text|lines)?\(|\breadlines\(")
_CODE_WRITES = re.compile(r"""write|['"][wax]b?\+?['"]|unlink|remove|rename""")


def skill_read(command: str) -> str | None:
    """The skill (its SKILL.md's folder name) whose body the command prints, or None."""
    found = pipelines(command)
    if len(found) != 1:
        return None
    reader = Reader("/", "/", "")
    simples = [reader.simple(tokens) for tokens in found[0]]
    if any(t not in ("/dev/null",) for s in simples for t in s.outputs):
        return None
    path = _read_file(simples[0].words)
    if path is None or not all(_passes_on(s.words) for s in simples[1:]):
        return None
    if not (path == SKILL_FILE or path.endswith("/" + SKILL_FILE)) or "*" in path:
        return None
    return PurePosixPath(path).parent.name or None


def _read_file(words: list[str]) -> str | None:
    """The one file a simple command prints the body of, or None."""
    name, args = command_name(words)
    files = [a for a in args if not a.startswith("-") and not _COUNT.match(a)]
    if name in PAGERS:
        return files[0] if len(files) == 1 else None
    if name == "sed":
        scripts, rest = (files[:1], files[1:]) if "-e" not in args else (
            [args[args.index("-e") + 1]] if args.index("-e") + 1 < len(args) else [], files[1:]
        )  # fmt: skip
        printing = bool(scripts) and _SED_PRINT.match(scripts[0]) is not None
        return rest[0] if printing and "-i" not in args and len(rest) == 1 else None
    if name in ("awk", "gawk", "mawk"):
        plain = [a for a in args if not a.startswith("-")]
        program, rest = (plain[0], plain[1:]) if plain else ("", [])
        quiet = not re.search(r"[>|]|system|getline", program)
        return rest[0] if program and quiet and len(rest) == 1 else None
    if name in ("python", "python3") and len(args) == 2 and args[0] == "-c":
        return _code_read(args[1])
    return None


def _code_read(code: str) -> str | None:
    paths = [m.group(2) for m in _CODE_PATH.finditer(code)]
    rest = _CODE_PATH.sub("", code)
    if len(paths) != 1 or not _CODE_READS.search(rest) or _CODE_WRITES.search(rest):
        return None
    return paths[0]


def _passes_on(words: list[str]) -> bool:
    """A later command of the pipeline that only pages what it is given."""
    name, args = command_name(words)
    return name in PAGERS and all(a.startswith("-") or _COUNT.match(a) for a in args)
