"""`evalkit import skill-creator`: a skill-creator trigger set read into a rules suite.

skill-creator's description loop keeps its trigger set as a JSON list of
`{"query": …, "should_trigger": true|false}` (its review page exports exactly that, and its
runner reads nothing else of an item). Each query becomes the Task of one scenario of the
suite's run set: `should_trigger` true a positive that must fire the subject's skill, false
a negative that must not. Its id is the digest of its text (`P-`/`N-` and the first hex
digits of the Task digest `suite/task.py` takes), so the same query always gets the same
scenario and importing a set again adds only what is new.

The queries are their author's: the suite records the import (`skill-creator.json`), and
its sets are labelled open and author-written (`suite/provenance.py`). Before anything is
written, the set is refused in one line when it is malformed or when a class is too small
for `suite split-reserve` to leave enough in both the run set and the reserve for the
tests to decide. Nothing is read aloud: a refusal names an item by its number, and what
was written is named by ids and counts.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field

from evalkit.errors import ConfigError, RefusedError
from evalkit.models import Model
from evalkit.outpaths import replace_file
from evalkit.suite.catalog import SET_FOLDERS, Catalog, load_catalog
from evalkit.suite.neighbours import plugin_skills
from evalkit.suite.plugin_evals import LOCK, instrument_home
from evalkit.suite.provenance import IMPORT_RECORD
from evalkit.suite.scenarios import check_premise, parse_scenario
from evalkit.suite.task import read_task, text_digest

KIND = "skill-trigger"
ID_DIGITS = 10
REASON = "skill-fired"
_SECTION = re.compile(r"^##[ \t]+\S")
"""A line the scenario parser reads as a section after the Task (`suite/scenarios.py`)."""


@dataclass(frozen=True)
class Query:
    """One item of a trigger set: its number in the file (from 1), its text, its class."""

    number: int
    text: str
    should_trigger: bool

    @property
    def digest(self) -> str:
        return text_digest(self.text)

    @property
    def id(self) -> str:
        return ("P-" if self.should_trigger else "N-") + self.digest[:ID_DIGITS]


@dataclass(frozen=True)
class SizeRule:
    """What each set needs a polarity for the tests to decide, and the settings that say so."""

    needed: int
    said: str


class Imported(Model):
    """What an import did: ids and counts, never a query."""

    added: list[str] = Field(description="ids of the scenarios written into the run set")
    present: list[str] = Field(description="ids the suite already held: left as they are")
    positives: int
    negatives: int
    skill: str
    record: str = Field(description="the suite's record of its imports")


# --------------------------------------------------------------------------- reading the set


def read_trigger_set(path: Path) -> list[Query]:
    """The set's queries, or one line naming the first thing wrong with it (by item number)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"{path}: not a JSON file ({_short(exc)})") from None
    if isinstance(data, dict) and "evals" in data:
        data = data["evals"]
    if not isinstance(data, list) or not data:
        raise ConfigError(
            f"{path}: expected skill-creator's trigger set, a JSON list of "
            '{"query": ..., "should_trigger": true|false} items'
        )
    queries = [_query(path, number, item) for number, item in enumerate(data, 1)]
    _refuse_duplicates(path, queries)
    return queries


def _short(exc: Exception) -> str:
    return str(exc).splitlines()[0][:120]


def _query(path: Path, number: int, item: Any) -> Query:
    where = f"{path}: item {number}"
    if not isinstance(item, dict):
        raise ConfigError(f"{where}: expected an object with query and should_trigger")
    if "query" not in item and "prompt" in item:
        raise ConfigError(
            f"{where}: has a prompt but no query: this is skill-creator's evals.json of output "
            "checks, not a trigger set; export the trigger set (query, should_trigger)"
        )
    query, trigger = item.get("query"), item.get("should_trigger")
    if not isinstance(query, str):
        raise ConfigError(f"{where}: query: expected a string")
    if not isinstance(trigger, bool):
        raise ConfigError(f"{where}: should_trigger: expected true or false")
    text = query.strip()
    if not text:
        raise ConfigError(f"{where}: query: empty")
    if "\x00" in text:
        raise ConfigError(f"{where}: query: holds a NUL character")
    if any(_SECTION.match(line) for line in text.splitlines()):
        raise ConfigError(
            f"{where}: query: a line starts with '## ', which would end the scenario's Task "
            "section; reword that line"
        )
    return Query(number, text, trigger)


