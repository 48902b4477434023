"""Content checks for the default suite: scenarios, fixtures, plugin, rubric and config.

The suite's Task blocks are held out. No assertion in this file prints Task text:
failures name the file and the field, and say what is wrong in general terms.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalkit.models import Scenario, SuiteConfig
from tests.conftest import REPO

ROOT = REPO
SUITE_CONFIG = ROOT / "evalkit.yaml"
RUBRIC = ROOT / "judge-rubric.md"
FIXTURES = ROOT / "fixtures"
PROJECT = FIXTURES / "project"
VAULT = FIXTURES / "vault"
PLUGIN = FIXTURES / "plugins" / "os-vault"
SCENARIO_DIRS = {"run": ROOT / "scenarios", "reserve": ROOT / "scenarios-reserve"}

EXPECTED_IDS = {
    "run": {
        "P1-L1-reporting",
        "N1-L1-reporting",
        "P2-L2-reporting",
        "N2-L2-reporting",
        "P3-L3-reporting",
        "N3-L3-reporting",
    },
    "reserve": {
        "P4-L1-delivery",
        "N4-L1-delivery",
        "P5-L2-delivery",
        "N5-L2-delivery",
        "P6-L3-delivery",
        "N6-L3-delivery",
    },
}
ID_SHAPE = re.compile(r"^(?P<pol>[PN])(?P<num>[1-6])-(?P<level>L[123])-(?P<topic>[a-z]+)$")
SECTIONS = ["Premise", "Why its pair is equally tempting", "Conformance dry-run", "Task"]

# The note contract from fixtures/vault/vault-conventions.md.
SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*\.md$")
DATE_PREFIX = re.compile(r"^\d{4}-")
SCOPES = {"global", "project", "client"}
CHECKER_EXCLUDED = ("journal/", "graphify-out/")

# A run of this many words shared between a Task block and any other text is reuse.
NGRAM = 6

L1_CUE = re.compile(r"worth remembering|make a note|note (it|this|that) down", re.I)
NOTE_WORDS = re.compile(
    r"\bvault\b|\bnotes?\b|\bremember|\bmemory\b|second ?brain|knowledge base|write (it|this) down",
    re.I,
)
VAULT_WORDS = re.compile(r"\bvault\b|os-vault|second ?brain|knowledge base", re.I)
OFFER_WORDS = re.compile(
    r"\bvault\b|os-vault|second ?brain|knowledge base|your notes|\bsave (this|it|that)\b"
    r"|\b(want|shall|should) (me|i) (to )?(save|record|write|store|keep)\b",
    re.I,
)
WRITTEN_WORDS = re.compile(r"\b(wrote|written|saved|recorded|added)\b", re.I)
TRIGGER_WORDING = re.compile(
    r"when(ever)? you (learn|discover|find|notice|come across|figure out|solve)"
    r"|\bproactiv|worth (remembering|saving|keeping|noting)|\bdurable\b|\bevergreen\b"
    r"|\bunprompted\b|without being asked|\bremember",
    re.I,
)
CLAUDE_MD_BANNED = re.compile(r"\b(vault|memory|notes?|remember)\b", re.I)
MACHINE_PATH = re.compile(r"(?<![\w.~$}])/(work|root|home|Users|tmp|var/folders)/[\w.-]+")
FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---[ \t]*(?:\n|\Z)", re.S)


# --------------------------------------------------------------------------- loading


@dataclass(frozen=True)
class ScenarioDoc:
    path: Path
    folder_set: str
    meta: dict[str, Any]
    sections: list[tuple[str, str]]

    @property
    def rel(self) -> str:
        return self.path.relative_to(ROOT).as_posix()

    @property
    def id(self) -> str:
        return str(self.meta.get("id", ""))

    @property
    def task(self) -> str:
        return self.sections[-1][1] if self.sections and self.sections[-1][0] == "Task" else ""

    @property
    def calibration(self) -> dict[str, Any]:
        value = self.meta.get("calibration") or {}
        return value if isinstance(value, dict) else {}


def split_front_matter(text: str) -> tuple[Any, str] | None:
    match = FRONT_MATTER.match(text)
    if match is None:
        return None
    return yaml.safe_load(match.group(1)), text[match.end() :]


def split_sections(body: str) -> list[tuple[str, str]]:
    sections: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        if line.startswith("## "):
            sections.append((line[3:].strip(), []))
        elif sections:
            sections[-1][1].append(line)
    return [(title, "\n".join(lines).strip()) for title, lines in sections]


@cache
def scenario_docs() -> tuple[ScenarioDoc, ...]:
    docs = []
    for folder_set, folder in SCENARIO_DIRS.items():
        for path in sorted(folder.glob("*.md")):
            parts = split_front_matter(path.read_text(encoding="utf-8"))
            assert parts is not None, f"{path.relative_to(ROOT)}: no YAML front matter block"
            meta, body = parts
            assert isinstance(meta, dict), (
                f"{path.relative_to(ROOT)}: front matter is not a mapping"
            )
            docs.append(ScenarioDoc(path, folder_set, meta, split_sections(body)))
    return tuple(docs)


def positives() -> list[ScenarioDoc]:
    return [d for d in scenario_docs() if d.meta.get("polarity") == "positive"]


def negatives() -> list[ScenarioDoc]:
    return [d for d in scenario_docs() if d.meta.get("polarity") == "negative"]


def by_id(docs: list[ScenarioDoc]) -> list[Any]:
    return [pytest.param(d, id=d.path.stem) for d in docs]


ALL = by_id(list(scenario_docs()))
POSITIVES = by_id(positives())
NEGATIVES = by_id(negatives())


def note_text(note: dict[str, Any]) -> str:
    """What the checker's topic patterns run over: the vault path, a newline, the text."""
    return f"{note['path']}\n{note['content']}"


