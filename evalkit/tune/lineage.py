"""What a tune leaves: its variants in `evalkit.yaml`, their overlays, `tune.jsonl` and the
final patch.

A variant is added to the suite's `variants:` block by the round-trip parser's positions,
so comments and layout stay as a person wrote them; the edit is read back and refused unless
the file now names the variant and, that aside, says all it said before. Variants sit
outside the frozen instrument, so adding one never makes a run refuse.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from evalkit.errors import ConfigError
from evalkit.outpaths import replace_file
from evalkit.suite.config import Suite
from evalkit.suite.yamlio import dump, load_text

LINEAGE = "tune.jsonl"
PATCH = "tune.patch"
PREFIX = "tune-"


@dataclass
class RoundLine:
    """One line of tune.jsonl: a round, what it proposed and what the run set said."""

    round: int
    variant: str | None
    parent: str
    diff_hash: str | None
    brief_hash: str
    decision: str
    reason: str
    delta: float | None = None
    interval: list[float] | None = None
    reps: int = 0
    cost_usd: float = 0.0
    proposer_reps: int = 0
    """The proposer agent's reps this round (none for a command); `reps` counts the grids'."""
    proposer_cost_usd: float = 0.0
    discarded: list[str] = field(default_factory=list)
    tune: str = ""
    kind: str = "round"


def append_line(work: Path, line: RoundLine | dict[str, Any]) -> None:
    data = asdict(line) if isinstance(line, RoundLine) else line
    with (work / LINEAGE).open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(data, sort_keys=True) + "\n")


def next_number(suite: Suite) -> int:
    """The next free `tune-<n>`: a second tune of the suite never reuses a variant's name."""
    taken = [int(m.group(1)) for name in suite.config.variants
             if (m := re.fullmatch(rf"{PREFIX}(\d+)", name))]  # fmt: skip
    folders = suite.root / "variants"
    if folders.is_dir():
        taken += [int(m.group(1)) for p in folders.iterdir()
                  if (m := re.fullmatch(rf"{PREFIX}(\d+)", p.name))]  # fmt: skip
    return max(taken, default=0) + 1


def write_overlay(suite: Suite, name: str, files: dict[str, bytes]) -> str:
    """The overlay folder of variant `name` holding `files` (suite-relative); its path."""
    rel = f"variants/{name}"
    root = suite.root / rel
    if root.exists():
        raise ConfigError(f"{root}: already there; a tune never writes over a variant")
    for path, data in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return rel


def add_variant(suite: Suite, name: str, overlay: str, description: str) -> None:
    """`variants.<name>: {overlay: ..., description: ...}` added to evalkit.yaml in place."""
    path = suite.config_path
    text = path.read_text(encoding="utf-8")
    data = load_text(text, path)
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: not a mapping at the top level")
    entry = f'{name}: {{overlay: {overlay}, description: "{description}"}}'
    variants = data.get("variants")
    lines = text.splitlines(keepends=True)
    if "variants" not in data or variants is None:
        tail = "" if not text or text.endswith("\n") else "\n"
        rest = [ln for ln in lines if not re.match(r"variants:\s*(#.*)?$", ln.rstrip("\n"))]
        edited = "".join(rest) + f"{tail}\nvariants:\n  {entry}\n"
    elif isinstance(variants, dict) and variants and not variants.fa.flow_style():  # type: ignore[attr-defined]
        number, column = variants.lc.key(next(iter(variants)))  # type: ignore[attr-defined]
        lines.insert(number, f"{' ' * column}{entry}\n")
        edited = "".join(lines)
    else:
        data["variants"] = {**(variants or {}), name: {"overlay": overlay,
                                                       "description": description}}  # fmt: skip
        edited = dump(data)
    _same_but_the_variant(load_text(text, path), load_text(edited, path), name, overlay, path)
    replace_file(path, edited.encode("utf-8"))


def _plain(data: Any, name: str) -> Any:
    plain = json.loads(json.dumps(data, default=str))
    if isinstance(plain, dict):
        rest = {k: v for k, v in (plain.pop("variants", None) or {}).items() if k != name}
        plain.update({"variants": rest} if rest else {})
    return plain


def _same_but_the_variant(before: Any, after: Any, name: str, overlay: str, path: Path) -> None:
    said = (after.get("variants") or {}).get(name) if isinstance(after, dict) else None
    if not isinstance(said, dict) or said.get("overlay") != overlay:
        raise ConfigError(f"{path}: the new variant {name} did not read back; not written")
    if _plain(before, name) != _plain(after, name):
        raise ConfigError(f"{path}: adding variant {name} would change more; not written")


def patch(base: dict[str, bytes], best: dict[str, bytes]) -> str:
    """The unified diff from the suite's own wording to the best variant's, file by file."""
    out: list[str] = []
    for rel in sorted(set(base) | set(best)):
        old, new = base.get(rel, b""), best.get(rel, b"")
        if old == new:
            continue
        out += difflib.unified_diff(
            old.decode("utf-8", "replace").splitlines(keepends=True),
            new.decode("utf-8", "replace").splitlines(keepends=True),
            f"a/{rel}" if rel in base else "/dev/null", f"b/{rel}",
        )  # fmt: skip
    return "".join(out)
