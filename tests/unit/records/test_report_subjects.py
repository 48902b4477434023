"""report with several subjects, an inner-loop grid and a suite's expected pass bars."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

import evalkit.cli.main  # noqa: F401  (registers every command)
from evalkit.cli.main import app
from evalkit.cli.report_tables import print_report
from evalkit.errors import ConfigError
from evalkit.models import EvidenceLine, ExpectedBar, PlanCell, ResultRow
from evalkit.records.folder.results import COLUMNS, append_row, format_row
from evalkit.records.folder.workdir import Workdir
from evalkit.records.report.build import build_report
from evalkit.records.report.expected import expected_verdict
from evalkit.records.report.model import Rate, Report
from evalkit.records.report.tally import rate
from evalkit.records.report.text import to_markdown
from evalkit.run.context import RunContext, record_plan
from evalkit.suite.config import Suite
from tests.conftest import REPO

SUITE_HASH = "sha256:" + "a" * 64
TERSE_HASH = "sha256:" + "b" * 64
EDITED_HASH = "sha256:" + "c" * 64
P1, N1 = "P1-L1-reporting", "N1-L1-reporting"


def _row(
    scenario: str, verdict: str, rep: int, variant: str, subject: str, **kw: object
) -> ResultRow:
    fields: dict[str, object] = {"a": "A:PASS", "b": "B:PASS", "reasons": "-", "run_id": "r1"}
    fields.update(kw)
    return ResultRow.model_validate(
        {"scenario": scenario, "model": "haiku", "verdict": verdict, "rep": rep,
         "variant": variant, "subject_hash": subject, **fields}
    )  # fmt: skip


def _folder(work: Path, rows: list[ResultRow], inner_loop: bool = False) -> Path:
    suite = Suite(REPO)
    ctx = RunContext(suite=suite, workdir=work, results=work / "results.tsv", run_id="r1")
    cells: dict[tuple[str, str], int] = {}
    for row in rows:
        cells[(row.scenario, row.variant)] = cells.get((row.scenario, row.variant), 0) + 1
    plan = [PlanCell(scenario=s, model="haiku", reps=n, variant=v) for (s, v), n in cells.items()]
    record_plan(ctx, plan, "grid", inner_loop)
    for row in rows:
        append_row(ctx.results, row)
    return work


def two_variants(work: Path) -> Path:
    """The suite's wording passes every positive, the terse one none; both pass negatives."""
    rows = []
    for rep in range(1, 5):
        variant, subject = ("suite", SUITE_HASH) if rep % 2 else ("terse", TERSE_HASH)
        rows.append(_row(P1, "PASS" if variant == "suite" else "FAIL", rep, variant, subject))
        rows.append(_row(N1, "PASS", rep, variant, subject))
    return _folder(work, rows)


# --------------------------------------------------------------------------- subjects


def test_two_variants_are_never_pooled_into_one_rate(suite: Suite, tmp_path: Path) -> None:
    got = build_report(suite, two_variants(tmp_path))
    cells = {(c.variant, c.polarity): c.pass_rate for c in got.levels[0].cells}
    assert {k: (r.k, r.n) for k, r in cells.items()} == {
        ("suite", "positive"): (2, 2),
        ("suite", "negative"): (2, 2),
        ("terse", "positive"): (0, 2),
        ("terse", "negative"): (2, 2),
    }
    recall = {(m.variant, m.subject_hash): (m.recall.k, m.recall.n) for m in got.models}
    assert recall == {("suite", SUITE_HASH): (2, 2), ("terse", TERSE_HASH): (0, 2)}


def test_each_subject_is_listed_with_its_rows(suite: Suite, tmp_path: Path) -> None:
    got = build_report(suite, two_variants(tmp_path))
    assert [(s.variant, s.subject_hash, s.rows) for s in got.subjects] == [
        ("suite", SUITE_HASH, 4),
        ("terse", TERSE_HASH, 4),
    ]