def patterns_of(doc: ScenarioDoc) -> list[str]:
    return list((doc.meta.get("expect") or {}).get("topic_patterns") or [])


# --------------------------------------------------------------------------- the note contract


def contract_problems(rel_path: str, content: str) -> list[str]:
    """Why a vault note breaks the contract; empty when it conforms."""
    problems = []
    parts = rel_path.split("/")
    if rel_path.startswith("/") or ".." in parts:
        problems.append("path is not vault-relative")
    if rel_path.startswith(CHECKER_EXCLUDED):
        problems.append("path is in a folder the checker ignores")
    name = parts[-1]
    if not SLUG.match(name):
        problems.append(f"file name {name!r} is not a lower-case kebab slug ending in .md")
    if DATE_PREFIX.match(name):
        problems.append(f"file name {name!r} starts with a date")
    try:
        parsed = split_front_matter(content)
    except yaml.YAMLError:
        return problems + ["front matter is not valid YAML"]
    if parsed is None:
        return problems + ["no YAML front matter block"]
    front = parsed[0]
    if not isinstance(front, dict):
        return problems + ["front matter is not a mapping"]
    if not str(front.get("title") or "").strip():
        problems.append("title is missing or empty")
    if not str(front.get("summary") or "").strip():
        problems.append("summary is missing or empty")
    if front.get("scope") not in SCOPES:
        problems.append(f"scope {front.get('scope')!r} is not one of {sorted(SCOPES)}")
    note_type = front.get("type")
    tags = front.get("tags")
    if not isinstance(note_type, str) or not note_type.strip():
        problems.append("type is missing")
    elif not isinstance(tags, list) or f"type/{note_type}" not in tags:
        problems.append(f"tags lack type/{note_type}")
    return problems


def recommended_missing(content: str) -> list[str]:
    parsed = split_front_matter(content)
    front = parsed[0] if parsed and isinstance(parsed[0], dict) else {}
    missing = [key for key in ("last_updated", "date") if not front.get(key)]
    tags = front.get("tags") if isinstance(front.get("tags"), list) else []
    if not any(isinstance(t, str) and "/" in t and not t.startswith("type/") for t in tags):
        missing.append("a facet tag")
    return missing


# --------------------------------------------------------------------------- suite config


