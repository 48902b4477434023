"""The instrument a verdict is decided with: all scoring reads of the suite, and its fixtures
the ones the agent found, the same the kept diffs are taken against."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from evalkit.models import PlanCell, Verdict
from evalkit.records.kept import evidence
from evalkit.run.context import record_plan
from evalkit.scoring.checker import CheckInput
from evalkit.scoring.fsdiff import FolderFiles, read_files
from evalkit.suite.config import Suite
from evalkit.suite.lock import freeze
from evalkit.suite.subject import build_subject
from tests.unit.records.folder import context, record_rep
from tests.unit.suite.test_subject import copy_suite

pytestmark = pytest.mark.heavy

WORDING = "fixtures/project/CLAUDE.md"


def _variant_suite(tmp_path: Path) -> Suite:
    """A suite whose subject reaches into the project fixture, with a variant rewording it."""
    config = f"subject: [fixtures/plugins/os-vault, {WORDING}]\n"
    config += "variants:\n  terse: {overlay: variants/terse}\n"
    made = copy_suite(tmp_path / "suite", config)
    (made.root / WORDING).write_text("the suite's own wording\n")
    overlay = made.root / "variants/terse" / WORDING
    overlay.parent.mkdir(parents=True)
    overlay.write_text("the variant's wording\n")
    suite = Suite(made.root)
    freeze(suite)
    return suite


def test_the_checker_and_the_kept_diff_compare_with_the_same_fixture(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = _variant_suite(tmp_path)
    checked: dict[str, FolderFiles] = {}
    diffed: dict[str, FolderFiles] = {}
    check, diff = type(suite.checker).check, evidence.folder_diff

    def seen_by_checker(self: object, inp: CheckInput) -> Verdict:
        checked.update({name: inp.fixture_files(name) for name in inp.instrument.fixtures})
        return check(suite.checker, inp)

    def seen_by_diff(fixture: Path, current: Path) -> bytes:
        diffed[current.name] = read_files(fixture)
        return diff(fixture, current)

    monkeypatch.setattr(type(suite.checker), "check", seen_by_checker)
    monkeypatch.setattr(evidence, "folder_diff", seen_by_diff)
    ctx = context(suite, tmp_path / "work")
    ctx.subject = build_subject(suite, variant="terse")
    record_plan(ctx, [PlanCell(scenario="P1", model="policy:oracle", reps=1, variant="terse")],
                "fabricated")  # fmt: skip
    record_rep(ctx, "P1", "policy:oracle", 1)

    assert sorted(checked) == sorted(diffed) == sorted(suite.fixture_dirs())
    differ = [name for name in checked if checked[name] != diffed[name]]
    assert differ == [], differ
    assert checked["project"]["CLAUDE.md"].data == b"the variant's wording\n"


def test_an_instrument_is_frozen(suite: Suite) -> None:
    instrument = suite.instrument(suite.resolve("P1"))
    assert list(instrument.fixtures) == list(suite.fixture_dirs())
    with pytest.raises(ValidationError):
        instrument.observe = ("bin/other",)  # type: ignore[misc]
