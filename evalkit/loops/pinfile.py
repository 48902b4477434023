"""The file a watch reads its pin from and `--bump` edits: a TOML file's `[agents]` table
(as evalkit's own `pins.toml`), or a suite's `agents:` block in `evalkit.yaml`.

A bump changes the one version and nothing else: the value is rewritten where the
round-trip parser found it, so comments, quoting and layout stay as a person wrote them and
the diff a pull request shows is that one line. Every edit is read back and refused unless
the file now says the new version and, that aside, all it said before.
"""

from __future__ import annotations

import difflib
import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from evalkit.errors import ConfigError
from evalkit.outpaths import replace_file
from evalkit.records.rows.versions import SEMVER
from evalkit.suite.yamlio import dump, load_text

Kind = Literal["toml", "suite"]


@dataclass(frozen=True)
class Pin:
    """Where a watch's pin of one agent comes from, and where a bump writes it."""

    agent: str
    version: str
    path: Path
    kind: Kind
    source: str
    """How the pin was found, for the person reading: the file and key, or evalkit's own."""


def _version(value: Any, where: str) -> str:
    if not isinstance(value, str) or not SEMVER.match(value):
        raise ConfigError(f"{where}: {value!r} is not a version (MAJOR.MINOR.PATCH)")
    return value


def _toml(text: str, path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: TOML does not parse: {exc}") from None


def read_toml_pin(path: Path, agent: str) -> Pin:
    """AGENT's version in the `[agents]` table of the TOML file at `path`."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the pin file ({exc.strerror})") from None
    agents = _toml(text, path).get("agents")
    if not isinstance(agents, dict) or agent not in agents:
        raise ConfigError(f"{path}: its [agents] table names no {agent}")
    version = _version(agents[agent], f"{path}: [agents] {agent}")
    return Pin(agent, version, path, "toml", f"{path} [agents] {agent}")


_HEADER = re.compile(r"\s*\[\s*([^\]]*?)\s*\]")


def bump_toml(text: str, agent: str, version: str, path: Path) -> str:
    """`text` with AGENT's string in its `[agents]` table set to `version`, in place."""
    key = rf'(?:{re.escape(agent)}|"{re.escape(agent)}")'
    line_of = re.compile(rf"(\s*{key}\s*=\s*)([\"'])([^\"'\n]*)\2")
    lines = text.splitlines(keepends=True)
    table = ""
    for number, line in enumerate(lines):
        header = _HEADER.match(line)
        if header is not None:
            table = header.group(1)
            continue
        found = line_of.match(line) if table == "agents" else None
        if found is not None:
            quote = found.group(2)
            lines[number] = found.group(1) + quote + version + quote + line[found.end() :]
            break
    else:
        raise ConfigError(f'{path}: no `{agent} = "…"` line in its [agents] table to bump')
    bumped = "".join(lines)
    _same_but_the_pin(_toml(text, path), _toml(bumped, path), agent, version, path)
    return bumped


def bump_yaml(text: str, agent: str, version: str, path: Path) -> str:
    """`text` (a suite's evalkit.yaml) with `agents.AGENT` set to `version`: the scalar
    replaced where it stands, a key added to a block `agents:` or a block added at the end
    when there is none; only a flow mapping lacking the agent is written out again by the
    round-trip writer."""
    data = load_text(text, path)
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: not a mapping at the top level")
    agents = data.get("agents")
    lines = text.splitlines(keepends=True)
    if "agents" not in data:
        tail = "" if not text or text.endswith("\n") else "\n"
        bumped = f'{text}{tail}\nagents:\n  {agent}: "{version}"\n'
    elif isinstance(agents, dict) and agent in agents:
        number, column = agents.lc.value(agent)  # type: ignore[attr-defined]
        lines[number] = _scalar_replaced(lines[number], column, version)
        bumped = "".join(lines)
    elif isinstance(agents, dict) and agents and not agents.fa.flow_style():  # type: ignore[attr-defined]
        number, column = agents.lc.key(next(iter(agents)))  # type: ignore[attr-defined]
        lines.insert(number, f'{" " * column}{agent}: "{version}"\n')
        bumped = "".join(lines)
    else:
        data["agents"] = {**(agents or {}), agent: version}
        bumped = dump(data)
    _same_but_the_pin(load_text(text, path), load_text(bumped, path), agent, version, path)
    return bumped


def _scalar_replaced(line: str, column: int, version: str) -> str:
    """The line with the scalar starting at `column` replaced by `version`, its quotes kept."""
    rest = line[column:]
    if rest[:1] in ("'", '"'):
        end = rest.index(rest[0], 1) + 1
        return line[:column] + rest[0] + version + rest[0] + rest[end:]
    plain = re.match(r"[^\s#,}\]]+", rest)
    end = plain.end() if plain is not None else 0
    return line[:column] + version + rest[end:]


def _without(data: Any, agent: str) -> Any:
    """The document as plain data, less AGENT's pin (and an `agents` left empty by that)."""
    plain = json.loads(json.dumps(data, default=str))
    if isinstance(plain, dict) and isinstance(plain.get("agents"), dict):
        rest = {k: v for k, v in plain["agents"].items() if k != agent}
        plain.pop("agents")
        plain.update({"agents": rest} if rest else {})
    return plain


def _same_but_the_pin(before: Any, after: Any, agent: str, version: str, path: Path) -> None:
    """Refuse an edit after which the file does not say `version`, or says anything else
    differently from before."""
    pins = after.get("agents") if isinstance(after, dict) else None
    if not isinstance(pins, dict) or pins.get(agent) != version:
        raise ConfigError(f"{path}: the bump did not read back as {agent} {version}; not written")
    if _without(before, agent) != _without(after, agent):
        raise ConfigError(f"{path}: the bump would change more than agents.{agent}; not written")


def bumped_text(pin: Pin, version: str) -> tuple[str, str]:
    """(the pin file as it is, as it would be with the pin at `version`)."""
    try:
        text = pin.path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{pin.path}: cannot read the pin file ({exc.strerror})") from None
    edit = bump_toml if pin.kind == "toml" else bump_yaml
    return text, edit(text, pin.agent, version, pin.path)


def write_bump(pin: Pin, version: str, shown: str) -> str:
    """Bump the pin file to `version` (replaced whole, never half written) and return the
    unified diff, its file named `shown`."""
    old, new = bumped_text(pin, version)
    replace_file(pin.path, new.encode("utf-8"))
    return unified(old, new, shown)


def unified(old: str, new: str, shown: str) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{shown}", f"b/{shown}"
    )
    return "".join(lines)