def test_suite_config_validates_and_points_at_real_files() -> None:
    config = SuiteConfig.model_validate(yaml.safe_load(SUITE_CONFIG.read_text(encoding="utf-8")))
    assert (ROOT / config.fixtures.project).is_dir(), (
        "evalkit.yaml: fixtures.project is not a folder"
    )
    for name, folder in config.fixtures.extra.items():
        assert (ROOT / folder).is_dir(), f"evalkit.yaml: fixtures.extra.{name} is not a folder"
    for plugin in config.plugins:
        assert (ROOT / plugin / ".claude-plugin" / "plugin.json").is_file(), (
            f"evalkit.yaml: plugins entry {plugin} has no .claude-plugin/plugin.json"
        )
    assert (ROOT / config.judge.rubric).is_file(), "evalkit.yaml: judge.rubric does not exist"
    assert config.checker.options.get("vault") in config.fixtures.extra, (
        "evalkit.yaml: checker.options.vault does not name an extra fixture"
    )
    assert config.environment.get("OS_VAULT_PATH") == "{vault}", (
        "evalkit.yaml: environment.OS_VAULT_PATH must point at the sandbox vault"
    )
    assert config.environment.get("OS_VAULT_SKIP_REBUILD") == "1", (
        "evalkit.yaml: environment.OS_VAULT_SKIP_REBUILD must be 1"
    )
    assert any(
        h.event == "SessionStart" and "os-vault" in h.output_contains for h in config.required_hooks
    ), "evalkit.yaml: required_hooks lacks SessionStart"


def test_judge_rubric_asks_for_yes_or_no_first() -> None:
    text = RUBRIC.read_text(encoding="utf-8")
    for word in ("YES", "NO", "first word"):
        assert word in text, f"judge-rubric.md: does not mention {word!r}"
    assert text.rstrip().endswith("follows."), (
        "judge-rubric.md: should end by introducing the message appended after it"
    )


# --------------------------------------------------------------------------- scenario files


def test_every_scenario_file_is_there_and_ids_are_unique() -> None:
    for folder_set, folder in SCENARIO_DIRS.items():
        found = {p.stem for p in folder.glob("*.md")}
        assert found == EXPECTED_IDS[folder_set], (
            f"{folder.name}/: expected {sorted(EXPECTED_IDS[folder_set])}, found {sorted(found)}"
        )
    ids = [d.id for d in scenario_docs()]
    assert len(ids) == len(set(ids)), "scenario ids are not unique"


@pytest.mark.parametrize("doc", ALL)
def test_front_matter_is_a_valid_scenario(doc: ScenarioDoc) -> None:
    scenario = Scenario.model_validate(doc.meta)
    assert scenario.id == doc.path.stem, f"{doc.rel}: id does not match the file name"
    assert scenario.set == doc.folder_set, f"{doc.rel}: set is not {doc.folder_set!r}"
    shape = ID_SHAPE.match(scenario.id)
    assert shape, f"{doc.rel}: id is not shaped like P1-L1-topic"
    polarity = "positive" if shape["pol"] == "P" else "negative"
    assert scenario.polarity == polarity, f"{doc.rel}: polarity disagrees with the id"
    assert scenario.level == shape["level"], f"{doc.rel}: level disagrees with the id"
    number = int(shape["num"])
    assert f"L{(number - 1) % 3 + 1}" == scenario.level, f"{doc.rel}: level is off the ladder"
    assert (number <= 3) == (scenario.set == "run"), f"{doc.rel}: number and set disagree"


@pytest.mark.parametrize("doc", ALL)
def test_sections_are_in_order_with_task_last(doc: ScenarioDoc) -> None:
    titles = [title for title, _ in doc.sections]
    assert titles == SECTIONS, f"{doc.rel}: sections are {titles}, expected {SECTIONS}"
    for title, text in doc.sections:
        assert text.strip(), f"{doc.rel}: section {title!r} is empty"


