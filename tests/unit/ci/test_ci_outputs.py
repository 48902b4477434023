"""What CI systems read from gate, report and verify: JUnit that validates and reads back with
the right counts, the step summary, and annotations whose structure cannot be forged."""

from __future__ import annotations

from pathlib import Path

import pytest
import xmlschema
from junitparser import Error, Failure, JUnitXml, Skipped
from typer.testing import CliRunner

import evalkit.cli.main  # noqa: F401  (registers every command)
from evalkit.ci.cases import verify_suites
from evalkit.ci.github import append_summary, error_annotation, escape_data, escape_property
from evalkit.ci.junit import write
from evalkit.cli.main import app
from evalkit.models import VerdictValue
from evalkit.records.verify.result import Trial, VerifyReport
from evalkit.suite.config import Suite
from tests.gate_folders import fabricate, writes_always

pytestmark = pytest.mark.heavy

SCHEMA = xmlschema.XMLSchema(str(Path(__file__).with_name("junit.xsd")))


def outcomes(path: Path) -> dict[str, dict[str, int]]:
    """classname -> outcome -> cases, read back by junitparser."""
    found: dict[str, dict[str, int]] = {}
    for suite in JUnitXml.fromfile(str(path)):
        for case in suite:
            kinds = {type(r) for r in case.result}
            outcome = (
                "failure"
                if Failure in kinds
                else "error"
                if Error in kinds
                else "skipped"
                if Skipped in kinds
                else "passed"
            )
            group = found.setdefault(case.classname, {})
            group[outcome] = group.get(outcome, 0) + 1
    return found


def test_gate_junit_validates_and_reads_back_a_regression(suite: Suite, tmp_path: Path) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle")
    b = fabricate(suite, tmp_path / "b", "policy:always-write", writes_always)
    xml = tmp_path / "out" / "gate.xml"
    done = CliRunner().invoke(app, ["gate", str(a), str(b), "--junit", str(xml)])
    assert done.exit_code == 1, done.output
    SCHEMA.validate(str(xml))
    assert outcomes(xml) == {
        "gate.decision": {"passed": 1, "failure": 1},
        "gate.scenario.recall": {"passed": 6},
        "gate.scenario.specificity": {"failure": 6},
    }
    parsed = JUnitXml.fromfile(str(xml))
    props = {p.name: p.value for s in parsed for p in s.properties()}
    assert (props["exit_code"], props["alpha"], props["margin"]) == ("1", "0.05", "0")
    assert props["alpha_source"] == "default"
    assert "sign-flip" in props["method"]


def test_gate_junit_marks_an_untrusted_side_as_errors(suite: Suite, tmp_path: Path) -> None:
    def errors(scenario: str, _: str, __: int) -> VerdictValue:
        return "ERROR" if scenario.startswith("P") else "PASS"

    a = fabricate(suite, tmp_path / "a", "policy:oracle")
    b = fabricate(suite, tmp_path / "b", "policy:oracle", errors)
    xml = tmp_path / "gate.xml"
    done = CliRunner().invoke(app, ["gate", str(a), str(b), "--junit", str(xml)])
    assert done.exit_code == 2, done.output
    SCHEMA.validate(str(xml))
    found = outcomes(xml)
    # too many ERROR rows in B, ERROR shares that differ, and ERROR rows that decide recall
    assert found["gate.trust"] == {"error": 3}
    assert found["gate.decision"] == {"error": 2}
    assert found["gate.scenario.recall"] == {"error": 6}


def test_gate_junit_skips_an_underpowered_decision(suite: Suite, tmp_path: Path) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle", only={"P1", "N1"})
    xml = tmp_path / "gate.xml"
    done = CliRunner().invoke(app, ["gate", str(a), str(a), "--junit", str(xml)])
    assert done.exit_code == 3, done.output
    SCHEMA.validate(str(xml))
    assert outcomes(xml)["gate.decision"] == {"skipped": 2}


