"""`evalkit suite split-reserve`: move a seeded random share of a suite's cases into its reserve,
stratified by polarity.

An ordinary suite's scenario files move from `scenarios/` to `scenarios-reserve/` (their
`set:` rewritten). A plugin keeps its reserve in `<evaldir>-reserve/` beside its eval folder
(`claude plugin eval` would run it inside), which the loader reads as the reserve set and
leaves out of the plugin copy: the case folders move there whole, their ids unchanged.
A frozen suite is refused: a moved case changes the instrument, so the user removes the
lock, splits, and freezes again. Nothing is read aloud: only ids are reported.
"""

from __future__ import annotations

import random
import re
import shutil
from pathlib import Path

from pydantic import Field

from evalkit.errors import ConfigError, RefusedError
from evalkit.models import Model
from evalkit.suite.catalog import SET_FOLDERS, Catalog, load_catalog
from evalkit.suite.plugin_evals import LOCK, instrument_home, read_cases
from evalkit.suite.provenance import reserve_dir

_SET_LINE = re.compile(r"^set:[ \t]*([\"']?)run\1[ \t]*(#.*)?$", re.MULTILINE)


class Split(Model):
    """What split-reserve did: ids only, never a Task."""

    moved: list[str] = Field(description="ids of the cases now in the reserve")
    kept: int = Field(description="cases left in the run set")
    seed: int
    reserve: str = Field(description="the folder the reserve lives in")


def choose(strata: dict[str, list[str]], share: float, seed: int) -> list[str]:
    """The seeded share of the cases (at least one, never all), in id order, stratified by
    polarity: each polarity gives its own share (the floor of it, the cases left over going
    to the polarities with the largest remainders, ties by the seed), so a reserve of a
    paired suite keeps its positives and negatives in the run set's proportion."""
    if not 0 < share < 1:
        raise ConfigError(f"--share {share}: must be between 0 and 1 (exclusive)")
    total = sum(len(ids) for ids in strata.values())
    count = max(1, round(share * total))
    if total < 2 or count >= total:
        raise ConfigError(
            f"--share {share}: {total} case(s) in the run set; a split must leave at least "
            "one on each side"
        )
    rng = random.Random(seed)
    names = sorted(strata)
    quota = {n: int(share * len(strata[n])) for n in names}
    order = sorted(names, key=lambda n: (-(share * len(strata[n]) - quota[n]), rng.random()))
    for name in order[: max(0, count - sum(quota.values()))]:
        quota[name] += 1
    chosen: list[str] = []
    for name in names:
        chosen += rng.sample(sorted(strata[name]), min(quota[name], len(strata[name])))
    return sorted(chosen)


def split_reserve(suite_arg: str | Path | None, share: float, seed: int | None) -> Split:
    """Move the chosen cases; everything is checked before the first file moves."""
    catalog = load_catalog(suite_arg)
    home = instrument_home(catalog.root)
    lock = (home or catalog.root) / LOCK
    if lock.is_file():
        raise RefusedError(
            f"{lock}: the suite is frozen; moving a case changes the instrument: remove the "
            "lock, split, then `evalkit suite freeze` again"
        )
    if catalog.scenarios("reserve"):
        raise RefusedError(
            f"{catalog.root}: the suite already has a reserve set "
            f"({len(catalog.scenarios('reserve'))} case(s)); split-reserve makes a reserve once"
        )
    seed = seed if seed is not None else random.SystemRandom().randrange(2**31)
    strata: dict[str, list[str]] = {}
    for scenario in catalog.scenarios("run"):
        strata.setdefault(scenario.scenario.polarity, []).append(scenario.id)
    chosen = choose(strata, share, seed)
    if home is not None:
        folder = _move_cases(home, chosen)
    else:
        folder = _move_scenarios(catalog, chosen)
    kept = len(catalog.scenarios("run")) - len(chosen)
    return Split(moved=chosen, kept=kept, seed=seed, reserve=str(folder))


def _move_cases(evals: Path, chosen: list[str]) -> Path:
    reserve = reserve_dir(evals)
    folders = {c.id: c.folder for c in read_cases(evals)}
    moves = [(folders[i], reserve / folders[i].relative_to(evals)) for i in chosen]
    for _, dest in moves:
        if dest.exists():
            raise RefusedError(f"{dest}: already exists; nothing was moved")
    for source, dest in moves:
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(source, dest)
    return reserve


def _move_scenarios(catalog: Catalog, chosen: list[str]) -> Path:
    reserve = catalog.root / SET_FOLDERS["reserve"]
    planned: list[tuple[Path, Path, str]] = []
    for sf in (s for s in catalog.scenarios("run") if s.id in chosen):
        text = sf.path.read_text(encoding="utf-8")
        end = text.find("\n---", 3)
        head = text[:end] if text.startswith("---") and end > 0 else ""
        if len(_SET_LINE.findall(head)) != 1:
            raise ConfigError(f"{sf.path}: set: no single `set: run` line to rewrite")
        moved = _SET_LINE.sub("set: reserve", head, count=1) + text[len(head) :]
        dest = reserve / sf.path.name
        if dest.exists():
            raise RefusedError(f"{dest}: already exists; nothing was moved")
        planned.append((sf.path, dest, moved))
    reserve.mkdir(exist_ok=True)
    for source, dest, moved in planned:
        dest.write_text(moved, encoding="utf-8")
        source.unlink()
    return reserve