@pytest.mark.parametrize("doc", ALL)
def test_premise_marker_occurs_in_its_file(doc: ScenarioDoc) -> None:
    premise = Scenario.model_validate(doc.meta).premise
    path = ROOT / premise.file
    assert premise.file.startswith("fixtures/") and ".." not in Path(premise.file).parts, (
        f"{doc.rel}: premise.file is not a suite-relative fixture path"
    )
    assert path.is_file(), f"{doc.rel}: premise.file does not exist"
    assert premise.marker in path.read_text(encoding="utf-8"), (
        f"{doc.rel}: premise.marker does not occur in premise.file"
    )


def test_already_recorded_negatives_point_at_their_adrs() -> None:
    targets = {"N3-L3-reporting": "docs/adr/0002-", "N6-L3-delivery": "docs/adr/0003-"}
    docs = {d.id: d for d in scenario_docs()}
    for scenario_id, prefix in targets.items():
        file = docs[scenario_id].meta["premise"]["file"]
        assert f"fixtures/project/{prefix}" in file, f"{docs[scenario_id].rel}: premise.file"


def held_out(ok: bool, message: str) -> None:
    """Fail with only ``message``: no assertion introspection, no traceback, no locals,
    so nothing derived from a Task block reaches the output."""
    if not ok:
        pytest.fail(message, pytrace=False)


@pytest.mark.parametrize("doc", ALL)
def test_task_follows_the_ladder(doc: ScenarioDoc) -> None:
    task = doc.task
    held_out(VAULT_WORDS.search(task) is None, f"{doc.rel}: Task mentions the vault")
    if doc.meta["level"] == "L1":
        held_out(
            L1_CUE.search(task) is not None,
            f"{doc.rel}: an L1 Task needs an explicit keep-this cue",
        )
    else:
        held_out(
            NOTE_WORDS.search(task) is None,
            f"{doc.rel}: an {doc.meta['level']} Task must not mention notes or remembering",
        )


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _ngrams(text: str) -> set[tuple[str, ...]]:
    words = _words(text)
    return {tuple(words[i : i + NGRAM]) for i in range(len(words) - NGRAM + 1)}


def _own_fields(doc: ScenarioDoc) -> dict[str, str]:
    """Every part of a scenario file except its Task block, by field name."""
    fields = {"front matter": yaml.safe_dump(doc.meta, sort_keys=False)}
    fields["topic"] = str(doc.meta.get("topic", ""))
    cal = doc.calibration
    fields["calibration.reply"] = str(cal.get("reply", ""))
    for key in ("note", "tempting_note"):
        if isinstance(cal.get(key), dict):
            fields[f"calibration.{key}.content"] = str(cal[key].get("content", ""))
    for i, item in enumerate(cal.get("edits") or []):
        fields[f"calibration.edits[{i}].content"] = str(item.get("content", ""))
    for title, text in doc.sections[:-1]:
        fields[f"section {title!r}"] = text
    return fields


def _suite_text_files() -> list[Path]:
    roots = [FIXTURES, *SCENARIO_DIRS.values()]
    files = [SUITE_CONFIG, RUBRIC]
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_file() and path.suffix not in {".png", ".pdf"}:
                files.append(path)
    return files


@pytest.mark.parametrize("doc", ALL)
def test_task_text_appears_nowhere_else(doc: ScenarioDoc) -> None:
    task_grams = _ngrams(doc.task)
    held_out(bool(task_grams), f"{doc.rel}: Task block is too short to check")
    for field, text in _own_fields(doc).items():
        held_out(
            not task_grams & _ngrams(text),
            f"{doc.rel}: {field} repeats a {NGRAM}-word run from the Task block",
        )
    for path in _suite_text_files():
        if path == doc.path:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        held_out(
            not task_grams & _ngrams(text),
            f"{doc.rel}: {path.relative_to(ROOT)} repeats a {NGRAM}-word run from the Task block",
        )


@pytest.mark.parametrize("doc", ALL)
def test_topic_label_does_not_quote_the_task(doc: ScenarioDoc) -> None:
    topic = " ".join(_words(str(doc.meta["topic"])))
    held_out(
        bool(topic) and topic not in " ".join(_words(doc.task)),
        f"{doc.rel}: topic is a quotation from the Task block",
    )
    assert len(str(doc.meta["topic"])) <= 40, f"{doc.rel}: topic should be a short label"