def test_markdown_names_each_row_s_variant_and_subject(suite: Suite, tmp_path: Path) -> None:
    md = to_markdown(build_report(suite, two_variants(tmp_path)))
    assert "SUBJECTS: 2" in md
    one = " reps as independent (clustered: n/a (one scenario))"
    assert f"| haiku | terse | bbbbbbbbbbbb | positive | 0/2 [0.0000, 0.6576]{one} |" in md
    assert f"| haiku | suite | aaaaaaaaaaaa | 2/2 [0.3424, 1.0000]{one} | 0 | 2/2" in md


def test_a_variant_whose_wording_changed_is_split_by_hash_and_said(
    suite: Suite, tmp_path: Path
) -> None:
    rows = [
        _row(P1, "FAIL", 1, "suite", SUITE_HASH),
        _row(P1, "PASS", 2, "suite", EDITED_HASH, run_id="r2"),
    ]
    got = build_report(suite, _folder(tmp_path, rows))
    assert [(c.subject_hash, c.pass_rate.k) for c in got.levels[0].cells] == [
        (SUITE_HASH, 0),
        (EDITED_HASH, 1),
    ]
    assert "variant suite ran with 2 subject hashes" in to_markdown(got)


def test_one_subject_keeps_the_tables_as_they_were_and_names_it(
    suite: Suite, tmp_path: Path
) -> None:
    rows = [_row(P1, "PASS", 1, "suite", SUITE_HASH), _row(N1, "PASS", 1, "suite", SUITE_HASH)]
    md = to_markdown(build_report(suite, _folder(tmp_path, rows)))
    assert f"- subject: suite {SUITE_HASH}" in md
    assert "| model | polarity | PASS k/n [95%] |" in md
    assert "variant" not in md.split("## L1")[1]


def test_an_older_file_s_subject_comes_from_the_manifest(suite: Suite, tmp_path: Path) -> None:
    old = [c for c in COLUMNS if c not in ("variant", "subject_hash")]
    rows = [_row(P1, "PASS", 1, "", "", bundle_id="evb-1"), _row(P1, "FAIL", 2, "", "")]
    with (tmp_path / "results.tsv").open("w") as fh:
        fh.write("\t".join(old) + "\n" + "".join(format_row(r, old) for r in rows))
    line = EvidenceLine(
        run_id="r1", scenario=P1, model="haiku", rep=1, evidence="e", files={},
        declarations={"variant": "terse", "subject_hash": TERSE_HASH}, bundle_id="evb-1",
        verdict="PASS",
    )  # fmt: skip
    Workdir(tmp_path).append_evidence_line(line)
    got = build_report(suite, tmp_path)
    assert [(s.variant, s.subject_hash, s.rows) for s in got.subjects] == [
        ("suite", "", 1),
        ("terse", TERSE_HASH, 1),
    ]


# --------------------------------------------------------------------------- inner loop


def test_an_inner_loop_folder_says_so_before_any_rate(suite: Suite, tmp_path: Path) -> None:
    rows = [_row(P1, "FAIL", 1, "suite", SUITE_HASH), _row(N1, "PASS", 1, "suite", SUITE_HASH)]
    got = build_report(suite, _folder(tmp_path, rows, inner_loop=True))
    assert (got.inner_loop, got.inner_loop_runs) == (True, ["r1"])
    md = to_markdown(got)
    assert md.index("INNER LOOP") < md.index("## L1")
    assert "## L1 - run set (measurement) - inner loop, not the whole set" in md
    assert "recall" not in md.split("## Per model")[1].split("\n\n")[1]


def test_a_whole_grid_is_no_inner_loop(suite: Suite, tmp_path: Path) -> None:
    got = build_report(suite, two_variants(tmp_path))
    assert (got.inner_loop, got.inner_loop_runs) == (False, [])
    assert "INNER LOOP" not in to_markdown(got)


# --------------------------------------------------------------------------- expected bars


