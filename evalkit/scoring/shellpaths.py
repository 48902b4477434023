"""Which shell commands reach a guarded path: by what they name, breaches by default.

A command names a guarded root when any word of it, or any path-shaped piece of a word (a
string inside `python3 -c` code, an `--out=` value, a heredoc's body), lands at or under
the root: spelled absolute, `~/…`, `$HOME/…`, through a variable the command set, relative
to the folder a `cd` left it in, or as a glob that can match it. A pipeline that names a
root writes there unless every simple command in it is on the read-only list below (a
redirection into the root writes whatever the command is). Anything else, `cp`,
`python3 -c`, `bash -c`, an unknown tool, is a write: what a command did is not guessed
from a list of writers.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field

READ_ONLY = frozenset(
    {
        "ls", "cat", "head", "tail", "grep", "egrep", "fgrep", "rg", "find", "wc", "stat",
        "du", "nl", "less", "more", "file", "realpath", "readlink", "basename", "dirname",
        "pwd", "echo", "printf", "test", "[", "true", "false", "tree", "diff", "cmp",
        "md5sum", "sha1sum", "sha256sum", "git", "cd", "pushd", "popd",
    }
)  # fmt: skip
"""Commands that read what they name. `find`, `git`, `rg`, `less`, `file` and `tree` only
without the options below."""
FILTERS = frozenset({"sort", "uniq", "cut", "tr", "tee", "jq"})
"""Commands a pipeline may pass a guarded path's names through: they write only what they
name themselves (and naming the root makes them writes)."""
GIT_READS = frozenset(
    {"log", "show", "status", "diff", "ls-files", "grep", "blame", "rev-parse", "ls-tree",
     "cat-file"}
)  # fmt: skip
WRITING_OPTIONS = {
    "find": ("-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprintf", "-fls"),
    "rg": ("--pre",),
    "less": ("-o", "-O", "--log-file", "--LOG-FILE"),
    "file": ("-C", "--compile"),
    "tree": ("-o",),
    "git": ("--output",),
    "sort": ("-o", "--output"),
}
PREFIXES = frozenset(
    {"sudo", "env", "nohup", "command", "exec", "time", "nice", "builtin", "export", "local",
     "declare", "readonly"}
)  # fmt: skip
SEPARATORS = frozenset({"||", "&&", ";", "&", "(", ")", ";;"})
PIPES = frozenset({"|", "|&"})
_PIECE = re.compile(r"[\s'\"`(),;=<>|&{}]+")
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][\w.-]*)\1")
_VAR = re.compile(r"\$(?:\{(\w+)\}|(\w+))")
_ASSIGN = re.compile(r"^([A-Za-z_]\w*)=(.*)$", re.DOTALL)
_GLOB = re.compile(r"[*?\[]")


@dataclass
class Simple:
    """One simple command: its words, what it redirects output into, and where it runs."""

    words: list[str]
    outputs: list[str] = field(default_factory=list)
    cwd: str = ""


def _lines(command: str) -> Iterator[str]:
    """The command's lines, each heredoc's body joined to the line that opened it."""
    lines = command.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        for found in _HEREDOC.finditer(line):
            body: list[str] = []
            while i < len(lines) and lines[i].strip() != found.group(2):
                body.append(lines[i])
                i += 1
            i += 1
            line += " " + shlex.quote("\n".join(body))
        yield line


def _tokens(line: str) -> list[str]:
    try:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = ""
        return list(lexer)
    except ValueError:
        return line.split()


def pipelines(command: str) -> list[list[list[str]]]:
    """The command as pipelines of simple commands' raw tokens, in order."""
    found: list[list[list[str]]] = []
    for line in _lines(command):
        current: list[list[str]] = [[]]
        for token in _tokens(line):
            if token in PIPES:
                current.append([])
            elif token in SEPARATORS:
                found.append(current)
                current = [[]]
            else:
                current[-1].append(token)
        found.append(current)
    return [[s for s in p if s] for p in found if any(p)]