def test_report_junit_validates_and_names_cells_with_error_rows(
    suite: Suite, tmp_path: Path
) -> None:
    def one_error(scenario: str, _: str, __: int) -> VerdictValue:
        return "ERROR" if scenario.startswith("N2-") else "PASS"

    work = fabricate(suite, tmp_path / "w", "policy:oracle", one_error)
    xml = tmp_path / "report.xml"
    done = CliRunner().invoke(app, ["report", str(work), "--junit", str(xml)])
    assert done.exit_code == 0, done.output
    SCHEMA.validate(str(xml))
    found = outcomes(xml)
    assert found["report.folder"] == {"passed": 2}
    cells = {k: v for k, v in found.items() if k.startswith("report.cell.")}
    assert sum(v.get("error", 0) for v in cells.values()) == 1
    assert sum(v.get("passed", 0) for v in cells.values()) == 11


def test_verify_junit_counts_trials_and_mismatches(tmp_path: Path) -> None:
    report = VerifyReport(
        trials=[Trial("r1 P1-x policy:oracle rep-1"), Trial("r1 N1-y policy:oracle rep-1", ["x"])]
    )
    xml = tmp_path / "verify.xml"
    write(xml, verify_suites("s", str(tmp_path), report))
    SCHEMA.validate(str(xml))
    assert outcomes(xml) == {
        "verify.trial": {"passed": 1, "failure": 1},
        "verify.folder": {"error": 1},
    }


def test_the_step_summary_is_appended_when_the_variable_is_set(
    suite: Suite, tmp_path: Path
) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle")
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    done = CliRunner().invoke(
        app, ["gate", str(a), str(a)], env={"GITHUB_STEP_SUMMARY": str(summary)}
    )
    assert done.exit_code == 0, done.output
    text = summary.read_text()
    assert text.startswith("earlier step\n## evalkit gate: os-vault-write: exit 0 (pass)")
    assert "| recall policy:oracle suite->suite | 6 |" in text


def test_no_summary_is_written_without_the_variable(tmp_path: Path) -> None:
    assert append_summary("# x\n", {}) is None
    assert append_summary("# x\n", {"GITHUB_STEP_SUMMARY": ""}) is None
    target = tmp_path / "s.md"
    assert append_summary("# x", {"GITHUB_STEP_SUMMARY": str(target)}) == target
    assert target.read_text() == "# x\n"


def test_annotations_mark_each_regressed_scenario_file(suite: Suite, tmp_path: Path) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle")
    b = fabricate(suite, tmp_path / "b", "policy:always-write", writes_always)
    done = CliRunner().invoke(app, ["gate", str(a), str(b)], env={"GITHUB_ACTIONS": "true"})
    assert done.exit_code == 1
    marks = [line for line in done.stdout.splitlines() if line.startswith("::error ")]
    negatives = sorted(s.path.name for s in suite.scenarios("all") if s.id.startswith("N"))
    assert sorted(m.split("file=")[1].split(",")[0].rsplit("/", 1)[-1] for m in marks) == negatives
    assert all("line=" not in m for m in marks)
    quiet = CliRunner().invoke(app, ["gate", str(a), str(b)], env={"GITHUB_ACTIONS": ""})
    assert not any(line.startswith("::") for line in quiet.stdout.splitlines())


def test_annotation_escaping_keeps_structure_out_of_values() -> None:
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("a:b,c%") == "a%3Ab%2Cc%25"
    line = error_annotation("scenarios/x,y.md", "t:1", "m\n::error::forged")
    assert line == "::error file=scenarios/x%2Cy.md,title=t%3A1::m%0A::error::forged"
    assert line.count("\n") == 0


def test_a_refused_gate_still_leaves_junit_and_a_summary(suite: Suite, tmp_path: Path) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle")
    xml, summary = tmp_path / "gate.xml", tmp_path / "summary.md"
    done = CliRunner().invoke(
        app,
        ["gate", str(a), str(tmp_path / "missing"), "--junit", str(xml)],
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert done.exit_code == 2
    SCHEMA.validate(str(xml))
    assert outcomes(xml) == {"gate.trust": {"error": 1}}
    assert "exit 2 (refused)" in summary.read_text()
