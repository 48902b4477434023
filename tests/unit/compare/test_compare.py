"""`evalkit compare` on fabricated results folders: the numbers, the factors, the refusals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import evalkit.cli.main  # noqa: F401  (registers every command)
from evalkit.cli.main import app
from evalkit.compare.compare import Comparison, Entry, compare
from evalkit.compare.sides import load_side
from evalkit.errors import RefusedError
from evalkit.models import EvidenceLine, ResultRow, VerdictValue
from evalkit.records.folder.results import append_row
from evalkit.records.folder.workdir import EVIDENCE_INDEX as MANIFEST
from evalkit.suite.config import Suite

DECL: dict[str, Any] = {
    "suite": "os-vault-write",
    "fixture_hashes": {"project": "sha256:aa", "vault": "sha256:bb"},
    "rubric_sha256": "cc",
    "plugin_hashes": {"fixtures/plugins/os-vault": "sha256:dd"},
    "checker": "vault-write@1",
    "checker_source": "sha256:ee",
}


def fabricate(
    suite: Suite,
    work: Path,
    model: str,
    verdict: dict[str, VerdictValue],
    reps: int = 2,
    **changes: Any,
) -> Path:
    """A results folder of the run set: `verdict` maps polarity to every rep's verdict."""
    work.mkdir(parents=True, exist_ok=True)
    for sf in suite.scenarios("run"):
        decl = {**DECL, "scenario_sha256": sf.sha256, "model": model, **changes}
        bundle = "evb-" + str(abs(hash(json.dumps(decl, sort_keys=True))))[:16]
        for rep in range(1, reps + 1):
            value = verdict[sf.scenario.polarity]
            append_row(
                work / "results.tsv",
                ResultRow(
                    scenario=sf.id,
                    model=model,
                    a="A:PASS",
                    b="B:PASS",
                    verdict=value,
                    reasons="-",
                    rep=rep,
                    run_id="r1",
                    cli_version=str(changes.get("cli", "2.1.328")),
                    bundle_id=bundle,
                ),
            )
            line = EvidenceLine(
                run_id="r1",
                scenario=sf.id,
                model=model,
                rep=rep,
                evidence="-",
                files={},
                declarations=decl,
                bundle_id=bundle,
                verdict=value,
            )
            with (work / MANIFEST).open("a") as fh:
                fh.write(line.model_dump_json() + "\n")
    return work


ALL_PASS: dict[str, VerdictValue] = {"positive": "PASS", "negative": "PASS"}
WRITES_ALWAYS: dict[str, VerdictValue] = {"positive": "PASS", "negative": "FAIL"}


def pooled(result: Comparison, measure: str, analysis: str) -> Entry:
    return next(
        e
        for e in result.comparisons
        if e.level == "all" and e.measure == measure and e.analysis == analysis
    )


def test_a_model_change_shows_in_specificity_and_not_in_recall(
    suite: Suite, tmp_path: Path
) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle", ALL_PASS)
    b = fabricate(suite, tmp_path / "b", "policy:always-write", WRITES_ALWAYS)
    result = compare(suite, load_side("A", a), load_side("B", b))
    assert result.differing == ["model"]
    spec = pooled(result, "specificity", "per-rep")
    assert (spec.a.k, spec.a.n, spec.b.k, spec.b.n) == (6, 6, 0, 6)
    assert spec.difference == -1.0
    assert spec.p_value == pytest.approx(2 / 924)
    assert spec.interval is not None and spec.interval[1] < 0
    paired = pooled(result, "specificity", "per-scenario")
    assert paired.scenarios == 3 and paired.p_value == 0.25 and paired.p_floor == 0.25
    assert "3 scenarios cannot reach 0.05" in paired.note and "6 could" in paired.note
    assert pooled(result, "recall", "per-rep").difference == 0.0
    assert pooled(result, "recall", "per-scenario").p_value == 1.0