@pytest.mark.parametrize(
    ("k", "n", "bar", "verdict"),
    [
        (9, 10, 0.8, "met"),
        (4, 5, 0.8, "met"),
        (3, 5, 0.8, "unclear"),
        (0, 5, 0.9, "miss"),
        (1, 10, 0.8, "miss"),
        (0, 1, 0.7, "unclear"),
    ],
)
def test_the_verdict_against_a_bar(k: int, n: int, bar: float, verdict: str) -> None:
    rows = [_row(P1, "PASS" if i < k else "FAIL", i, "suite", "") for i in range(n)]
    assert expected_verdict(rate(rows), bar) == verdict


def test_an_error_row_counts_against_the_bar() -> None:
    observed = Rate(k=4, n=5, errors=1, rate=0.8, low=0.376, high=0.964)
    assert expected_verdict(observed, 0.9) == "unclear"


def _with_bars(**bars: ExpectedBar) -> Suite:
    suite = Suite(REPO)
    suite.config.expected = dict(bars)
    return suite


def test_each_subject_is_set_against_the_level_s_bars(tmp_path: Path) -> None:
    suite = _with_bars(L1=ExpectedBar(positive=0.9, negative=0.9))
    got = build_report(suite, two_variants(tmp_path))
    assert [(x.variant, x.polarity, x.bar, x.verdict) for x in got.expected] == [
        ("suite", "positive", 0.9, "met"),
        ("suite", "negative", 0.9, "met"),
        ("terse", "positive", 0.9, "miss"),
        ("terse", "negative", 0.9, "met"),
    ]


def test_a_polarity_without_a_bar_is_not_judged(tmp_path: Path) -> None:
    suite = _with_bars(L1=ExpectedBar(negative=0.5), L2=ExpectedBar(positive=0.5))
    got = build_report(suite, two_variants(tmp_path))
    assert {(x.level, x.polarity) for x in got.expected} == {("L1", "negative")}


def test_a_miss_is_in_the_banner_and_its_row_in_every_text_form(tmp_path: Path) -> None:
    suite = _with_bars(L1=ExpectedBar(positive=0.9))
    got = build_report(suite, two_variants(tmp_path))
    md = to_markdown(got)
    assert md.index("EXPECTED BAR MISSED: 1 of 2") < md.index("## L1")
    assert "| run | L1 | haiku | terse | bbbbbbbbbbbb | positive | MISS | >= 0.90 | 0/2 [" in md
    console = Console(width=200, record=True, color_system=None)
    print_report(console, got)
    text = console.export_text()
    assert "EXPECTED BAR MISSED: 1 of 2" in text
    [line] = [x for x in text.splitlines() if "MISS " in x and "terse" in x]
    assert "0/2" in line


@pytest.mark.parametrize(
    ("k", "n", "verdict"), [(1, 10, "met"), (5, 10, "unclear"), (10, 10, "miss")]
)
def test_a_maximum_is_missed_only_when_the_whole_interval_is_above_it(
    k: int, n: int, verdict: str
) -> None:
    rows = [_row(P1, "PASS" if i < k else "FAIL", i, "suite", "") for i in range(n)]
    assert expected_verdict(rate(rows), None, 0.4) == verdict


def test_a_tier_states_its_own_range_in_place_of_the_level_s_bar(tmp_path: Path) -> None:
    from evalkit.models import Bounds, TierBar

    suite = _with_bars(
        L1=ExpectedBar(positive=0.9, models={"haik": TierBar(positive=Bounds(max=0.5))})
    )
    got = build_report(suite, two_variants(tmp_path))
    assert [(x.variant, x.tier, x.bar, x.bar_max, x.verdict) for x in got.expected] == [
        ("suite", "haik", None, 0.5, "unclear"),
        ("terse", "haik", None, 0.5, "met"),
    ]
    assert "| positive | UNCLEAR | <= 0.50 |" in to_markdown(got)


