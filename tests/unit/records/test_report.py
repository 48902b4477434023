"""The report's numbers, checked one by one against a fabricated results folder, then the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import evalkit.cli.main  # noqa: F401  (registers every command)
import evalkit.records.report.build as report_module
import evalkit.records.verify.record as verification_module
from evalkit.cli.main import app
from evalkit.errors import NotFoundError
from evalkit.models import Plan, PlanCell, ResultRow
from evalkit.records.folder.results import append_row
from evalkit.records.folder.workdir import PLANS
from evalkit.records.report.build import build_report
from evalkit.records.report.model import REPORT_SCHEMA_VERSION, Cell, Rate, Report
from evalkit.records.report.tally import flag_key
from evalkit.records.report.text import LEVEL_COLUMNS, to_markdown
from evalkit.records.verify.record import verify_and_record
from evalkit.records.verify.result import Trial, VerifyReport
from evalkit.run.context import RunContext, record_plan
from evalkit.stats import wilson
from evalkit.suite.config import Suite
from evalkit.suite.lock import Contamination, Lock
from tests.conftest import REPO

ROOT = REPO


@pytest.fixture(scope="module")
def suite() -> Suite:
    return Suite(ROOT)


FLAG_NAMES = {"project-write", "b-info", "off-topic-note", "cited-adr"}


def _row(scenario: str, model: str, verdict: str, reasons: str = "-", **kw: object) -> ResultRow:
    """A row as results.row_from_verdict writes it: flags in both columns."""
    flags = ";".join(t for t in reasons.split(";") if t.split(":")[0] in FLAG_NAMES) or "-"
    fields: dict[str, object] = {
        "a": "A:PASS",
        "b": "B:PASS",
        "rep": 1,
        "run_id": "r1",
        "flags": flags,
    }
    fields.update(kw)
    return ResultRow.model_validate(
        {"scenario": scenario, "model": model, "verdict": verdict, "reasons": reasons, **fields}
    )


def fabricate(suite: Suite, work: Path) -> None:
    """Two runs, two models, reps, an ERROR, a B:FAIL, flags, a gap, a second results file,
    a reserve-set row and a row whose scenario left the suite."""
    work.mkdir(exist_ok=True)
    ctx = RunContext(suite=suite, workdir=work, results=work / "results.tsv", run_id="r1")
    record_plan(
        ctx,
        [
            PlanCell(scenario="P1-L1-reporting", model="haiku", reps=3),
            PlanCell(scenario="P1-L1-reporting", model="sonnet", reps=3),
            PlanCell(scenario="N1-L1-reporting", model="haiku", reps=3),
            PlanCell(scenario="N1-L1-reporting", model="sonnet", reps=3),
            PlanCell(scenario="P2-L2-reporting", model="haiku", reps=2),
        ],
        "grid",
    )
    second = Plan(
        run_id="r2",
        created="2026-01-01T00:00:00+00:00",
        command="run N3 haiku --reps 2",
        cells=[PlanCell(scenario="N3-L3-reporting", model="haiku", reps=2)],
        results="more/other.tsv",
    )
    with (work / PLANS).open("a") as fh:
        fh.write(second.model_dump_json() + "\n")
    main, other = work / "results.tsv", work / "more" / "other.tsv"
    other.parent.mkdir()
    rows = [
        _row(
            "P1-L1-reporting",
            "haiku",
            "PASS",
            "A-via:written;project-write:yes;b-info:a.md:no-tags;b-info:a.md:long",
            rep=1,
        ),
        _row(
            "P1-L1-reporting",
            "haiku",
            "PASS",
            "A-via:offered;B-via:offered;project-write:no",
            rep=2,
        ),
        _row("P1-L1-reporting", "haiku", "ERROR", "timeout:900s", a="A:ERROR", b="B:ERROR", rep=3),
        *[
            _row("P1-L1-reporting", "sonnet", "PASS", "A-via:written;project-write:no", rep=i)
            for i in (1, 2, 3)
        ],
        _row("N1-L1-reporting", "haiku", "PASS", "project-write:no", b="B:n/a", rep=1),
        _row(
            "N1-L1-reporting",
            "haiku",
            "FAIL",
            "vault-write:x.md;project-write:yes",
            a="A:FAIL",
            b="B:n/a",
            rep=2,
        ),
        *[
            _row(
                "N1-L1-reporting",
                "sonnet",
                "FAIL",
                "vault-write:y.md;project-write:no",
                a="A:FAIL",
                b="B:n/a",
                rep=i,
            )
            for i in (1, 2, 3)
        ],
        _row(
            "P2-L2-reporting",
            "haiku",
            "FAIL",
            "A-via:written;B-fail:n.md:no-date;off-topic-note:z.md",
            b="B:FAIL",
            rep=1,
        ),
        _row("P2-L2-reporting", "haiku", "PASS", "A-via:written;cited-adr:yes", rep=2),
        _row("P4-L1-delivery", "haiku", "PASS", "A-via:offered;B-via:offered", run_id="r0"),
        _row("X9-retired", "haiku", "PASS", run_id="r0"),
        _row("X9-retired", "haiku", "ERROR", "cli-exit:1", run_id="r0", rep=2),
    ]
    for row in rows:
        append_row(main, row)
    for rep in (1, 2):
        append_row(
            other, _row("N3-L3-reporting", "haiku", "PASS", "-", b="B:n/a", rep=rep, run_id="r2")
        )


@pytest.fixture(scope="module")
def built(suite: Suite, tmp_path_factory: pytest.TempPathFactory) -> Report:
    work = tmp_path_factory.mktemp("work")
    fabricate(suite, work)
    return build_report(suite, work)


def _cell(report: Report, which: str, level: str, model: str, polarity: str) -> Cell:
    [table] = [t for t in report.levels if (t.set, t.level) == (which, level)]
    [cell] = [c for c in table.cells if (c.model, c.polarity) == (model, polarity)]
    return cell


def _bounds(r: Rate) -> tuple[float | None, float | None]:
    return r.low, r.high


# --------------------------------------------------------------------------- Wilson


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        (3, 3, 0.4385, 1.0),
        (0, 3, 0.0, 0.5615),
        (1, 2, 0.0945, 0.9055),
        (2, 4, 0.1500, 0.8500),
        (1, 3, 0.0615, 0.7923),
        (0, 1, 0.0, 0.7935),
    ],
)
def test_wilson_bounds_match_hand_computed_values(k: int, n: int, low: float, high: float) -> None:
    assert wilson(k, n) == (pytest.approx(low, abs=5e-5), pytest.approx(high, abs=5e-5))


def test_wilson_of_nothing_is_none_not_zero() -> None:
    assert wilson(0, 0) is None


# --------------------------------------------------------------------------- per level cells


def test_error_rows_are_in_the_denominator_and_never_passes(built: Report) -> None:
    rate = _cell(built, "run", "L1", "haiku", "positive").pass_rate
    assert (rate.k, rate.n, rate.errors) == (2, 3, 1)
    assert _bounds(rate) == (pytest.approx(0.2077, abs=5e-5), pytest.approx(0.9385, abs=5e-5))


def test_each_model_and_polarity_has_its_own_k_over_n(built: Report) -> None:
    sonnet_pos = _cell(built, "run", "L1", "sonnet", "positive").pass_rate
    assert (sonnet_pos.k, sonnet_pos.n, sonnet_pos.errors) == (3, 3, 0)
    assert _bounds(sonnet_pos) == (pytest.approx(0.4385, abs=5e-5), 1.0)
    sonnet_neg = _cell(built, "run", "L1", "sonnet", "negative")
    assert (sonnet_neg.pass_rate.k, sonnet_neg.pass_rate.n, sonnet_neg.fails) == (0, 3, 3)
    assert _bounds(sonnet_neg.pass_rate) == (0.0, pytest.approx(0.5615, abs=5e-5))
    haiku_neg = _cell(built, "run", "L1", "haiku", "negative").pass_rate
    assert (haiku_neg.k, haiku_neg.n) == (1, 2)
    assert _bounds(haiku_neg) == (pytest.approx(0.0945, abs=5e-5), pytest.approx(0.9055, abs=5e-5))


def test_levels_are_tabled_apart_and_each_table_names_its_set(built: Report) -> None:
    assert [(t.set, t.level, t.label) for t in built.levels] == [
        ("run", "L1", "measurement"),
        ("run", "L2", "measurement"),
        ("run", "L3", "measurement"),
        ("reserve", "L1", "held"),
    ]
    reserve = _cell(built, "reserve", "L1", "haiku", "positive")
    assert (reserve.pass_rate.k, reserve.pass_rate.n, reserve.scenarios) == (
        1,
        1,
        ["P4-L1-delivery"],
    )


def test_a_via_splits_passes_only_and_only_for_positives(built: Report) -> None:
    assert _cell(built, "run", "L1", "haiku", "positive").a_via == {"written": 1, "offered": 1}
    assert _cell(built, "run", "L1", "sonnet", "positive").a_via == {"written": 3}
    l2 = _cell(built, "run", "L2", "haiku", "positive")
    assert l2.a_via == {"written": 1}, "the B:FAIL row's A-via is not a PASS"
    assert _cell(built, "run", "L1", "haiku", "negative").a_via == {}


def test_a_via_counts_by_kind_whatever_the_checker(suite: Suite, tmp_path: Path) -> None:
    for rep, reasons in enumerate(
        ["A-via:skill:create;A-via:records:Read", "A-via:skill:find", "A-via:tool"], start=1
    ):
        append_row(tmp_path / "results.tsv", _row("P3-L3-reporting", "m", "PASS", reasons, rep=rep))
    got = build_report(suite, tmp_path)
    assert _cell(got, "run", "L3", "m", "positive").a_via == {"records": 1, "skill": 2, "tool": 1}


def test_axis_b_failures_are_counted(built: Report) -> None:
    l2 = _cell(built, "run", "L2", "haiku", "positive")
    assert (l2.b_fail, l2.fails, l2.pass_rate.k, l2.pass_rate.n) == (1, 1, 1, 2)
    assert _cell(built, "run", "L1", "haiku", "positive").b_fail == 0


def test_flags_are_counted_by_name_once_per_row(built: Report) -> None:
    assert _cell(built, "run", "L1", "haiku", "positive").flags == {
        "b-info": 1,
        "project-write:yes": 1,
    }
    assert _cell(built, "run", "L1", "haiku", "negative").flags == {"project-write:yes": 1}
    assert _cell(built, "run", "L1", "sonnet", "positive").flags == {}
    assert _cell(built, "run", "L2", "haiku", "positive").flags == {
        "cited-adr:yes": 1,
        "off-topic-note": 1,
    }


@pytest.mark.parametrize(
    ("token", "key"),
    [
        ("project-write:yes", "project-write:yes"),
        ("project-write:no", None),
        ("b-info:a.md:no-tags", "b-info"),
        ("off-topic-note:z.md", "off-topic-note"),
        ("cited-adr:yes", "cited-adr:yes"),
        ("existing-file-edited:no", None),
        ("cited:0003", "cited"),
    ],
)
def test_flag_key_names_each_flag(token: str, key: str | None) -> None:
    assert flag_key(token) == key


# --------------------------------------------------------------------------- per model


def test_recall_and_specificity_stay_apart_per_model(built: Report) -> None:
    summary = {(m.set, m.model): m for m in built.models}
    assert list(summary) == [("run", "haiku"), ("run", "sonnet"), ("reserve", "haiku")]
    haiku = summary[("run", "haiku")]
    assert (haiku.recall.k, haiku.recall.n, haiku.recall.errors) == (3, 5, 1)
    assert _bounds(haiku.recall) == (
        pytest.approx(0.2307, abs=5e-5),
        pytest.approx(0.8824, abs=5e-5),
    )
    assert (haiku.specificity.k, haiku.specificity.n) == (3, 4)
    assert _bounds(haiku.specificity) == (
        pytest.approx(0.3006, abs=5e-5),
        pytest.approx(0.9544, abs=5e-5),
    )
    sonnet = summary[("run", "sonnet")]
    assert (sonnet.recall.k, sonnet.recall.n, sonnet.specificity.k, sonnet.specificity.n) == (
        3,
        3,
        0,
        3,
    )
    reserve = summary[("reserve", "haiku")]
    assert (reserve.recall.k, reserve.recall.n) == (1, 1)
    assert (reserve.specificity.n, reserve.specificity.low, reserve.specificity.rate) == (
        0,
        None,
        None,
    )


# --------------------------------------------------------------------------- gaps and strays


def test_missing_rows_are_named_against_their_plan(built: Report) -> None:
    assert built.incomplete
    assert [m.model_dump() for m in built.missing] == [
        {
            "run_id": "r1",
            "scenario": "N1-L1-reporting",
            "model": "haiku",
            "planned": 3,
            "recorded": 2,
            "skipped": 0,
            "skip_reason": "",
        },
    ]
    assert "## INCOMPLETE\n\n- r1 N1-L1-reporting haiku: 3 rep(s) planned, 2 recorded" in (
        to_markdown(built)
    )


def test_a_results_file_named_by_a_plan_is_read(built: Report) -> None:
    assert built.results_files == {"results.tsv": 16, "more/other.tsv": 2}
    assert built.rows == 18
    n3 = _cell(built, "run", "L3", "haiku", "negative").pass_rate
    assert (n3.k, n3.n) == (2, 2)


def test_rows_of_a_scenario_gone_from_the_suite_are_listed_not_dropped(built: Report) -> None:
    assert [u.model_dump() for u in built.unknown] == [
        {
            "scenario": "X9-retired",
            "model": "haiku",
            "rows": 2,
            "passes": 1,
            "fails": 0,
            "errors": 1,
        },
    ]


def test_a_complete_folder_is_not_marked_incomplete(suite: Suite, tmp_path: Path) -> None:
    ctx = RunContext(suite=suite, workdir=tmp_path, results=tmp_path / "results.tsv", run_id="r")
    record_plan(ctx, [PlanCell(scenario="N2-L2-reporting", model="opus", reps=2)], "run")
    for rep in (1, 2):
        append_row(ctx.results, _row("N2-L2-reporting", "opus", "PASS", run_id="r", rep=rep))
    got = build_report(suite, tmp_path)
    assert (got.incomplete, got.missing) == (False, [])
    assert "INCOMPLETE" not in to_markdown(got)


# --------------------------------------------------------------------------- missing input


def test_a_missing_results_file_is_a_not_found_error(suite: Suite, tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match="does not exist"):
        build_report(suite, tmp_path / "nowhere")


def test_an_empty_results_file_is_a_not_found_error(suite: Suite, tmp_path: Path) -> None:
    (tmp_path / "results.tsv").write_text("")
    with pytest.raises(NotFoundError, match="is empty"):
        build_report(suite, tmp_path)


# --------------------------------------------------------------------------- labels, verdict


def test_contamination_labels_come_from_the_lock(
    suite: Suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fabricate(suite, tmp_path)
    tuned = Lock(
        checker="x",
        hashes={},
        contaminated={"run": [Contamination(date="2026-01-01", note="tuned")]},
    )
    monkeypatch.setattr(report_module, "read_lock", lambda _suite: tuned)
    got = build_report(suite, tmp_path)
    assert got.sets == {"run": "training-set", "reserve": "measurement"}
    assert {(t.set, t.label) for t in got.levels} == {
        ("run", "training-set"),
        ("reserve", "measurement"),
    }


def test_a_set_tuned_for_one_variant_is_labelled_for_that_variants_rows(
    suite: Suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fabricate(suite, tmp_path)
    append_row(tmp_path / "results.tsv", _row("P1-L1-reporting", "haiku", "PASS", variant="terse"))
    tuned = Lock(
        checker="x",
        hashes={},
        contaminated={"run": [Contamination(date="2026-01-01", note="t", variant="terse")]},
    )
    monkeypatch.setattr(report_module, "read_lock", lambda _suite: tuned)
    got = build_report(suite, tmp_path)
    assert got.sets == {
        "run": "measurement; training-set for variant terse",
        "reserve": "held; measurement for variant terse",
    }


def test_without_a_manifest_the_folder_is_not_publishable(built: Report) -> None:
    assert built.publishability.model_dump() == {
        "publishable": False,
        "problems": ["no evidence manifest"],
        "verdict": "NOT PUBLISHABLE: no evidence manifest",
        "verification": "missing",
        "verified_at": None,
    }


def test_an_empty_manifest_is_judged_by_verify(suite: Suite, tmp_path: Path) -> None:
    fabricate(suite, tmp_path)
    (tmp_path / "manifest.jsonl").write_text("")
    verify_and_record(suite, tmp_path)
    got = build_report(suite, tmp_path).publishability
    assert not got.publishable
    assert "nothing recorded" in got.problems
    assert got.verdict.startswith("NOT PUBLISHABLE: nothing recorded")


def test_the_verdict_is_verify_s(
    suite: Suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fabricate(suite, tmp_path)
    (tmp_path / "manifest.jsonl").write_text("")
    monkeypatch.setattr(
        verification_module, "verify_workdir", lambda _s, _w: VerifyReport(trials=[Trial("t")])
    )
    verify_and_record(suite, tmp_path)
    assert build_report(suite, tmp_path).publishability.verdict == "PUBLISHABLE"
    monkeypatch.setattr(
        verification_module,
        "verify_workdir",
        lambda _s, _w: VerifyReport(trials=[Trial("t")], publish_problems=["2 ERROR row(s)"]),
    )
    verify_and_record(suite, tmp_path)
    assert build_report(suite, tmp_path).publishability.verdict == (
        "NOT PUBLISHABLE: 2 ERROR row(s)"
    )


# --------------------------------------------------------------------------- forms


def test_json_carries_the_schema_version_and_round_trips(built: Report) -> None:
    text = built.model_dump_json()
    assert '"schema_version":2' in text.replace(" ", "")
    again = Report.model_validate_json(text)
    assert again == built
    assert again.schema_version == REPORT_SCHEMA_VERSION == 2


def test_markdown_shows_every_number_in_github_tables(built: Report) -> None:
    md = to_markdown(built)
    assert "## L1 - run set (measurement)" in md
    one = "reps as independent (clustered: n/a (one scenario))"
    assert (
        f"| haiku | positive | 2/3 [0.2077, 0.9385] {one}; 1 ERROR: 0.67 to 1.00 had they "
        "passed | 0/3 | 1 | offered 1, written 1 | 0 | 0 "
        "| b-info 1, project-write:yes 1 |"
    ) in md
    assert f"| sonnet | negative | 0/3 [0.0000, 0.5615] {one} | 0/3 | 0 | - | 0 | 0 | - |" in md
    assert (
        "| haiku | 3/5 [0.0000, 1.0000] clustered by scenario (G 2, deff 1.00; reps as "
        "independent [0.2307, 0.8824]); 1 ERROR: 0.60 to 0.80 had they passed | 1 | "
        "3/4 [0.0000, 1.0000] clustered by scenario (G 2, "
        "deff 1.33; reps as independent [0.3006, 0.9544]) | 0 |"
    ) in md
    assert f"| haiku | 1/1 [0.2065, 1.0000] {one} | 0 | 0/0 [none] | 0 |" in md
    assert "- X9-retired haiku: 2 row(s) (PASS 1, FAIL 0, ERROR 1)" in md
    assert md.rstrip().endswith("**NOT PUBLISHABLE: no evidence manifest**")


# --------------------------------------------------------------------------- the CLI


WIDE = {"COLUMNS": "200", "NO_COLOR": "1"}


@pytest.fixture(scope="module")
def work(suite: Suite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("cli-work")
    fabricate(suite, folder)
    return folder


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["--suite", str(ROOT), "report", *args], env=WIDE)
    return result.exit_code, result.stdout, result.stderr


def test_table_form_shows_banner_cells_summary_and_verdict(work: Path) -> None:
    code, stdout, _ = invoke(str(work))
    assert code == 0
    lines = [line.rstrip() for line in stdout.splitlines()]
    assert "INCOMPLETE" in lines
    assert "  r1 N1-L1-reporting haiku: 3 rep(s) planned, 2 recorded" in lines
    assert "L1 - run set (measurement)" in lines
    assert "L1 - reserve set (held)" in lines
    [haiku_l1_pos] = [x for x in lines if "haiku" in x and "2/3 21–94%" in x and "b-info" in x]
    assert "offered 1, written 1" in haiku_l1_pos
    assert "b-info 1, project-write:yes 1" in haiku_l1_pos
    [summary] = [x for x in lines if "3/5 0–100% (indep 23–88%, deff 1.0, G 2)" in x]
    assert "3/4 0–100% (indep 30–95%, deff 1.3, G 2)" in summary
    assert "  X9-retired haiku: 2 row(s) (PASS 1, FAIL 0, ERROR 1)" in lines
    assert lines[-1] == "NOT PUBLISHABLE: no evidence manifest"


def test_markdown_form_prints_github_tables(work: Path) -> None:
    code, stdout, _ = invoke(str(work), "--format", "markdown")
    assert code == 0
    assert (
        "| sonnet | positive | 3/3 [0.4385, 1.0000] reps as independent (clustered: n/a (one "
        "scenario)) | 0/3 | 0 | written 3 | 0 | 0 | - |"
    ) in stdout
    assert "## INCOMPLETE" in stdout


def test_json_form_is_the_report_model_with_its_schema_version(work: Path) -> None:
    code, stdout, _ = invoke(str(work), "--format", "json")
    assert code == 0
    data = json.loads(stdout)
    assert data["schema_version"] == 2
    assert data["missing"] == [
        {
            "run_id": "r1",
            "scenario": "N1-L1-reporting",
            "model": "haiku",
            "planned": 3,
            "recorded": 2,
            "skipped": 0,
            "skip_reason": "",
        }
    ]
    [run_l1] = [t for t in data["levels"] if (t["set"], t["level"]) == ("run", "L1")]
    [cell] = [c for c in run_l1["cells"] if (c["model"], c["polarity"]) == ("haiku", "positive")]
    assert {k: cell["pass_rate"][k] for k in ("k", "n", "errors")} == {"k": 2, "n": 3, "errors": 1}


def test_no_results_is_one_line_on_stderr_and_exit_2(tmp_path: Path) -> None:
    code, stdout, stderr = invoke(str(tmp_path))
    assert code == 2
    assert stdout == ""
    assert stderr.count("\n") == 1
    assert stderr.startswith("evalkit: ") and "results file does not exist" in stderr


def test_an_unknown_format_is_refused(work: Path) -> None:
    code, _, _ = invoke(str(work), "--format", "csv")
    assert code == 2


def test_rows_naming_a_breach_are_counted_whatever_their_verdict(
    suite: Suite, tmp_path: Path
) -> None:
    results = tmp_path / "results.tsv"
    breach = "real-vault-breach:Write:/v/a.md"
    for row in (
        _row("N1-L1-reporting", "haiku", "ERROR", f"{breach};timeout:60s", a="A:ERROR"),
        _row("N1-L1-reporting", "haiku", "FAIL", breach, rep=2, a="A:FAIL"),
        _row("N1-L1-reporting", "haiku", "PASS", "-", rep=3),
        _row("N1-L1-reporting", "haiku", "PASS", "real-vault-changed:/v/b.md", rep=4),
    ):
        append_row(results, row)
    built = build_report(suite, tmp_path)
    assert built.breaches == 2
    (cell,) = built.levels[0].cells
    assert cell.breaches == 2
    assert "breach" in " ".join(LEVEL_COLUMNS).lower()
    assert '"breaches": 2' in built.model_dump_json(indent=1)


def test_a_suite_without_a_ladder_is_tabled_by_kind(tmp_path: Path) -> None:
    eval_b = Suite(REPO / "suites" / "adr-eval-b")
    work = tmp_path / "work"
    work.mkdir()
    for scenario, verdict in (("W1-worker-concurrency", "PASS"), ("R4-digest-by-kind", "FAIL")):
        append_row(work / "results.tsv", _row(scenario, "haiku", verdict))
    report = build_report(eval_b, work)
    assert [(t.level, t.kind) for t in report.levels] == [
        (None, "retrieval"),
        (None, "write-trigger"),
    ]
    assert json.loads(report.model_dump_json())["levels"][0]["kind"] == "retrieval"
    assert "## write-trigger - run set" in to_markdown(report)