def test_a_cell_of_one_scenario_gets_the_unpaired_analysis_only(
    suite: Suite, tmp_path: Path
) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle", ALL_PASS)
    b = fabricate(suite, tmp_path / "b", "policy:always-write", WRITES_ALWAYS)
    result = compare(suite, load_side("A", a), load_side("B", b))
    by_level = [e for e in result.comparisons if e.level == "L1"]
    assert {e.analysis for e in by_level} == {"per-rep"}
    assert all(e.power is not None and e.power.rate_used == 1.0 for e in by_level)


def test_the_same_setup_twice_differs_in_nothing(suite: Suite, tmp_path: Path) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle", ALL_PASS)
    b = fabricate(suite, tmp_path / "b", "policy:oracle", ALL_PASS)
    result = compare(suite, load_side("A", a), load_side("B", b))
    assert result.differing == []
    assert all(e.difference == 0.0 for e in result.comparisons)
    assert "any difference is chance" in result.notes[0]


def test_an_edited_subject_is_a_subject_change(suite: Suite, tmp_path: Path) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle", ALL_PASS)
    edited = {"fixtures/plugins/os-vault": "sha256:d2"}
    b = fabricate(suite, tmp_path / "b", "policy:oracle", ALL_PASS, plugin_hashes=edited)
    result = compare(suite, load_side("A", a), load_side("B", b))
    assert result.differing == ["subject"]


def test_model_and_subject_both_changed_is_refused(suite: Suite, tmp_path: Path) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle", ALL_PASS)
    b = fabricate(
        suite, tmp_path / "b", "policy:always-write", WRITES_ALWAYS, variant="terse-skill"
    )
    with pytest.raises(RefusedError, match="differ in subject, model"):
        compare(suite, load_side("A", a), load_side("B", b))
    result = compare(suite, load_side("A", a), load_side("B", b), allow_confounded=True)
    assert result.confounded and "CONFOUNDED: A and B differ in subject, model" in result.notes


def test_a_changed_scenario_file_is_an_instrument_change(suite: Suite, tmp_path: Path) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle", ALL_PASS)
    b = fabricate(suite, tmp_path / "b", "policy:oracle", ALL_PASS, scenario_sha256="other")
    assert compare(suite, load_side("A", a), load_side("B", b)).differing == ["instrument"]


def test_error_rows_are_counted_in_n_and_named(suite: Suite, tmp_path: Path) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle", ALL_PASS)
    b = fabricate(suite, tmp_path / "b", "policy:oracle", {"positive": "ERROR", "negative": "PASS"})
    result = compare(suite, load_side("A", a), load_side("B", b))
    recall = pooled(result, "recall", "per-rep")
    assert (recall.b.k, recall.b.n, recall.b.errors) == (0, 6, 6)
    assert any(n.startswith("ERROR rows: A 0/12, B 6/12") for n in result.notes)


def test_sides_can_be_chosen_inside_one_folder(suite: Suite, tmp_path: Path) -> None:
    work = fabricate(suite, tmp_path / "w", "policy:oracle", ALL_PASS)
    fabricate(suite, work, "policy:always-write", WRITES_ALWAYS)
    a = load_side("A", work, "model:policy:oracle")
    b = load_side("B", work, "model:policy:always-write")
    assert len(a.rows) == len(b.rows) == 12
    assert pooled(compare(suite, a, b), "specificity", "per-rep").difference == -1.0


def test_the_json_form_lists_every_documented_field(suite: Suite, tmp_path: Path) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle", ALL_PASS)
    b = fabricate(suite, tmp_path / "b", "policy:always-write", WRITES_ALWAYS)
    done = CliRunner().invoke(
        app, ["--suite", str(suite.root), "compare", str(a), str(b), "--format", "json"]
    )
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    entry = data["comparisons"][0]
    for key in ("set", "level", "polarity", "analysis", "a", "b", "difference", "interval"):
        assert key in entry
    assert {"p_value", "test"} <= set(entry) and set(entry["a"]) >= {"k", "n"}


def test_a_confounded_comparison_exits_2_with_one_line(suite: Suite, tmp_path: Path) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle", ALL_PASS)
    b = fabricate(suite, tmp_path / "b", "policy:always-write", ALL_PASS, cli="9.9.9")
    done = CliRunner().invoke(app, ["--suite", str(suite.root), "compare", str(a), str(b)])
    assert done.exit_code == 2
    assert done.stderr.strip().count("\n") == 0
    assert "model, cli_version" in done.stderr