# --------------------------------------------------------------------------- positives


@pytest.mark.parametrize("doc", POSITIVES)
def test_positive_calibration_note_conforms(doc: ScenarioDoc) -> None:
    cal = doc.calibration
    assert set(cal) == {"note", "reply"}, f"{doc.rel}: calibration keys should be note and reply"
    note = cal["note"]
    assert isinstance(note, dict) and set(note) == {"path", "content"}, (
        f"{doc.rel}: calibration.note needs exactly path and content"
    )
    problems = contract_problems(note["path"], note["content"])
    assert not problems, f"{doc.rel}: calibration.note breaks the contract: {problems}"
    missing = recommended_missing(note["content"])
    assert not missing, f"{doc.rel}: calibration.note lacks recommended {missing}"
    assert not (VAULT / note["path"]).exists(), (
        f"{doc.rel}: calibration.note.path already exists in the fixture vault"
    )


@pytest.mark.parametrize("doc", POSITIVES)
def test_positive_reply_says_the_note_was_written(doc: ScenarioDoc) -> None:
    reply = str(doc.calibration.get("reply", ""))
    name = Path(doc.calibration["note"]["path"]).name
    assert name in reply, f"{doc.rel}: calibration.reply does not name the note it wrote"
    assert WRITTEN_WORDS.search(reply), f"{doc.rel}: calibration.reply does not say it wrote it"


@pytest.mark.parametrize("doc", POSITIVES)
def test_topic_patterns_compile_and_match_their_own_note(doc: ScenarioDoc) -> None:
    patterns = patterns_of(doc)
    assert patterns, f"{doc.rel}: expect.topic_patterns is empty"
    own = note_text(doc.calibration["note"])
    for i, pattern in enumerate(patterns):
        assert isinstance(pattern, str), f"{doc.rel}: expect.topic_patterns[{i}] is not a string"
        try:
            compiled = re.compile(pattern, re.I)
        except re.error as exc:
            pytest.fail(f"{doc.rel}: expect.topic_patterns[{i}] does not compile: {exc}")
        assert compiled.search(own), (
            f"{doc.rel}: expect.topic_patterns[{i}] misses its own calibration.note"
        )


@pytest.mark.parametrize("doc", POSITIVES)
def test_topic_patterns_match_no_other_positive_note(doc: ScenarioDoc) -> None:
    for other in positives():
        if other.id == doc.id:
            continue
        text = note_text(other.calibration["note"])
        for i, pattern in enumerate(patterns_of(doc)):
            assert not re.search(pattern, text, re.I), (
                f"{doc.rel}: expect.topic_patterns[{i}] also matches {other.rel} calibration.note"
            )


# --------------------------------------------------------------------------- negatives


@pytest.mark.parametrize("doc", NEGATIVES)
def test_negative_shape(doc: ScenarioDoc) -> None:
    assert doc.meta.get("expect") == {}, f"{doc.rel}: expect should be {{}} for a negative"
    cal = doc.calibration
    assert set(cal) == {"edits", "reply", "tempting_note"}, (
        f"{doc.rel}: calibration keys should be edits, reply and tempting_note"
    )
    assert isinstance(cal["edits"], list), f"{doc.rel}: calibration.edits is not a list"


@pytest.mark.parametrize("doc", NEGATIVES)
def test_negative_edits_are_project_files(doc: ScenarioDoc) -> None:
    vault_prefix = SuiteConfig.model_validate(
        yaml.safe_load(SUITE_CONFIG.read_text(encoding="utf-8"))
    ).fixtures.extra["vault"]
    for i, item in enumerate(doc.calibration["edits"]):
        field = f"calibration.edits[{i}]"
        assert isinstance(item, dict) and set(item) == {"path", "content"}, (
            f"{doc.rel}: {field} needs exactly path and content"
        )
        path = str(item["path"])
        parts = Path(path).parts
        assert path and not path.startswith(("/", "~")) and ".." not in parts, (
            f"{doc.rel}: {field}.path is not project-relative"
        )
        assert not path.startswith(("vault/", vault_prefix)), (
            f"{doc.rel}: {field}.path is in the vault"
        )
        assert str(item["content"]).strip(), f"{doc.rel}: {field}.content is empty"
        if path.endswith((".yml", ".yaml")):
            assert isinstance(yaml.safe_load(item["content"]), dict), (
                f"{doc.rel}: {field}.content is not a YAML mapping"
            )


