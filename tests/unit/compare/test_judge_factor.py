"""The judge is a factor: compare and gate refuse sides judged differently, a `judge:`
selector narrows a side, verify calls a folder of two judges not publishable, report and grid
name the judge (verify's part is in tests/unit/records/test_verify_judge.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.compare.compare import compare
from evalkit.compare.gate import gate, settings_for
from evalkit.compare.sides import load_side
from evalkit.errors import RefusedError
from evalkit.records.report.build import build_report
from evalkit.records.report.text import to_markdown
from evalkit.run.judges import judge_notice
from evalkit.suite.config import Suite
from tests.unit.compare.test_compare import ALL_PASS, fabricate

HAIKU = "claude:haiku"
COMMAND = "command:sha256:" + "ab" * 32


def test_compare_refuses_a_judge_difference_alone_naming_judge(
    suite: Suite, tmp_path: Path
) -> None:
    a = fabricate(suite, tmp_path / "a", "sonnet", ALL_PASS, judge=HAIKU)
    b = fabricate(suite, tmp_path / "b", "sonnet", ALL_PASS, judge=COMMAND)
    with pytest.raises(RefusedError) as refused:
        compare(suite, load_side("A", a), load_side("B", b))
    assert "A and B differ in judge" in str(refused.value)
    allowed = compare(suite, load_side("A", a), load_side("B", b), allow_confounded=True)
    assert allowed.differing == ["judge"]


def test_gate_counts_a_judge_difference_as_untrusted(suite: Suite, tmp_path: Path) -> None:
    a = fabricate(suite, tmp_path / "a", "sonnet", ALL_PASS, judge=HAIKU)
    b = fabricate(suite, tmp_path / "b", "sonnet", ALL_PASS, judge=COMMAND)
    verdict = gate(suite, load_side("A", a), load_side("B", b), settings_for(suite))
    assert verdict.exit_code == 2
    assert "untrusted:confounded:both" in verdict.reasons
    assert "judge" in next(c.detail for c in verdict.causes if c.token == "confounded")


def test_a_judge_selector_narrows_a_side(suite: Suite, tmp_path: Path) -> None:
    work = fabricate(suite, tmp_path / "w", "sonnet", ALL_PASS, judge=HAIKU)
    fabricate(suite, work, "haiku", ALL_PASS, judge=COMMAND)
    side = load_side("A", work, f"judge:{COMMAND}")
    assert {r.model for r in side.rows} == {"haiku"}


def test_report_names_each_judge_and_says_when_there_are_two(suite: Suite, tmp_path: Path) -> None:
    work = fabricate(suite, tmp_path / "w", "sonnet", ALL_PASS, judge=HAIKU)
    assert build_report(suite, work).judges == {HAIKU: 12}
    fabricate(suite, work, "sonnet", ALL_PASS, reps=1, judge=COMMAND)
    report = build_report(suite, work)
    assert report.judges == {COMMAND: 6, HAIKU: 12}
    assert f"JUDGES: 2 ({HAIKU} 12 row(s), {COMMAND} 6 row(s))" in to_markdown(report)


def test_a_grid_of_a_real_model_announces_a_judge_command(
    suite: Suite, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALKIT_JUDGE_CMD", "echo YES")
    line = judge_notice(suite, ["sonnet"])
    assert line is not None and "EVALKIT_JUDGE_CMD is set" in line and "command:sha256:" in line
    assert judge_notice(suite, ["policy:oracle"]) is None
    monkeypatch.delenv("EVALKIT_JUDGE_CMD")
    assert judge_notice(suite, ["sonnet"]) is None