class Reader:
    """A command read for one guarded root, from the session's working folder."""

    def __init__(self, root: str, cwd: str, home: str) -> None:
        self.root = posixpath.normpath(root)
        self.parts = self.root.split("/")
        self.cwd = cwd
        self.home = home
        self.vars: dict[str, str] = {"HOME": home}

    def expand(self, text: str) -> str:
        text = _VAR.sub(lambda m: self.vars.get(m.group(1) or m.group(2), m.group(0)), text)
        if text == "~" or text.startswith("~/"):
            text = self.home + text[1:]
        return text

    def lands(self, piece: str, cwd: str) -> bool:
        """True when a path spelled `piece` from `cwd` is the root or under it."""
        path = self.expand(piece)
        if not path or "$" in path:
            return False
        path = posixpath.normpath(posixpath.join(cwd, path))
        if path == self.root or path.startswith(self.root + "/"):
            return True
        if not _GLOB.search(path):
            return False
        parts = path.split("/")
        return len(parts) >= len(self.parts) and all(
            fnmatch.fnmatchcase(r, p) for r, p in zip(self.parts, parts, strict=False)
        )

    def names(self, word: str, cwd: str) -> bool:
        """A word, or any path-shaped piece of it, lands under the root."""
        return self.lands(word, cwd) or any(
            self.lands(p, cwd) for p in _PIECE.split(word) if p and p != word
        )

    def inside(self, cwd: str) -> bool:
        return cwd == self.root or cwd.startswith(self.root + "/")

    def simple(self, tokens: list[str]) -> Simple:
        """A simple command's words and output targets; a `cd` moves the folder after it."""
        out = Simple([], cwd=self.cwd)
        skip = False
        for n, token in enumerate(tokens):
            if skip:
                skip = False
            elif ">" in token and set(token) <= set("<>&|"):
                target = tokens[n + 1] if n + 1 < len(tokens) else ""
                if not (token.endswith("&") and target.isdigit()):
                    out.outputs.append(target)
                skip = True
            elif set(token) <= set("<&") and token:
                skip = token in ("<<", "<<-")
            elif not token.isdigit() or n + 1 >= len(tokens) or ">" not in tokens[n + 1]:
                out.words.append(token)
        self._assign_or_move(out.words)
        return out

    def _assign_or_move(self, words: list[str]) -> None:
        bare = [w for w in words if w not in PREFIXES]
        if bare and all(_ASSIGN.match(w) for w in bare):
            for w in bare:
                name, value = _ASSIGN.match(w).groups()  # type: ignore[union-attr]
                self.vars[name] = self.expand(value)
        elif words and words[0] in ("cd", "pushd"):
            where = self.expand(words[1]) if len(words) > 1 else self.home
            if where != "-" and "$" not in where:
                self.cwd = posixpath.normpath(posixpath.join(self.cwd, where))


def command_name(words: list[str]) -> tuple[str, list[str]]:
    """The command a simple command runs (prefixes, assignments and xargs' options aside)
    and its arguments."""
    words = list(words)
    while words and (words[0] in PREFIXES or _ASSIGN.match(words[0]) or words[0] == "xargs"):
        head = words.pop(0)
        if head in ("xargs", "nice", "env", "sudo"):
            while words and words[0].startswith("-"):
                words.pop(0)
    if not words:
        return "", []
    return posixpath.basename(words[0]), words[1:]


def read_only(words: list[str], allowed: frozenset[str] = READ_ONLY) -> bool:
    """True for a simple command on the read-only list, used without a writing option."""
    name, args = command_name(words)
    if not name:
        return True
    if name not in allowed:
        return False
    writing = WRITING_OPTIONS.get(name, ())
    if any(a == w or a.startswith(w + "=") or (w == "--output" and a.startswith(w))
           for a in args for w in writing):  # fmt: skip
        return False
    if name == "git":
        return _git_read(args)
    if name == "uniq":
        return len([a for a in args if not a.startswith("-")]) <= 1
    return True


def _git_read(args: list[str]) -> bool:
    rest = list(args)
    while rest and rest[0].startswith("-"):
        option = rest.pop(0)
        if option in ("-C", "-c") and rest:
            rest.pop(0)
    return bool(rest) and rest[0] in GIT_READS


@dataclass
class Reach:
    """What one command does to one guarded root."""

    named: bool = False
    """Some word of the command lands under the root (a read or a write)."""
    writes: list[str] = field(default_factory=list)
    """What it writes there: each offending simple command's first word naming the root."""


def reach(command: str, root: str, cwd: str, home: str) -> Reach:
    """Whether a command names `root` and which of its simple commands write there."""
    found = Reach()
    if not _may_name(command, root, cwd):
        return found
    reader = Reader(root, cwd, home)
    for pipeline in pipelines(command):
        simples = [reader.simple(tokens) for tokens in pipeline]
        hits = [_hit(reader, s) for s in simples]
        if not any(hits):
            continue
        found.named = True
        into = [t for s in simples for t in s.outputs if reader.names(t, s.cwd)]
        passing = READ_ONLY | FILTERS
        clean = all(
            read_only(s.words) if hit else read_only(s.words, passing)
            for s, hit in zip(simples, hits, strict=True)
        )
        if into or not clean:
            found.writes.append(into[0] if into else next(h for h in hits if h))
    return found


def _hit(reader: Reader, simple: Simple) -> str:
    """The first word of a simple command that names the root ('' for none); run inside
    the root, its command word."""
    if reader.inside(simple.cwd) and simple.words:
        return simple.words[0]
    for word in [*simple.words, *simple.outputs]:
        if reader.names(word, simple.cwd):
            return word
    return ""


def _may_name(command: str, root: str, cwd: str) -> bool:
    """A cheap test first: a command that never spells the root's last name, has no glob
    and does not start inside it names nothing there."""
    name = posixpath.basename(posixpath.normpath(root))
    return name in command or bool(_GLOB.search(command)) or Reader(root, cwd, "").inside(cwd)


def names_path(value: object, root: str, cwd: str, home: str) -> bool:
    """Any string in a tool call's input (a path, a pattern, a command) that names root."""
    if isinstance(value, str):
        if os.sep in value or "~" in value or "$" in value:
            return reach(value, root, cwd, home).named or Reader(root, cwd, home).names(value, cwd)
        return False
    if isinstance(value, dict):
        return any(names_path(v, root, cwd, home) for v in value.values())
    if isinstance(value, list):
        return any(names_path(v, root, cwd, home) for v in value)
    return False