@pytest.mark.parametrize("doc", NEGATIVES)
def test_negative_reply_offers_nothing_for_the_vault(doc: ScenarioDoc) -> None:
    reply = str(doc.calibration.get("reply", ""))
    assert reply.strip(), f"{doc.rel}: calibration.reply is empty"
    assert not OFFER_WORDS.search(reply), f"{doc.rel}: calibration.reply offers a vault note"


@pytest.mark.parametrize("doc", NEGATIVES)
def test_tempting_note_conforms_and_is_off_topic(doc: ScenarioDoc) -> None:
    note = doc.calibration["tempting_note"]
    assert isinstance(note, dict) and set(note) == {"path", "content"}, (
        f"{doc.rel}: calibration.tempting_note needs exactly path and content"
    )
    problems = contract_problems(note["path"], note["content"])
    assert not problems, f"{doc.rel}: calibration.tempting_note breaks the contract: {problems}"
    assert not (VAULT / note["path"]).exists(), (
        f"{doc.rel}: calibration.tempting_note.path already exists in the fixture vault"
    )
    text = note_text(note)
    for positive in positives():
        for i, pattern in enumerate(patterns_of(positive)):
            assert not re.search(pattern, text, re.I), (
                f"{doc.rel}: calibration.tempting_note matches {positive.rel} "
                f"expect.topic_patterns[{i}]"
            )


# --------------------------------------------------------------------------- vault fixture


def _vault_notes() -> list[Path]:
    return [
        p
        for p in sorted(VAULT.rglob("*.md"))
        if not p.relative_to(VAULT).as_posix().startswith(CHECKER_EXCLUDED)
    ]


def test_vault_has_conventions_and_four_seeded_notes() -> None:
    names = [p.relative_to(VAULT).as_posix() for p in _vault_notes()]
    assert "vault-conventions.md" in names, "fixtures/vault: vault-conventions.md is missing"
    assert len(names) == 5, f"fixtures/vault: expected the conventions plus 4 notes, got {names}"
    journal = VAULT / "journal"
    assert journal.is_dir(), "fixtures/vault/journal: missing"
    assert [p.name for p in journal.iterdir()] == [".gitkeep"], (
        "fixtures/vault/journal: should hold only .gitkeep"
    )


@pytest.mark.parametrize("path", _vault_notes(), ids=lambda p: p.relative_to(VAULT).as_posix())
def test_vault_note_conforms(path: Path) -> None:
    rel = path.relative_to(VAULT).as_posix()
    problems = contract_problems(rel, path.read_text(encoding="utf-8"))
    assert not problems, f"fixtures/vault/{rel}: breaks the contract: {problems}"
    missing = recommended_missing(path.read_text(encoding="utf-8"))
    assert not missing, f"fixtures/vault/{rel}: lacks recommended {missing}"


def test_conventions_state_the_contract() -> None:
    text = (VAULT / "vault-conventions.md").read_text(encoding="utf-8")
    for needle in (
        "summary",
        "scope",
        "global",
        "project",
        "client",
        "type/<type>",
        "last_updated",
        "date prefix",
    ):
        assert needle in text, f"fixtures/vault/vault-conventions.md: does not mention {needle!r}"


# --------------------------------------------------------------------------- project fixture