def _refuse_duplicates(path: Path, queries: list[Query]) -> None:
    seen: dict[str, Query] = {}
    for query in queries:
        first = seen.setdefault(query.digest, query)
        if first is not query:
            same = first.should_trigger == query.should_trigger
            clash = "" if same else ", with the other should_trigger"
            raise ConfigError(
                f"{path}: item {query.number}: query: the same as item {first.number}{clash} "
                "(whitespace aside); each query is one scenario"
            )


# --------------------------------------------------------------------------- the size rule


def smallest_class(needed: int, share: float) -> int:
    """The fewest queries a class needs so that any split at `share` leaves `needed` in
    both the reserve and the run set: `split-reserve` moves the floor of a class's share or
    one more (`suite/split_reserve.py`'s `choose`)."""
    n = 1
    while math.floor(share * n) < needed or n - math.ceil(share * n) < needed:
        n += 1
    return n


def check_size(queries: list[Query], share: float, rule: SizeRule) -> None:
    """Refuse, in one line, a class too small for the split and the tests."""
    if not 0 < share < 1:
        raise ConfigError(f"--share {share}: must be between 0 and 1 (exclusive)")
    smallest = smallest_class(rule.needed, share)
    counts = {True: 0, False: 0}
    for query in queries:
        counts[query.should_trigger] += 1
    small = [f"{n} with should_trigger {str(t).lower()}" for t, n in counts.items() if n < smallest]
    if small:
        raise RefusedError(
            f"the set holds {' and '.join(small)}; the run set and a reserve split at "
            f"--share {share:g} each need {rule.needed} a polarity for the tests to decide "
            f"({rule.said}), so each class needs at least {smallest} queries; nothing was "
            "written"
        )


# --------------------------------------------------------------------------- the suite


def chosen_skill(catalog: Catalog, given: str | None) -> str:
    """The subject's skill the queries are about: `--skill`, or the subject's only skill."""
    where = str(catalog.config_path)
    skills = [s for p in catalog.plugin_dirs() for s in plugin_skills(p, where)]
    if given is not None:
        if given not in skills:
            known = ", ".join(skills) or "none"
            raise ConfigError(f"--skill {given}: not a skill of the suite's plugins ({known})")
        return given
    if len(skills) != 1:
        known = ", ".join(skills) or "none"
        raise ConfigError(
            f"{where}: plugins: the queries need one skill to fire, and the plugins hold "
            f"{len(skills)} ({known}); name it with --skill PLUGIN:SKILL"
        )
    return skills[0]


def premise_marker(root: Path, fixture: str, marker: str | None) -> str:
    """The premise's marker: `--marker`, or the fixture file's first non-blank line."""
    target = root / fixture
    if not target.is_file() or root.resolve() not in target.resolve().parents:
        raise ConfigError(f"--fixture {fixture}: not a file of the suite (a suite-relative path)")
    if marker is not None:
        return marker
    try:
        text = target.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"--fixture {fixture}: not UTF-8 text; name a --marker") from None
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        raise ConfigError(f"--fixture {fixture}: empty; name a text file of the fixtures")
    return lines[0]


def scenario_text(query: Query, skill: str, fixture: str, marker: str, source: str) -> str:
    """The scenario file of one query. Each front-matter value is JSON (which is YAML, ASCII
    with every string quoted), so no query or path can change its meaning, and each key is a
    line of its own, as `suite split-reserve` rewrites `set:`."""
    rule = {"skill": skill, "reason": REASON}
    positive = query.should_trigger
    oracle = [{"skill": skill}, {"final": "Done, as the guide says."}] if positive else []
    front = {
        "id": query.id,
        "polarity": "positive" if positive else "negative",
        "kind": KIND,
        "set": "run",
        "topic": f"a request that {'should' if positive else 'should not'} bring in {skill}",
        "premise": {"file": fixture, "marker": marker},
        "expect": {"a": rule} if positive else {"fail": rule},
        "calibration": {"oracle": oracle or [{"final": "Done."}]},
    }
    head = "\n".join(f"{key}: {json.dumps(value)}" for key, value in front.items())
    prose = (
        f"Item {query.number} of a skill-creator trigger set ({source}): written by the "
        "skill's author, so open, not held out."
    )
    return f"---\n{head}\n---\n\n{prose}\n\n## Task\n\n{query.text}\n"


def check_suite(catalog: Catalog) -> None:
    """A suite the import may write into: one of scenario files, not frozen, without a
    ladder (a query has no level)."""
    root = catalog.root
    if instrument_home(root) is not None:
        raise RefusedError(
            f"{root}: translated from a plugin's eval folder; add cases there, not scenarios"
        )
    if (root / LOCK).is_file():
        raise RefusedError(
            f"{root / LOCK}: the suite is frozen; an added scenario changes the instrument: "
            "remove the lock, import, split, then `evalkit suite freeze` again"
        )
    if catalog.config.ladder:
        raise ConfigError(
            f"{catalog.config_path}: ladder: a query sits on no level; set `ladder: false` "
            f"(each imported scenario names its kind, {KIND})"
        )


