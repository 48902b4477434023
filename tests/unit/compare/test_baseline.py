"""`evalkit suite baseline` and `compare B` against it, on fabricated folders that verify for
real."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

import evalkit.cli.main  # noqa: F401  (registers every command)
from evalkit.cli.main import app
from evalkit.compare.baseline import choose_baseline
from evalkit.errors import RefusedError
from evalkit.models import PlanCell, ResultRow
from evalkit.records.folder.results import append_row
from evalkit.records.folder.workdir import Workdir
from evalkit.records.verify.record import read_verification
from evalkit.run.context import record_plan
from evalkit.suite.config import Suite
from evalkit.suite.lock import ensure_frozen, freeze, lock_state, read_lock, record_baseline
from evalkit.suite.subject import build_subject
from tests.unit.records.folder import context, record_rep
from tests.unit.suite.test_suite_loading import copy_suite

pytestmark = pytest.mark.heavy

runner = CliRunner()
WIDE = {"COLUMNS": "200"}
SCENARIOS = ("P1-L1-reporting",)
VARIANTS = "\nvariants:\n  terse: {}\n"


def _record(suite: Suite, work: Path, run_id: str, variant: str = "suite") -> None:
    ctx = context(suite, work, run_id)
    ctx.subject = build_subject(suite, None, variant)
    cells = [PlanCell(scenario=s, model="policy:oracle", reps=1) for s in SCENARIOS]
    record_plan(ctx, cells, "fabricated")
    for scenario in SCENARIOS:
        record_rep(ctx, scenario, "policy:oracle", 1)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A frozen suite with a variant, `results/base` (its own wording) and `mixed` (both)."""
    base = tmp_path_factory.mktemp("world")
    root = copy_suite(base)
    with (root / "evalkit.yaml").open("a") as fh:
        fh.write(VARIANTS)
    suite = Suite(root)
    freeze(suite)
    _record(suite, root / "results/base", "r1")
    _record(suite, base / "mixed", "r2")
    _record(suite, base / "mixed", "r3", "terse")
    return base


@pytest.fixture
def world(made: Path, tmp_path: Path) -> Path:
    shutil.copytree(made, tmp_path / "w")
    return tmp_path / "w"


def evalkit(world: Path, *args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["--suite", str(world / "suite"), *args], env=WIDE)
    return result.exit_code, result.stdout, result.stderr


def test_a_publishable_folder_is_recorded_and_a_run_still_runs(world: Path) -> None:
    code, out, err = evalkit(world, "suite", "baseline", str(world / "suite/results/base"))
    assert code == 0, err
    suite = Suite(world / "suite")
    recorded = read_lock(suite).baseline  # type: ignore[union-attr]
    assert recorded is not None and recorded.workdir == "results/base"
    assert (recorded.variant, recorded.rows, recorded.models) == ("suite", 1, ["policy:oracle"])
    assert len(recorded.subject_hashes) == 1 and recorded.bundle_ids
    assert lock_state(suite) == "frozen"
    ensure_frozen(suite)
    freeze(suite)
    assert read_lock(suite).baseline == recorded  # type: ignore[union-attr]
    shown = evalkit(world, "suite", "baseline")[1]
    assert "folder: results/base" in shown and "variant: suite" in shown


def test_recording_a_baseline_leaves_the_folder_verified_for_report(world: Path) -> None:
    work = world / "suite/results/base"
    assert evalkit(world, "suite", "baseline", str(work))[0] == 0
    records = Workdir(work)
    state = read_verification(
        Suite(world / "suite"), records, records.read_plans().items,
        records.read_evidence_index().items,
    )  # fmt: skip
    assert state.state == "fresh" and state.record is not None and state.record.publishable


def test_a_folder_outside_the_suite_is_recorded_by_its_resolved_path(world: Path) -> None:
    suite = Suite(world / "suite")
    chosen = choose_baseline(suite, world / "suite/../mixed", "terse")
    assert chosen.workdir == str((world / "mixed").resolve()) and chosen.variant == "terse"