def _ruby_sources() -> list[tuple[str, str]]:
    sources = [
        (p.relative_to(ROOT).as_posix(), p.read_text(encoding="utf-8"))
        for p in sorted(PROJECT.rglob("*.rb"))
    ]
    for extra in ("bin/reportgen", "Rakefile"):
        path = PROJECT / extra
        sources.append((path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8")))
    for doc in negatives():
        for i, item in enumerate(doc.calibration.get("edits") or []):
            if str(item.get("path", "")).endswith(".rb"):
                sources.append((f"{doc.rel} calibration.edits[{i}]", str(item["content"])))
    return sources


def test_every_ruby_file_passes_ruby_c(tmp_path: Path) -> None:
    ruby = shutil.which("ruby")
    if ruby is None:
        if os.environ.get("CI") == "true":
            pytest.fail("ruby is not installed, and CI must syntax-check the fixture project")
        pytest.skip("ruby is not installed: the fixture project's Ruby syntax was not checked")
    failures = []
    for i, (label, source) in enumerate(_ruby_sources()):
        file = tmp_path / f"source_{i}.rb"
        file.write_text(source, encoding="utf-8")
        result = subprocess.run(
            [ruby, "-c", str(file)], capture_output=True, text=True, timeout=60, check=False
        )
        if result.returncode != 0:
            failures.append(f"{label}: {result.stderr.strip().replace(str(file), 'line')}")
    assert not failures, "ruby -c failed:\n" + "\n".join(failures)


def test_project_has_the_expected_shape() -> None:
    for rel in (
        "bin/reportgen",
        "README.md",
        "CLAUDE.md",
        "config/schema.yml",
        "lib/reportgen.rb",
        "docs/adr/README.md",
    ):
        assert (PROJECT / rel).is_file(), f"fixtures/project/{rel}: missing"
    assert os.access(PROJECT / "bin" / "reportgen", os.X_OK), (
        "fixtures/project/bin/reportgen: not executable"
    )
    assert not (PROJECT / "Gemfile").exists(), "fixtures/project/Gemfile: the project uses no gems"
    for path in sorted((PROJECT / "config").rglob("*.yml")):
        assert isinstance(yaml.safe_load(path.read_text(encoding="utf-8")), dict), (
            f"{path.relative_to(ROOT)}: not a YAML mapping"
        )


def test_claude_md_is_plain() -> None:
    text = (PROJECT / "CLAUDE.md").read_text(encoding="utf-8")
    match = CLAUDE_MD_BANNED.search(text)
    assert match is None, f"fixtures/project/CLAUDE.md: contains the word {match.group(0)!r}"


def test_adrs_share_one_format_and_are_indexed() -> None:
    adr_dir = PROJECT / "docs" / "adr"
    records = sorted(adr_dir.glob("[0-9][0-9][0-9][0-9]-*.md"))
    assert [p.name[:4] for p in records] == ["0001", "0002", "0003"], (
        "fixtures/project/docs/adr: expected ADRs 0001 to 0003"
    )
    index = (adr_dir / "README.md").read_text(encoding="utf-8")
    titles = {}
    for path in records:
        rel = path.relative_to(ROOT)
        parsed = split_front_matter(path.read_text(encoding="utf-8"))
        assert parsed and isinstance(parsed[0], dict), f"{rel}: no front matter mapping"
        front = parsed[0]
        assert set(front) == {"number", "title", "status", "date"}, (
            f"{rel}: front matter keys should be number, title, status, date"
        )
        assert str(front["number"]) == path.name[:4], f"{rel}: number disagrees with the file name"
        assert front["status"] in {"Proposed", "Accepted", "Superseded", "Deprecated"}, (
            f"{rel}: status"
        )
        assert path.name in index, (
            f"{adr_dir.relative_to(ROOT)}/README.md: does not link {path.name}"
        )
        titles[path.name[:4]] = str(front["title"])
    assert "UTC" in titles["0002"], "docs/adr/0002: title should be about storing UTC"
    assert "SFTP" in titles["0003"], "docs/adr/0003: title should be about SFTP delivery"


# --------------------------------------------------------------------------- plugin fixture


def test_plugin_manifest_and_skill() -> None:
    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))
    assert manifest.get("name") == "os-vault", "plugin.json: name should be os-vault"
    for key in ("version", "description"):
        assert manifest.get(key), f"plugin.json: {key} is missing"
    parsed = split_front_matter((PLUGIN / "skills" / "write" / "SKILL.md").read_text("utf-8"))
    assert parsed and isinstance(parsed[0], dict), "skills/write/SKILL.md: no front matter"
    front, body = parsed
    assert front.get("name") == "write", "skills/write/SKILL.md: name should be write"
    assert str(front.get("description") or "").strip(), "skills/write/SKILL.md: description"
    for needle in ("$OS_VAULT_PATH", "summary", "scope", "type/", "last_updated"):
        assert needle in body, f"skills/write/SKILL.md: body does not mention {needle!r}"