def test_markdown_names_both_sides_and_the_weak_design(suite: Suite, tmp_path: Path) -> None:
    a = fabricate(suite, tmp_path / "a", "policy:oracle", ALL_PASS)
    b = fabricate(suite, tmp_path / "b", "policy:always-write", WRITES_ALWAYS)
    args = ["--suite", str(suite.root), "compare", str(a), str(b), "--format", "markdown"]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    assert "A and B differ in model only" in done.stdout
    assert "| run | all | specificity | per-scenario | 6/6 (0) | 0/6 (0) | -1.000 |" in done.stdout


def test_a_side_pooling_two_variants_is_refused_naming_them(suite: Suite, tmp_path: Path) -> None:
    pooled_folder = fabricate(suite, tmp_path / "a", "policy:oracle", ALL_PASS)
    fabricate(suite, pooled_folder, "policy:oracle", ALL_PASS, variant="terse-skill")
    b = fabricate(suite, tmp_path / "b", "policy:oracle", ALL_PASS, variant="terse-skill")
    with pytest.raises(RefusedError, match="A holds 2 subjects") as refused:
        compare(suite, load_side("A", pooled_folder), load_side("B", b))
    assert "suite " in str(refused.value) and "terse-skill " in str(refused.value)
    assert "--a variant:" in str(refused.value)


def test_a_pooled_side_compared_anyway_is_confounded(suite: Suite, tmp_path: Path) -> None:
    pooled_folder = fabricate(suite, tmp_path / "a", "policy:oracle", ALL_PASS)
    fabricate(suite, pooled_folder, "policy:oracle", ALL_PASS, variant="terse-skill")
    b = fabricate(suite, tmp_path / "b", "policy:oracle", ALL_PASS, variant="terse-skill")
    result = compare(suite, load_side("A", pooled_folder), load_side("B", b), True)
    assert result.confounded
    assert any(n.startswith("CONFOUNDED: A holds 2 subjects") for n in result.notes)
    assert not any("differ in subject only" in n for n in result.notes)


def test_a_pooled_side_on_the_command_line_exits_2_with_one_line(
    suite: Suite, tmp_path: Path
) -> None:
    work = fabricate(suite, tmp_path / "w", "policy:oracle", ALL_PASS)
    fabricate(suite, work, "policy:oracle", ALL_PASS, variant="terse-skill")
    args = ["--suite", str(suite.root), "compare", str(work), "--a", "model:policy:oracle",
            "--b", "variant:terse-skill"]  # fmt: skip
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 2 and done.stderr.strip().count("\n") == 0, done.output
    assert "A holds 2 subjects" in done.stderr


def test_two_cli_versions_in_one_folder_compare_by_version_alone(
    suite: Suite, tmp_path: Path
) -> None:
    work = fabricate(suite, tmp_path / "w", "policy:oracle", ALL_PASS, cli="2.1.327")
    fabricate(suite, work, "policy:oracle", WRITES_ALWAYS, cli="2.1.328")
    a = load_side("A", work, "cli:2.1.327")
    b = load_side("B", work, "cli:2.1.328")
    assert len(a.rows) == len(b.rows) == 12
    result = compare(suite, a, b)
    assert result.differing == ["cli_version"]


def test_agents_are_one_factor_chosen_by_selector(suite: Suite, tmp_path: Path) -> None:
    work = fabricate(suite, tmp_path / "w", "policy:oracle", ALL_PASS)
    fabricate(suite, work, "policy:oracle", WRITES_ALWAYS, agent="codex", cli="codex/0.169.0")
    a = load_side("A", work, "agent:claude")
    b = load_side("B", work, "agent:codex")
    assert len(a.rows) == len(b.rows) == 12
    result = compare(suite, a, b)
    assert result.differing == ["agent"] and not result.confounded
    assert pooled(result, "specificity", "per-rep").difference == -1.0
