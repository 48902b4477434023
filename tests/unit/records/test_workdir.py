"""The results folder's owner: its counts, its appends and its refusals, on fabricated folders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evalkit.errors import ConfigError, RefusedError
from evalkit.models import EvidenceLine, Plan, PlanCell, ResultRow
from evalkit.records.folder.results import append_row, read_results
from evalkit.records.folder.workdir import Workdir, grid_gaps, tally
from evalkit.run.context import RunContext, record_plan
from evalkit.suite.config import Suite


def _row(scenario: str = "P1-L1-reporting", rep: int = 1, run_id: str = "r1") -> ResultRow:
    return ResultRow(
        scenario=scenario,
        model="m",
        a="A:PASS",
        b="B:PASS",
        verdict="PASS",
        reasons="-",
        rep=rep,
        run_id=run_id,
    )


def _plan(run_id: str, *cells: tuple[str, str, int], suite: str = "") -> Plan:
    return Plan(
        run_id=run_id,
        created="2026-01-01T00:00:00+00:00",
        command="test",
        cells=[PlanCell(scenario=s, model=m, reps=n) for s, m, n in cells],
        suite=suite,
    )


def _ctx(suite: Suite, work: Path, **kw: object) -> RunContext:
    return RunContext(suite=suite, workdir=work, results=work / "results.tsv", run_id="r9", **kw)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- the one count


def test_tally_counts_each_plan_cell_and_names_its_unrecorded_reps() -> None:
    plans = [_plan("r1", ("P1", "m", 3), ("N1", "m", 1)), _plan("r2", ("P1", "m", 2))]
    recorded = [("r1", "P1", "m", 1), ("r1", "P1", "m", 3), ("r2", "P1", "m", 1)]
    recorded += [("r2", "P1", "m", 2), ("r3", "P2", "m", 1)]
    got = {(c.run_id, c.scenario): c for c in tally(plans, recorded)}
    assert (got[("r1", "P1")].planned, got[("r1", "P1")].recorded) == (3, 2)
    assert got[("r1", "P1")].unrecorded == (2,)
    assert got[("r1", "N1")].unrecorded == (1,) and not got[("r1", "N1")].complete
    assert got[("r2", "P1")].complete
    assert (got[("r3", "P2")].planned, got[("r3", "P2")].recorded) == (0, 1)


def _shard(shard: str, run_id: str = "rg", *reps: int, total: int = 4) -> Plan:
    return Plan(
        run_id=run_id,
        created="2026-01-01T00:00:00+00:00",
        command="grid",
        cells=[PlanCell(scenario="P1", model="m", reps=len(reps), rep_numbers=list(reps))],
        grid_digest="grid-g",
        shard=shard,
        grid_cells=total,
    )


def test_a_whole_sharded_grid_has_no_gaps_and_an_unsharded_plan_is_not_held_to_one() -> None:
    assert grid_gaps([_shard("1/2", "rg", 1, 3), _shard("2/2", "rg", 2, 4), _plan("r1")]) == []


def test_a_grid_missing_a_shard_names_it_and_what_was_never_planned() -> None:
    assert grid_gaps([_shard("1/2", "rg", 1, 3)]) == [
        "grid grid-g: missing shard(s) 2/2: 2 of its 4 rep(s) not planned here"
    ]


def test_a_shard_planned_short_of_its_grid_is_named_unless_the_plan_predates_the_count() -> None:
    assert grid_gaps([_shard("1/2", "rg", 1), _shard("2/2", "rg", 2, 4)]) == [
        "grid grid-g: 3 of its 4 rep(s) planned"
    ]
    old = [_shard("1/2", "rg", 1, total=0), _shard("2/2", "rg", 2, 4, total=0)]
    assert grid_gaps(old) == []


def test_shards_cut_with_different_n_are_not_one_grid() -> None:
    got = grid_gaps([_shard("1/2", "rg", 1, 3), _shard("2/3", "rg", 2)])
    assert got == ["grid grid-g: shards cut with different N (1/2, 2/3); they are not slices "
                   "of one grid"]  # fmt: skip


def test_one_shard_under_two_run_ids_is_named() -> None:
    plans = [_shard("1/2", "ra", 1, 3), _shard("2/2", "ra", 2, 4), _shard("1/2", "rb", 1, 3)]
    assert grid_gaps(plans) == [
        "grid grid-g: shard 1/2 under 2 run ids (ra, rb); a rep of a grid counts once"
    ]


# --------------------------------------------------------------------------- torn last lines


def test_a_row_appended_after_a_torn_last_line_is_whole(tmp_path: Path) -> None:
    results = tmp_path / "results.tsv"
    append_row(results, _row(rep=1))
    append_row(results, _row(rep=2))
    data = results.read_bytes()
    results.write_bytes(data[:-60])
    append_row(results, _row(rep=3))
    read = read_results(results)
    assert [(r.scenario, r.rep) for r in read.plain_rows] == [
        ("P1-L1-reporting", 1),
        ("P1-L1-reporting", 3),
    ]
    [problem] = read.problems
    assert problem.startswith("results.tsv:3: "), problem


def test_a_manifest_line_appended_after_a_torn_one_is_whole(tmp_path: Path) -> None:
    records = Workdir(tmp_path)
    line = EvidenceLine(
        run_id="r1",
        scenario="P1",
        model="m",
        rep=1,
        evidence="e",
        files={},
        declarations={},
        bundle_id="b",
        verdict="PASS",
    )
    records.append_evidence_line(line)
    records.evidence_index.write_bytes(records.evidence_index.read_bytes()[:-100])
    records.append_evidence_line(line.model_copy(update={"rep": 2}))
    read = records.read_evidence_index()
    assert [x.rep for x in read.items] == [2]
    assert read.problems == ["manifest.jsonl:1: unreadable manifest line"]


# --------------------------------------------------------------------------- not ours


def test_a_file_that_is_not_an_evalkit_results_file_is_never_appended_to(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("my important notes\n")
    with pytest.raises(ConfigError, match="not an evalkit results file"):
        append_row(notes, _row())
    assert notes.read_text() == "my important notes\n"


def test_a_results_file_with_a_wrong_header_is_never_appended_to(tmp_path: Path) -> None:
    results = tmp_path / "results.tsv"
    results.write_text("scenario\tmodel\tverdict\nP1\tm\tPASS\n")
    with pytest.raises(ConfigError, match="not an evalkit results file"):
        append_row(results, _row())
    assert results.read_text() == "scenario\tmodel\tverdict\nP1\tm\tPASS\n"


def test_an_empty_file_takes_the_header_and_the_row(tmp_path: Path) -> None:
    results = tmp_path / "results.tsv"
    results.write_text("")
    append_row(results, _row())
    assert [r.rep for r in read_results(results).plain_rows] == [1]


# --------------------------------------------------------------------------- before planning


def test_a_results_file_that_is_a_folder_is_refused_before_planning(
    suite: Suite, tmp_path: Path
) -> None:
    (tmp_path / "results.tsv").mkdir()
    with pytest.raises(ConfigError, match="is a folder"):
        _ctx(suite, tmp_path).check_records()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_an_unwritable_results_file_is_refused_before_planning(
    suite: Suite, tmp_path: Path
) -> None:
    results = tmp_path / "results.tsv"
    append_row(results, _row())
    results.chmod(0o444)
    with pytest.raises(ConfigError, match="not writable"):
        _ctx(suite, tmp_path).check_records()


def test_a_workdir_that_is_a_file_is_refused_before_planning(suite: Suite, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.write_text("")
    with pytest.raises(ConfigError, match="is a file"):
        _ctx(suite, work).check_records()


def test_a_folder_recorded_for_another_suite_is_refused(suite: Suite, tmp_path: Path) -> None:
    Workdir(tmp_path).append_plan(_plan("r1", ("P1", "m", 1), suite="adr-discrimination"))
    with pytest.raises(RefusedError, match="adr-discrimination"):
        _ctx(suite, tmp_path).check_records()


def test_a_plan_names_its_suite(suite: Suite, tmp_path: Path) -> None:
    ctx = _ctx(suite, tmp_path)
    record_plan(ctx, [PlanCell(scenario="P1-L1-reporting", model="m", reps=1)], "run")
    [plan] = Workdir(tmp_path).read_plans().items
    assert plan.suite == suite.name
    ctx.check_records()


# --------------------------------------------------------------------------- garbage lines


def test_a_garbage_plan_line_is_named_and_the_others_read(tmp_path: Path) -> None:
    records = Workdir(tmp_path)
    records.append_plan(_plan("r1", ("P1", "m", 1)))
    with records.plans.open("a") as fh:
        fh.write("{not json\n")
    records.append_plan(_plan("r2", ("P1", "m", 1)))
    read = records.read_plans()
    assert [p.run_id for p in read.items] == ["r1", "r2"]
    assert read.problems == ["plans.jsonl:2: unreadable plan line"]


def test_an_evidence_folder_is_claimed_once(tmp_path: Path) -> None:
    records = Workdir(tmp_path)
    folder = records.claim_evidence_folder("r1", "P1", "policy:oracle", 1)
    assert folder.is_dir() and folder.name == "rep-1"
    with pytest.raises(ConfigError, match="already exists"):
        records.claim_evidence_folder("r1", "P1", "policy:oracle", 1)


def test_the_evidence_listing_is_every_file_by_path_size_and_time_in_a_fixed_order(
    tmp_path: Path,
) -> None:
    """The key a verification record holds: one line per file, `path NUL size NUL mtime_ns`,
    a folder's files (sorted) before its subfolders (sorted), evidence/ then subjects/. A
    record written by an earlier evalkit stays fresh only while this format holds."""
    import hashlib

    work = tmp_path / "w"
    for rel, text in {
        "evidence/r1/P1/m/rep-1/transcript.jsonl": "a\n",
        "evidence/r1/P1/m/rep-1/z.diff": "zz",
        "evidence/r1/P1/m/rep-10/check.json": "{}",
        "evidence/r1/P1/m/top.txt": "t",
        "evidence/r1/N1/m/rep-1/check.json": "{ }",
        "subjects/sha256-1/SKILL.md": "s",
    }.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text)
    (work / "evidence" / "r1" / "P1" / "m" / "rep-1" / "link").symlink_to("z.diff")
    expected = hashlib.sha256()
    for folder in ("evidence", "subjects"):
        for dirpath, dirnames, filenames in os.walk(work / folder):
            dirnames.sort()
            for name in sorted(filenames):
                info = os.lstat(os.path.join(dirpath, name))
                rel = os.path.relpath(os.path.join(dirpath, name), work)
                expected.update(f"{rel}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    got = Workdir(work).record_hashes([], [])
    assert got["evidence/ + subjects/"] == "listing:" + expected.hexdigest()


def test_manifest_lines_declaring_the_same_things_share_one_declarations_dict(
    tmp_path: Path,
) -> None:
    """Reps of one bundle declare alike: held once, not once a rep (most of a line's memory
    at 100,000 reps); lines that differ keep their own."""
    records = Workdir(tmp_path / "w")
    records.root.mkdir()
    for rep, model in ((1, "sonnet"), (2, "sonnet"), (3, "haiku")):
        records.append_evidence_line(
            EvidenceLine(
                run_id="r1",
                scenario="P1-L1-reporting",
                model=model,
                rep=rep,
                evidence=f"evidence/r1/P1-L1-reporting/{model}/rep-{rep}",
                files={},
                declarations={"model": model, "fixture_hashes": {"project": "sha256:1"}},
                bundle_id=f"evb-{model}",
                verdict="PASS",
            )  # fmt: skip
        )
    first, second, third = records.read_evidence_index().items
    assert first.declarations is second.declarations
    assert third.declarations is not first.declarations
    assert third.declarations == {"model": "haiku", "fixture_hashes": {"project": "sha256:1"}}