def test_plugin_hooks_are_registered_and_executable() -> None:
    hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text(encoding="utf-8"))["hooks"]
    for event, script in (("SessionStart", "session-start.sh"), ("SessionEnd", "session-end.sh")):
        commands = [h["command"] for group in hooks.get(event, []) for h in group["hooks"]]
        expected = f'"${{CLAUDE_PLUGIN_ROOT}}/hooks/{script}"'
        assert expected in commands, f"hooks/hooks.json: {event} does not run {expected}"
        assert os.access(PLUGIN / "hooks" / script, os.X_OK), f"hooks/{script}: not executable"


def test_plugin_has_no_when_to_write_wording() -> None:
    for path in sorted(PLUGIN.rglob("*")):
        if path.is_file():
            match = TRIGGER_WORDING.search(path.read_text(encoding="utf-8"))
            assert match is None, (
                f"{path.relative_to(ROOT)}: trigger wording {match.group(0)!r} "
                "(the baseline has none)"
            )


def _run_hook(script: str, env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess:
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed: the plugin hooks were not run")
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    return subprocess.run(
        [str(PLUGIN / "hooks" / script)],
        input=stdin,
        capture_output=True,
        text=True,
        env={**base, **env},
        timeout=30,
        check=False,
    )


def test_session_start_announces_the_vault(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    quiet = _run_hook(
        "session-start.sh", {"OS_VAULT_PATH": str(vault), "OS_VAULT_SKIP_REBUILD": "1"}
    )
    assert quiet.returncode == 0, "hooks/session-start.sh: non-zero exit"
    for needle in ("os-vault", "os-vault:write", "$OS_VAULT_PATH", str(vault)):
        assert needle in quiet.stdout, f"hooks/session-start.sh: output lacks {needle!r}"
    assert "rebuild" not in quiet.stdout, "hooks/session-start.sh: rebuild despite SKIP_REBUILD=1"
    loud = _run_hook("session-start.sh", {"OS_VAULT_PATH": str(vault)})
    assert "rebuild" in loud.stdout, "hooks/session-start.sh: no rebuild line without SKIP_REBUILD"
    assert list(vault.iterdir()) == [], "hooks/session-start.sh: wrote into the vault"


def test_session_end_appends_one_journal_line(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    payload = json.dumps(
        {
            "session_id": "s-1",
            "cwd": str(tmp_path / "project"),
            "hook_event_name": "SessionEnd",
            "reason": "other",
        }
    )
    result = _run_hook("session-end.sh", {"OS_VAULT_PATH": str(vault)}, payload)
    assert result.returncode == 0, "hooks/session-end.sh: non-zero exit"
    written = [p for p in vault.rglob("*") if p.is_file()]
    assert len(written) == 1 and written[0].parent == vault / "journal", (
        "hooks/session-end.sh: should write exactly one journal file"
    )
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}\.md", written[0].name), (
        "hooks/session-end.sh: journal file is not named <YYYY-MM-DD>.md"
    )
    lines = written[0].read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 and "s-1" in lines[0], "hooks/session-end.sh: expected one line"


def test_session_end_without_a_vault_writes_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    for env in ({"HOME": str(home)}, {"HOME": str(home), "OS_VAULT_PATH": "relative/vault"}):
        result = _run_hook("session-end.sh", env, "{}")
        assert result.returncode == 0, "hooks/session-end.sh: non-zero exit without a vault"
        assert list(home.iterdir()) == [], "hooks/session-end.sh: wrote into the home directory"


# --------------------------------------------------------------------------- whole suite


def test_no_machine_paths_in_suite_files() -> None:
    for path in _suite_text_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        match = MACHINE_PATH.search(text)
        assert match is None, f"{path.relative_to(ROOT)}: absolute machine path {match.group(0)!r}"