def sorted_out(catalog: Catalog, queries: list[Query]) -> tuple[list[Query], list[str]]:
    """The queries still to write, and the ids the suite holds already (in either set). A
    query the suite holds in the other class is refused: flipping it is its author's edit."""
    held = {sf.id for sf in catalog.scenarios("all")}
    new: list[Query] = []
    present: list[str] = []
    for query in queries:
        other = ("N-" if query.should_trigger else "P-") + query.digest[:ID_DIGITS]
        if other in held:
            raise RefusedError(
                f"item {query.number}: the suite holds this query as {other}, the other class; "
                "remove that scenario first if should_trigger changed; nothing was written"
            )
        if query.id in held:
            present.append(query.id)
        else:
            new.append(query)
    return new, present


def checked_texts(root: Path, texts: dict[Query, str]) -> None:
    """Each scenario read back as the loader reads it, before any is written: it parses,
    its premise holds, and its Task is the query, whole."""
    with tempfile.TemporaryDirectory(prefix="skill-creator-") as scratch:
        for query, text in texts.items():
            path = Path(scratch) / f"{query.id}.md"
            path.write_text(text, encoding="utf-8")
            try:
                sf = parse_scenario(path)
                check_premise(sf, root)
            except ConfigError as exc:
                said = str(exc).removeprefix(f"{path}: ")
                raise ConfigError(f"item {query.number}: {said}") from None
            if read_task(sf) != query.text:
                raise ConfigError(f"item {query.number}: query: its Task would not read back whole")


def import_trigger_set(
    suite_arg: str | Path | None, path: Path, fixture: str, options: ImportOptions
) -> Imported:
    """Write one scenario per new query into the run set, and record the import; every
    refusal comes before the first file is written."""
    catalog = load_catalog(suite_arg)
    check_suite(catalog)
    queries = read_trigger_set(path)
    check_size(queries, options.share, options.rule)
    skill = chosen_skill(catalog, options.skill)
    marker = premise_marker(catalog.root, fixture, options.marker)
    new, present = sorted_out(catalog, queries)
    texts = {q: scenario_text(q, skill, fixture, marker, path.name) for q in new}
    checked_texts(catalog.root, texts)
    folder = catalog.root / SET_FOLDERS["run"]
    for query in new:
        if (folder / f"{query.id}.md").exists():
            raise RefusedError(f"{folder / query.id}.md: already exists; nothing was written")
    entries = _entries(catalog.root / IMPORT_RECORD)
    folder.mkdir(exist_ok=True)
    for query, text in texts.items():
        (folder / f"{query.id}.md").write_text(text, encoding="utf-8")
    record = _record(catalog.root, entries, path, skill, queries)
    return Imported(
        added=[q.id for q in new], present=present, skill=skill, record=str(record),
        positives=sum(q.should_trigger for q in queries),
        negatives=sum(not q.should_trigger for q in queries),
    )  # fmt: skip


@dataclass(frozen=True)
class ImportOptions:
    """What the command line chose: the size rule, the share the reserve will take, the
    skill and the premise's marker (each defaulted from the suite when None)."""

    rule: SizeRule
    share: float = 0.3
    skill: str | None = None
    marker: str | None = None


def _entries(record: Path) -> list[dict[str, Any]]:
    """The imports the suite's record holds already (none without a record)."""
    if not record.is_file():
        return []
    try:
        entries = json.loads(record.read_text(encoding="utf-8"))["imports"]
        return [dict(e) for e in entries]
    except (ValueError, KeyError, TypeError):
        raise ConfigError(f"{record}: not the record evalkit writes; move it aside") from None


def _record(
    root: Path, entries: list[dict[str, Any]], path: Path, skill: str, queries: list[Query]
) -> Path:
    """The suite's record of its imports, one entry per set imported (by its digest)."""
    record = root / IMPORT_RECORD
    digest = "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
    entries = [e for e in entries if e.get("sha256") != digest]
    entries.append({
        "file": path.name, "sha256": digest, "skill": skill,
        "ids": [q.id for q in queries],
    })  # fmt: skip
    data = json.dumps({"source": "skill-creator", "imports": entries}, indent=1) + "\n"
    replace_file(record, data.encode("utf-8"))
    return record
