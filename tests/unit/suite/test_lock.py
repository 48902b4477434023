"""The lock: what it holds, found by location, and what editing each part costs."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from evalkit.checkers import checker_class, names
from evalkit.checkers.adr_discrimination.scoring import AdrDiscriminationChecker
from evalkit.checkers.adr_eval_b.scoring import AdrEvalBChecker
from evalkit.checkers.rules.scoring import RulesChecker
from evalkit.checkers.vault_write.scoring import VaultWriteChecker
from evalkit.errors import ConfigError
from evalkit.records.kept.evidence import folder_diff, replay_folder
from evalkit.reference.cases import self_test_cases
from evalkit.run.sandbox import build_sandbox
from evalkit.scoring.hashing import SCORING_PACKAGE, scoring_files, tree_hash
from evalkit.suite.config import Suite
from evalkit.suite.lock import contaminate, drift, freeze, lock_state, read_lock

BUILT_INS = (VaultWriteChecker, AdrDiscriminationChecker, AdrEvalBChecker, RulesChecker)
# besides the hashed set: the data contracts, the error types, and pinned libraries (re2 is
# the rules checker's pattern engine, declared in pyproject.toml like pydantic and yaml)
ALLOWED_OUTSIDE = ("evalkit.models", "evalkit.errors", "pydantic", "yaml", "re2")


def _labels(cls: type) -> set[str]:
    return set(scoring_files(cls))


# --------------------------------------------------------------------------- the hashed set


@pytest.mark.parametrize("cls", BUILT_INS, ids=lambda c: c.name)
def test_the_hashed_set_is_the_scoring_package_and_the_checkers_scoring_code(cls: type) -> None:
    labels = _labels(cls)
    every_scoring_module = {
        f"scoring/{p.relative_to(SCORING_PACKAGE).as_posix()}"
        for p in SCORING_PACKAGE.rglob("*.py")
        if "__pycache__" not in p.parts
    }
    assert every_scoring_module <= labels
    # the rules that once lived elsewhere are in it by where they live now
    for module in ("decide.py", "transcript.py", "fixturefiles.py", "breaches.py", "validity.py",
                   "judge.py", "jstext.py"):
        assert f"scoring/{module}" in labels
    assert "checker/scoring.py" in labels
    assert "checker/reference.py" not in labels


def test_the_transcript_model_carries_no_verdict_logic() -> None:
    from evalkit.models import Transcript

    assert not hasattr(Transcript, "invalid_reason")
    assert not hasattr(Transcript, "final_message")


@pytest.mark.parametrize("cls", BUILT_INS, ids=lambda c: c.name)
def test_what_the_judge_reads_and_what_scoring_sees_of_the_suite_are_hashed(cls: type) -> None:
    from evalkit.scoring.instrument import Instrument
    from evalkit.scoring.judge import build_prompt, final_message

    labels = _labels(cls)
    for thing in (final_message, build_prompt, Instrument):
        assert f"scoring/{Path(sys.modules[thing.__module__].__file__ or '').name}" in labels


def _runtime_imports(path: Path) -> list[tuple[int, str]]:
    """Every module a file imports when it runs (TYPE_CHECKING blocks aside)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _module_file(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).resolve()


@pytest.mark.parametrize("cls", BUILT_INS, ids=lambda c: c.name)
def test_scoring_code_imports_nothing_outside_the_hashed_set(cls: type) -> None:
    hashed = {p.resolve() for p in scoring_files(cls).values()}
    outside = []
    for label, path in sorted(scoring_files(cls).items()):
        if path.suffix != ".py":
            continue
        for line, module in _runtime_imports(path):
            top = module.split(".")[0]
            if top in sys.stdlib_module_names or module == "__future__":
                continue
            if any(module == a or module.startswith(a + ".") for a in ALLOWED_OUTSIDE):
                continue
            if _module_file(module) in hashed:
                continue
            outside.append(f"{label}:{line}: {module}")
    assert outside == []


# --------------------------------------------------------------------------- what the lock holds


def test_editing_evalkit_yaml_is_drift(mini_root: Path) -> None:
    freeze(Suite(mini_root))
    config = mini_root / "evalkit.yaml"
    config.write_text(
        config.read_text().replace(
            "    vault: vault\n", "    vault: vault\n    excluded: [journal/]\n"
        )
    )
    suite = Suite(mini_root)
    lock = read_lock(suite)
    assert lock is not None and drift(suite, lock) == ["config"]