def test_a_baseline_given_relative_from_outside_the_suite_is_found_from_anywhere(
    world: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(world)
    code, _, err = evalkit(world, "suite", "baseline", "mixed", "--variant", "suite")
    assert code == 0, err
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, out, err = evalkit(
        world, "compare", str(world / "mixed"), "--b", "variant:terse", "--format", "json"
    )
    assert code == 0, err
    assert json.loads(out)["a"]["baseline"]


def test_a_folder_that_is_not_publishable_is_refused_naming_why(world: Path) -> None:
    work = world / "suite/results/base"
    append_row(
        work / "results.tsv",
        ResultRow(scenario="N1-L1-reporting", model="m", a="A:PASS", b="B:n/a", verdict="PASS",
                  reasons="-"),
    )  # fmt: skip
    code, _, err = evalkit(world, "suite", "baseline", str(work))
    assert code == 2 and err.count("\n") == 1
    assert "not PUBLISHABLE" in err and "row(s) without evidence" in err
    assert read_lock(Suite(world / "suite")).baseline is None  # type: ignore[union-attr]


def test_a_folder_of_another_suite_is_refused(world: Path) -> None:
    work = world / "suite/results/base"
    plans = (work / "plans.jsonl").read_text().replace('"suite":"', '"suite":"other-')
    (work / "plans.jsonl").write_text(plans)
    with pytest.raises(RefusedError, match="not of suite"):
        choose_baseline(Suite(world / "suite"), work)


def test_a_folder_of_two_variants_needs_one_named(world: Path) -> None:
    code, _, err = evalkit(world, "suite", "baseline", str(world / "mixed"))
    assert code == 2 and "holds variants suite, terse" in err and "--variant" in err
    assert evalkit(world, "suite", "baseline", str(world / "mixed"), "--variant", "terse")[0] == 0


def test_clear_removes_the_baseline(world: Path) -> None:
    assert evalkit(world, "suite", "baseline", str(world / "suite/results/base"))[0] == 0
    assert evalkit(world, "suite", "baseline", "--clear")[0] == 0
    assert read_lock(Suite(world / "suite")).baseline is None  # type: ignore[union-attr]
    assert "no baseline recorded" in evalkit(world, "suite", "baseline")[1]


def test_compare_with_one_folder_and_no_baseline_says_how_to_record_one(world: Path) -> None:
    code, _, err = evalkit(world, "compare", str(world / "mixed"), "--b", "variant:terse")
    assert code == 2 and err.count("\n") == 1 and "evalkit suite baseline WORKDIR" in err


def test_compare_with_one_folder_takes_the_baseline_as_a(world: Path) -> None:
    assert evalkit(world, "suite", "baseline", str(world / "suite/results/base"))[0] == 0
    code, out, err = evalkit(
        world, "compare", str(world / "mixed"), "--b", "variant:terse", "--format", "json"
    )
    assert code == 0, err
    got = json.loads(out)
    assert (
        got["a"]["baseline"] and got["a"]["rows"] == 1 and got["a"]["selector"] == "variant:suite"
    )
    assert got["b"]["rows"] == 1 and got["differing"] == ["subject"]


def test_a_baseline_folder_that_is_gone_is_named(world: Path) -> None:
    assert evalkit(world, "suite", "baseline", str(world / "suite/results/base"))[0] == 0
    shutil.rmtree(world / "suite/results/base")
    code, _, err = evalkit(world, "compare", str(world / "mixed"), "--b", "variant:terse")
    assert code == 2 and err.count("\n") == 1 and "no longer exists" in err
    assert "evalkit suite baseline WORKDIR --replace" in err


def test_a_baseline_folder_that_gained_rows_is_named(world: Path) -> None:
    suite = Suite(world / "suite")
    record_baseline(suite, choose_baseline(suite, world / "suite/results/base"))
    _record(suite, world / "suite/results/base", "r9")
    code, _, err = evalkit(world, "compare", str(world / "mixed"), "--b", "variant:terse")
    assert (
        code == 2
        and "no longer holds what was recorded" in err
        and "1 row(s) recorded, 2 now" in err
    )


def test_a_set_tuned_for_one_variant_is_labelled_on_that_side_only(world: Path) -> None:
    code, out, err = evalkit(
        world, "suite", "contaminate", "--set", "run", "--variant", "terse", "--note", "tuned terse"
    )
    assert code == 0 and "for variant terse" in out, err
    code, out, err = evalkit(world, "compare", str(world / "mixed"), "--a", "variant:suite",
                             "--b", "variant:terse", "--format", "json")  # fmt: skip
    assert code == 0, err
    sides = json.loads(out)
    assert sides["a"]["sets"] == {"run": "measurement", "reserve": "held"}
    assert sides["b"]["sets"] == {"run": "training-set", "reserve": "measurement"}


def test_contaminating_for_an_unknown_variant_is_refused(world: Path) -> None:
    code, _, err = evalkit(
        world, "suite", "contaminate", "--set", "run", "--variant", "nope", "--note", "x"
    )
    assert code == 2 and "--variant nope" in err and "suite, terse" in err


def test_a_recorded_baseline_is_replaced_only_with_replace(world: Path) -> None:
    assert evalkit(world, "suite", "baseline", str(world / "suite/results/base"))[0] == 0
    first = read_lock(Suite(world / "suite")).baseline  # type: ignore[union-attr]
    code, _, err = evalkit(world, "suite", "baseline", str(world / "mixed"), "--variant", "terse")
    assert code == 2 and err.count("\n") == 1, err
    assert "results/base" in err and "--replace" in err
    assert read_lock(Suite(world / "suite")).baseline == first  # type: ignore[union-attr]
    code, _, err = evalkit(
        world, "suite", "baseline", str(world / "mixed"), "--variant", "terse", "--replace"
    )
    assert code == 0, err
    now = read_lock(Suite(world / "suite")).baseline  # type: ignore[union-attr]
    assert now is not None and now.variant == "terse"


def test_a_baseline_whose_rows_were_edited_since_is_refused(world: Path) -> None:
    work = world / "suite/results/base"
    assert evalkit(world, "suite", "baseline", str(work))[0] == 0
    tsv = work / "results.tsv"
    tsv.write_text(tsv.read_text().replace("\tPASS\t", "\tFAIL\t"))
    code, out, err = evalkit(world, "compare", str(world / "mixed"), "--b", "variant:terse")
    assert code == 2 and err.count("\n") == 1, out + err
    assert "results/base" in err and "evalkit verify" in err


def test_a_baseline_verified_again_after_an_edit_is_refused_by_its_key(world: Path) -> None:
    """Evidence edited in a way that still verifies moves the key: the baseline recorded
    before is not the folder now, though a fresh verify calls it PUBLISHABLE."""
    work = world / "suite/results/base"
    assert evalkit(world, "suite", "baseline", str(work))[0] == 0
    recorded = read_lock(Suite(world / "suite")).baseline  # type: ignore[union-attr]
    assert recorded is not None and recorded.key
    (work / "subjects" / "note.txt").write_text("added after the baseline\n")
    assert evalkit(world, "verify", str(work))[0] == 0
    code, out, err = evalkit(world, "compare", str(world / "mixed"), "--b", "variant:terse")
    assert code == 2 and err.count("\n") == 1, out + err
    assert "changed since it was recorded" in err and "--replace" in err


def test_a_baseline_recorded_without_a_key_is_refused(world: Path) -> None:
    suite = Suite(world / "suite")
    chosen = choose_baseline(suite, world / "suite/results/base")
    record_baseline(suite, chosen.model_copy(update={"key": {}}))
    code, _, err = evalkit(world, "compare", str(world / "mixed"), "--b", "variant:terse")
    assert code == 2 and err.count("\n") == 1 and "--replace" in err


def test_a_variant_whose_wording_changed_between_runs_is_refused_as_a_baseline(
    world: Path,
) -> None:
    suite = Suite(world / "suite")
    work = world / "two-wordings"
    _record(suite, work, "r4")
    skill = world / "suite/fixtures/plugins/os-vault/skills/write/SKILL.md"
    skill.write_text(skill.read_text() + "\nWrite the note before you finish.\n")
    _record(Suite(world / "suite"), work, "r5")
    code, _, err = evalkit(world, "suite", "baseline", str(work))
    assert code == 2 and err.count("\n") == 1, err
    assert "variant suite ran under 2 wordings" in err
