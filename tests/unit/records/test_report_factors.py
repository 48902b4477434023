"""report splits every rate by judge, by agent and by confinement backend where a folder's
rows hold several of one, and its JSON always names the judges, agents and backends present."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console
from typer.testing import CliRunner

import evalkit.cli.main  # noqa: F401  (registers every command)
from evalkit.cli.main import app
from evalkit.cli.report_tables import print_report
from evalkit.records.report.build import build_report
from evalkit.records.report.model import Report
from evalkit.records.report.text import to_markdown
from evalkit.suite.config import Suite
from tests.unit.compare.test_compare import ALL_PASS, WRITES_ALWAYS, fabricate

HAIKU = "claude:haiku"
COMMAND = "command:sha256:" + "ab" * 32


def _run_summaries(report: Report) -> dict[tuple[str, str], tuple[int, int]]:
    return {(m.judge, m.agent): (m.specificity.k, m.specificity.n) for m in report.models}


def test_rows_of_two_judges_are_never_pooled_into_one_rate(suite: Suite, tmp_path: Path) -> None:
    work = fabricate(suite, tmp_path / "w", "sonnet", ALL_PASS, judge=HAIKU)
    fabricate(suite, work, "sonnet", WRITES_ALWAYS, judge=COMMAND)
    report = build_report(suite, work)
    assert _run_summaries(report) == {(COMMAND, ""): (0, 6), (HAIKU, ""): (6, 6)}
    cells = [c for table in report.levels for c in table.cells]
    assert {c.judge for c in cells} == {HAIKU, COMMAND}
    assert all(c.pass_rate.n == 2 for c in cells)
    assert report.judges == {COMMAND: 12, HAIKU: 12}


def test_rows_of_two_agents_are_never_pooled_into_one_rate(suite: Suite, tmp_path: Path) -> None:
    work = fabricate(suite, tmp_path / "w", "policy:oracle", ALL_PASS)
    fabricate(suite, work, "policy:oracle", WRITES_ALWAYS, agent="codex", cli="codex/0.169.0")
    report = build_report(suite, work)
    assert _run_summaries(report) == {("", "claude"): (6, 6), ("", "codex"): (0, 6)}
    assert report.agents == {"claude": 12, "codex": 12}
    expected = {(x.agent, x.polarity) for x in report.expected}
    assert not expected or {a for a, _ in expected} == {"claude", "codex"}


def test_one_judge_and_one_agent_add_no_column_and_are_still_named(
    suite: Suite, tmp_path: Path
) -> None:
    work = fabricate(suite, tmp_path / "w", "sonnet", ALL_PASS, judge=HAIKU)
    report = build_report(suite, work)
    assert _run_summaries(report) == {("", ""): (6, 6)}
    data = json.loads(report.model_dump_json())
    assert data["judges"] == {HAIKU: 12} and data["agents"] == {"claude": 12}
    assert "| model | recall" in to_markdown(report)


def test_markdown_and_terminal_name_each_rate_s_judge_and_agent(
    suite: Suite, tmp_path: Path
) -> None:
    work = fabricate(suite, tmp_path / "w", "policy:oracle", ALL_PASS, judge=HAIKU)
    fabricate(suite, work, "policy:oracle", WRITES_ALWAYS, judge=COMMAND, agent="codex")
    report = build_report(suite, work)
    md = to_markdown(report)
    assert "| model | agent | judge | recall" in md
    assert f"| policy:oracle | codex | {COMMAND} | 6/6" in md
    assert "AGENTS: 2 (claude 12 row(s), codex 12 row(s))" in md
    assert "each rate below is of one judge" in md
    console = Console(record=True, width=400)
    print_report(console, report)
    text = console.export_text()
    assert "AGENTS: 2" in text and "JUDGES: 2" in text
    header = next(line for line in text.splitlines() if "recall (pos)" in line)
    assert "agent" in header and "judge" in header


def test_report_json_names_agents_and_judges_through_the_cli(suite: Suite, tmp_path: Path) -> None:
    work = fabricate(suite, tmp_path / "w", "policy:oracle", ALL_PASS, judge=HAIKU)
    fabricate(suite, work, "policy:oracle", ALL_PASS, judge=HAIKU, agent="gemini")
    done = CliRunner().invoke(
        app, ["--suite", str(suite.root), "report", str(work), "--format", "json"]
    )
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert data["agents"] == {"claude": 12, "gemini": 12} and data["judges"] == {HAIKU: 24}
    assert {m["agent"] for m in data["models"]} == {"claude", "gemini"}


def test_junit_names_each_split_cell_apart(suite: Suite, tmp_path: Path) -> None:
    from evalkit.ci.cases import report_suites

    work = fabricate(suite, tmp_path / "w", "policy:oracle", ALL_PASS)
    fabricate(suite, work, "policy:oracle", WRITES_ALWAYS, agent="codex")
    [one] = report_suites(build_report(suite, work))
    names = [(c.classname, c.name) for c in one.cases]
    assert len(names) == len(set(names))
    assert any(name.endswith(" codex") for _, name in names)


def test_rows_of_two_backends_are_never_pooled_into_one_rate(suite: Suite, tmp_path: Path) -> None:
    work = fabricate(suite, tmp_path / "w", "policy:oracle", ALL_PASS)
    fabricate(suite, work, "policy:oracle", WRITES_ALWAYS, confinement="docker")
    report = build_report(suite, work)
    rates = {m.backend: (m.specificity.k, m.specificity.n) for m in report.models}
    assert rates == {"bwrap": (6, 6), "docker": (0, 6)}  # a bundle naming none: bubblewrap's
    assert report.backends == {"bwrap": 12, "docker": 12}
    md = to_markdown(report)
    assert "| model | backend | recall" in md and "BACKENDS: 2" in md


def test_one_backend_adds_no_column_and_is_still_named_in_the_json(
    suite: Suite, tmp_path: Path
) -> None:
    work = fabricate(suite, tmp_path / "w", "policy:oracle", ALL_PASS, confinement="podman")
    report = build_report(suite, work)
    assert json.loads(report.model_dump_json())["backends"] == {"podman": 12}
    assert "| model | recall" in to_markdown(report) and "BACKENDS" not in to_markdown(report)