def test_adding_editing_or_removing_variants_never_drifts_the_lock(mini_root: Path) -> None:
    config = mini_root / "evalkit.yaml"
    bare = config.read_text()
    freeze(Suite(mini_root))
    (mini_root / "variants" / "terse").mkdir(parents=True)
    steps = {
        "first variants block": bare + "variants:\n  baseline: {}\n",
        "a variant edited and one added": bare
        + "variants:\n  baseline: {description: own wording}\n"
        "  terse: {overlay: variants/terse}\n",
        "variants removed": bare,
    }
    for step, text in steps.items():
        config.write_text(text)
        suite = Suite(mini_root)
        lock = read_lock(suite)
        assert lock is not None
        assert drift(suite, lock) == [], step


def test_a_comment_in_evalkit_yaml_is_not_the_instrument(mini_root: Path) -> None:
    freeze(Suite(mini_root))
    config = mini_root / "evalkit.yaml"
    config.write_text("# why this suite exists\n" + config.read_text())
    suite = Suite(mini_root)
    lock = read_lock(suite)
    assert lock is not None and drift(suite, lock) == []


def test_editing_subject_is_drift_for_it_moves_the_line_round_the_instrument(
    mini_root: Path,
) -> None:
    freeze(Suite(mini_root))
    config = mini_root / "evalkit.yaml"
    config.write_text(config.read_text() + "subject: [fixtures/project/sync.py]\n")
    suite = Suite(mini_root)
    lock = read_lock(suite)
    assert lock is not None and drift(suite, lock) == ["config", "fixture:project"]


def test_a_stray_cache_or_editor_file_in_a_fixture_changes_nothing(
    mini_root: Path, tmp_path: Path
) -> None:
    freeze(Suite(mini_root))
    project = mini_root / "fixtures" / "project"
    clean = tmp_path / "clean-clone-project"
    replay_base = tmp_path / "base"
    shutil.copytree(project, clean)
    (project / "__pycache__").mkdir()
    (project / "__pycache__" / "sync.cpython-311.pyc").write_bytes(b"\x00stale")
    (project / ".sync.py.swp").write_bytes(b"swap")
    (project / "sync.py~").write_text("backup\n")
    suite = Suite(mini_root)
    lock = read_lock(suite)
    assert lock is not None and drift(suite, lock) == []
    assert tree_hash(project) == tree_hash(clean)

    sandbox = tmp_path / "sandbox"
    build_sandbox(suite, suite.resolve("P1"), sandbox)
    assert not (sandbox / "project" / "__pycache__").exists()
    assert not (sandbox / "project" / "sync.py~").exists()
    (sandbox / "project" / "sync.py").write_text("RETRIES = 4\n")
    diff = folder_diff(project, sandbox / "project")
    assert b"__pycache__" not in diff and b"swp" not in diff
    # replayed on a clean clone of the fixture (no stray files), the diff applies
    replay_folder(clean, diff, replay_base)
    assert (replay_base / "sync.py").read_text() == "RETRIES = 4\n"


def test_a_suite_without_a_lock_or_past_a_drift_is_not_frozen(mini_root: Path) -> None:
    assert lock_state(Suite(mini_root)) == "no-lock"
    freeze(Suite(mini_root))
    assert lock_state(Suite(mini_root)) == "frozen"
    (mini_root / "judge-rubric.md").write_text("Answer YES or NO, loosely.\n")
    assert lock_state(Suite(mini_root)) == "drifted"


def test_a_contamination_note_yaml_1_1_would_read_as_a_boolean_reads_back_as_written(
    mini_root: Path,
) -> None:
    freeze(Suite(mini_root))
    contaminate(Suite(mini_root), "run", "no")
    lock = read_lock(Suite(mini_root))
    assert lock is not None and lock.contaminated["run"][0].note == "no"


# --------------------------------------------------------------------------- outside checkers

SCORING = """
from typing import ClassVar
from pydantic import BaseModel
from evalkit.models import Polarity, Verdict
from evalkit.scoring.checker import Checker, CheckerOptions, CheckInput


class Expect(BaseModel):
    model_config = {"extra": "allow"}


class FakeChecker(Checker):
    name: ClassVar[str] = "fake-check"
    version: ClassVar[str] = "1"
    options_model: ClassVar[type[BaseModel]] = CheckerOptions
    expect_models: ClassVar[dict[Polarity, type[BaseModel]]] = {
        "positive": Expect, "negative": Expect
    }

    def check(self, inp: CheckInput) -> Verdict:
        return Verdict(scenario=inp.scenario.id, model=inp.model, polarity="positive",
                       axis_a="A:PASS", axis_b="B:PASS", verdict="PASS")
"""

