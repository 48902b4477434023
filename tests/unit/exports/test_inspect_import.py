"""`import inspect`: an Inspect AI log (made here with Inspect's own API) read into a results
folder that `report` and `compare` read, labelled imported and never PUBLISHABLE, and refused
in one line where the log cannot say what evalkit needs."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from evalkit.cli.main import app
from evalkit.compare.compare import compare
from evalkit.compare.sides import load_side
from evalkit.errors import ConfigError, RefusedError
from evalkit.exports.inspect_import import import_inspect_log
from evalkit.exports.inspect_log import write_inspect_log
from evalkit.records.folder.imported import IMPORTED_REASON, is_imported
from evalkit.records.folder.results import read_rows
from evalkit.records.report.build import build_report
from evalkit.records.verify.record import verify_and_record
from evalkit.suite.config import Suite
from tests.conftest import REPO
from tests.unit.exports.conftest import MODEL, NEGATIVE, POSITIVE

pytestmark = pytest.mark.heavy

KEY = "truth"
SAMPLES: list[tuple[str, int, str, Any]] = [
    (POSITIVE, 1, "positive", "C"),
    (POSITIVE, 2, "positive", "I"),
    (POSITIVE, 3, "positive", None),
    (NEGATIVE, 1, "negative", 1.0),
]
"""(id, epoch, polarity, score value; None for a sample that errored)"""


def fabricated_log(path: Path, samples: list[tuple[str, int, Any, Any]] = SAMPLES,
                   model: str = MODEL, key: str = KEY) -> Path:  # fmt: skip
    """An Inspect log as another tool would write it: one `correct` score per sample."""
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalError,
        EvalLog,
        EvalSample,
        EvalSpec,
        write_eval_log,
    )
    from inspect_ai.scorer import Score

    made = []
    for sample_id, epoch, polarity, value in samples:
        meta = {key: polarity} if polarity is not None else {}
        error = None if value is not None else EvalError(message="boom", traceback="",
                                                          traceback_ansi="")  # fmt: skip
        scores = {"correct": Score(value=value)} if value is not None else None
        made.append(EvalSample(id=sample_id, epoch=epoch, input="a prompt", target="",
                               metadata=meta, scores=scores, error=error))  # fmt: skip
    spec = EvalSpec(created="2025-01-01T00:00:00+00:00", task="elsewhere", model=model,
                    dataset=EvalDataset(name="elsewhere"), config=EvalConfig())  # fmt: skip
    write_eval_log(EvalLog(eval=spec, status="success", samples=made), str(path))
    return path


@pytest.fixture(scope="module")
def imported(suite: Suite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("imported")
    out = base / "folder"
    import_inspect_log(suite, fabricated_log(base / "other.eval"), KEY, out)
    return out


def test_each_sample_is_a_row_by_scenario_and_rep_with_its_verdict(imported: Path) -> None:
    rows = read_rows(imported / "results.tsv")
    got = sorted((r.scenario, r.rep, r.verdict) for r in rows)
    assert got == sorted([(POSITIVE, 1, "PASS"), (POSITIVE, 2, "FAIL"), (POSITIVE, 3, "ERROR"),
                          (NEGATIVE, 1, "PASS")])  # fmt: skip


def test_every_row_is_flagged_imported(imported: Path) -> None:
    rows = read_rows(imported / "results.tsv")
    assert all(IMPORTED_REASON in r.flags.split(";") for r in rows)
    assert is_imported(imported)


def test_report_says_not_publishable_naming_the_import_first(suite: Suite, imported: Path) -> None:
    trust = build_report(suite, imported).publishability
    assert not trust.publishable
    assert trust.problems[0].startswith(f"{IMPORTED_REASON}:")


def test_verify_says_imported_and_records_nothing_in_the_folder(
    suite: Suite, imported: Path
) -> None:
    found = verify_and_record(suite, imported)
    assert not found.publishable and not found.all_rederived
    assert found.publish_problems[0].startswith(f"{IMPORTED_REASON}:")
    assert not (imported / "verified.json").exists()


def test_compare_reads_two_imported_folders_cell_by_cell(
    suite: Suite, imported: Path, tmp_path: Path
) -> None:
    passing = [(s, e, p, "C") for s, e, p, _ in SAMPLES]
    other = tmp_path / "other"
    import_inspect_log(suite, fabricated_log(tmp_path / "b.eval", passing), KEY, other)
    built = compare(suite, load_side("A", imported), load_side("B", other))
    recall = [e for e in built.comparisons if e.measure == "recall"]
    assert recall and all((e.a.n, e.b.n) == (3, 3) for e in recall)
    labelled = [n.split(":")[1].split()[0] for n in built.notes if n.startswith("IMPORTED:")]
    assert labelled == ["A", "B"]


def test_gate_refuses_an_imported_folder_in_one_line(imported: Path, recorded: Path) -> None:
    args = ["--suite", str(REPO), "gate", str(recorded), str(imported)]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and "imported" in lines[0]


def test_the_imported_folder_is_left_read_only(imported: Path) -> None:
    modes = [p.stat().st_mode for p in [imported, *imported.iterdir()]]
    assert not any(mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) for mode in modes)


def test_a_sample_without_the_polarity_key_is_refused(suite: Suite, tmp_path: Path) -> None:
    log = fabricated_log(tmp_path / "x.eval", [(POSITIVE, 1, None, "C")])
    with pytest.raises(ConfigError, match="no metadata key 'truth'"):
        import_inspect_log(suite, log, KEY, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_polarity_neither_positive_nor_negative_is_refused(suite: Suite, tmp_path: Path) -> None:
    log = fabricated_log(tmp_path / "x.eval", [(POSITIVE, 1, "maybe", "C")])
    with pytest.raises(ConfigError, match="neither positive nor negative"):
        import_inspect_log(suite, log, KEY, tmp_path / "out")


def test_a_polarity_the_suite_states_otherwise_is_refused(suite: Suite, tmp_path: Path) -> None:
    log = fabricated_log(tmp_path / "x.eval", [(POSITIVE, 1, "negative", "C")])
    with pytest.raises(RefusedError, match="the suite's scenario positive"):
        import_inspect_log(suite, log, KEY, tmp_path / "out")


def test_a_log_naming_two_models_is_refused(suite: Suite, tmp_path: Path) -> None:
    log = fabricated_log(tmp_path / "x.eval", [(POSITIVE, 1, "positive", "C")])
    from inspect_ai.log import read_eval_log, write_eval_log

    read = read_eval_log(str(log))
    for sample in read.samples or []:
        sample.metadata["model"] = "another-model"
    write_eval_log(read, str(log))
    with pytest.raises(RefusedError, match="2 models"):
        import_inspect_log(suite, log, KEY, tmp_path / "out")


def test_the_cli_refuses_a_missing_polarity_key_in_one_line(tmp_path: Path) -> None:
    log = fabricated_log(tmp_path / "x.eval", [(POSITIVE, 1, None, "C")])
    args = ["--suite", str(REPO), "import", "inspect", str(log), "--polarity-key", KEY,
            "--out", str(tmp_path / "out")]  # fmt: skip
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1


def test_an_export_imports_back_to_the_same_verdicts(
    suite: Suite, recorded: Path, tmp_path: Path
) -> None:
    log = tmp_path / "round.eval"
    write_inspect_log(suite, recorded, log)
    import_inspect_log(suite, log, "polarity", tmp_path / "back")
    before = sorted(
        (r.scenario, r.rep, r.verdict, r.a, r.b) for r in read_rows(recorded / "results.tsv")
    )
    after = sorted((r.scenario, r.rep, r.verdict, r.a, r.b)
                   for r in read_rows(tmp_path / "back" / "results.tsv"))  # fmt: skip
    assert before == after