def test_a_range_reads_from_yaml_and_a_rate_past_1_is_refused(tmp_path: Path) -> None:
    from evalkit.models import SuiteConfig
    from evalkit.suite.yamlio import validate

    base = {"name": "x", "checker": {"name": "vault-write"}}
    bars = {"L3": {"positive": 0.7, "models": {"haiku": {"negative": {"min": 0.2, "max": 0.6}}}}}
    config = validate(SuiteConfig, {**base, "expected": bars}, tmp_path / "evalkit.yaml")
    assert config.expected["L3"].for_model("claude-haiku-4-5", "negative") == (0.2, 0.6)
    assert config.expected["L3"].for_model("sonnet", "positive") == (0.7, None)
    with pytest.raises(ConfigError):
        validate(SuiteConfig, {**base, "expected": {"L1": {"positive": 1.5}}}, tmp_path / "e")


def test_without_bars_nothing_is_judged(suite: Suite, tmp_path: Path) -> None:
    got = build_report(suite, two_variants(tmp_path))
    assert got.expected == []
    assert "Expected against observed" not in to_markdown(got)


def test_a_bar_for_no_level_is_refused_naming_it(tmp_path: Path) -> None:
    from evalkit.models import SuiteConfig
    from evalkit.suite.yamlio import validate

    data = {"name": "x", "checker": {"name": "vault-write"}, "expected": {"l1": {"positive": 1}}}
    with pytest.raises(ConfigError, match="expected: l1 is not a level"):
        validate(SuiteConfig, data, tmp_path / "evalkit.yaml")


# --------------------------------------------------------------------------- the CLI


def invoke(work: Path, *args: str) -> str:
    result = CliRunner().invoke(
        app, ["--suite", str(REPO), "report", str(work), *args], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    return result.stdout


def test_the_table_form_shows_each_variant_on_its_own_line(tmp_path: Path) -> None:
    lines = invoke(two_variants(tmp_path)).splitlines()
    assert "SUBJECTS: 2 - each rate is of one variant and subject; none is pooled" in lines
    [terse] = [x for x in lines if "terse" in x and "positive" in x]
    assert "bbbbbbbbbbbb" in terse and "0/2" in terse


def test_the_json_form_carries_subjects_inner_loop_and_expected(tmp_path: Path) -> None:
    data = json.loads(invoke(two_variants(tmp_path), "--format", "json"))
    assert [s["variant"] for s in data["subjects"]] == ["suite", "terse"]
    assert data["inner_loop"] is False and data["expected"] == []
    assert {c["variant"] for c in data["levels"][0]["cells"]} == {"suite", "terse"}
    Report.model_validate(data)


def test_the_table_form_of_an_inner_loop_says_so(tmp_path: Path) -> None:
    rows = [_row(P1, "FAIL", 1, "suite", SUITE_HASH)]
    out = invoke(_folder(tmp_path, rows, inner_loop=True))
    assert "INNER LOOP: this folder holds an inner-loop grid (r1)" in out
    assert "PASS (pos)" in out and "recall (pos)" not in out


# --------------------------------------------------------------------------- CLI versions


def test_rows_of_two_cli_versions_are_split_by_version_in_semver_order(
    suite: Suite, tmp_path: Path
) -> None:
    rows = []
    for rep in range(1, 5):
        version = "2.1.32" if rep % 2 else "2.1.321"
        rows.append(_row(P1, "PASS" if rep % 2 else "FAIL", rep, "suite", SUITE_HASH,
                         cli_version=version))  # fmt: skip
        rows.append(_row(N1, "PASS", rep, "suite", SUITE_HASH, cli_version=version))
    got = build_report(suite, _folder(tmp_path, rows))
    assert got.cli_versions == ["2.1.32", "2.1.321"]
    recall = [(m.cli_version, m.recall.k, m.recall.n) for m in got.models]
    assert recall == [("2.1.32", 2, 2), ("2.1.321", 0, 2)]
    md = to_markdown(got)
    assert "| haiku | 2.1.321 | positive | 0/2" in md