REFERENCE = """
from typing import ClassVar
from pydantic import BaseModel
from evalkit.models import Polarity, Script
from evalkit.checkers.behaviour import CheckerReference, Expectation, Policy, PolicyPlan
from fakechk.scoring import FakeChecker


class Anything(BaseModel):
    model_config = {"extra": "allow"}


class FakeReference(CheckerReference[FakeChecker]):
    checker_type: ClassVar[type[FakeChecker]] = FakeChecker
    calibration_models: ClassVar[dict[Polarity, type[BaseModel]]] = {
        "positive": Anything, "negative": Anything
    }
    policies: ClassVar[tuple[Policy, ...]] = (Policy("oracle"),)

    def plan_policy(self, policy, scenario):
        return PolicyPlan(Script(final_text="done"), Expectation("PASS"))

    def own_self_test_cases(self, scenario):
        return []
"""


@pytest.fixture
def outside_checker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A checker installed from another distribution: a package and its dist-info."""
    site = tmp_path / "site"
    package = site / "fakechk"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "scoring.py").write_text(textwrap.dedent(SCORING))
    (package / "reference.py").write_text(textwrap.dedent(REFERENCE))
    info = site / "fakechk-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakechk\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[evalkit.checkers]\nfake-check = fakechk.scoring:FakeChecker\n"
    )
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    yield package
    for name in [m for m in sys.modules if m == "fakechk" or m.startswith("fakechk.")]:
        del sys.modules[name]


def test_an_outside_checker_is_found_through_the_entry_point_group(
    outside_checker: Path,
) -> None:
    assert "fake-check" in names()
    assert {"vault-write", "adr-discrimination", "rules"} <= set(names())
    cls = checker_class("fake-check")
    assert cls.__module__ == "fakechk.scoring"
    labels = _labels(cls)
    assert {"checker/__init__.py", "checker/scoring.py"} <= labels
    assert "checker/reference.py" not in labels


def test_an_outside_checkers_scoring_code_is_locked_and_its_reference_is_not(
    outside_checker: Path, mini_root: Path
) -> None:
    config = mini_root / "evalkit.yaml"
    config.write_text(
        config.read_text().replace(
            "  name: vault-write\n  options:\n    vault: vault\n", "  name: fake-check\n"
        )
    )
    suite = Suite(mini_root)
    assert [c.name for c in self_test_cases(suite.reference, suite.resolve("P1"))][0] == "oracle"
    freeze(suite)

    reference = outside_checker / "reference.py"
    reference.write_text(reference.read_text() + "\n# a policy tuned\n")
    suite = Suite(mini_root)
    lock = read_lock(suite)
    assert lock is not None and drift(suite, lock) == []

    scoring = outside_checker / "scoring.py"
    scoring.write_text(scoring.read_text() + "\n# a rule changed\n")
    suite = Suite(mini_root)
    assert drift(suite, lock) == ["scoring-code"]


def test_a_checker_built_on_another_hashes_its_bases_scoring_code_too() -> None:
    labels = _labels(AdrEvalBChecker)
    assert "checker/scoring.py" in labels
    assert "checker-base/adr_discrimination/scoring.py" in labels
    assert "checker-base/adr_discrimination/reference.py" not in labels
    assert not [label for label in _labels(AdrDiscriminationChecker) if "adr_eval_b" in label]


def test_a_named_rubric_is_instrument(mini_root: Path) -> None:
    (mini_root / "phantom.md").write_text("Answer YES or NO.\n")
    config = mini_root / "evalkit.yaml"
    config.write_text(
        config.read_text().replace(
            "  rubric: judge-rubric.md\n",
            "  rubric: judge-rubric.md\n  rubrics:\n    phantom: phantom.md\n",
        )
    )
    freeze(Suite(mini_root))
    lock = read_lock(Suite(mini_root))
    assert lock is not None and "rubric:phantom" in lock.hashes
    (mini_root / "phantom.md").write_text("Answer NO.\n")
    assert drift(Suite(mini_root), lock) == ["rubric:phantom"]
    (mini_root / "phantom.md").unlink()
    with pytest.raises(ConfigError, match="judge.rubrics.phantom: phantom.md does not exist"):
        Suite(mini_root)
