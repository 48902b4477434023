"""`export --format inspect`: a results folder as an Inspect AI log that Inspect's own API and
its `inspect` command read, one sample per rep, an ERROR errored, and no Task anywhere in it."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from evalkit.cli.main import app
from evalkit.exports.inspect_log import placeholder, write_inspect_log
from evalkit.records.folder.results import read_rows
from evalkit.suite.config import Suite
from evalkit.suite.task import MASK, MIN_MASKED_LINE, read_task
from tests.conftest import REPO
from tests.unit.exports.conftest import MODEL, POSITIVE, REPS

pytestmark = pytest.mark.heavy

INSPECT = Path(sys.executable).parent / "inspect"


def _read(path: Path) -> Any:
    from inspect_ai.log import read_eval_log

    return read_eval_log(str(path))


def _unzipped(path: Path) -> bytes:
    with zipfile.ZipFile(path) as archive:
        return b"\n".join(archive.read(name) for name in archive.namelist())


def test_inspect_reads_the_log_back_with_one_sample_per_rep(exported: Path) -> None:
    samples = _read(exported).samples or []
    assert sorted((str(s.id), s.epoch) for s in samples) == sorted((s, r) for s, r, _ in REPS)


def test_the_inspect_command_dumps_the_log_with_every_sample(exported: Path) -> None:
    done = subprocess.run([str(INSPECT), "log", "dump", str(exported)], capture_output=True,
                          check=False, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.returncode
    dumped = json.loads(done.stdout)
    assert len(dumped["samples"]) == len(REPS)
    assert dumped["eval"]["model"] == MODEL


def test_an_error_rep_is_an_errored_sample_without_a_score(exported: Path) -> None:
    errored = [s for s in _read(exported).samples or [] if s.error is not None]
    assert [(str(s.id), s.epoch) for s in errored] == [(POSITIVE, 3)]
    assert errored[0].scores is None


def test_a_pass_is_a_correct_verdict_score_explained_by_its_reasons(
    exported: Path, recorded: Path
) -> None:
    rows = {(r.scenario, r.rep): r for r in read_rows(recorded / "results.tsv")}
    sample = next(s for s in _read(exported).samples or [] if s.epoch == 1 and s.id == POSITIVE)
    verdict = (sample.scores or {})["verdict"]
    row = rows[(POSITIVE, 1)]
    assert (verdict.value, verdict.answer) == ("C", "PASS")
    assert verdict.explanation == "; ".join(t for t in row.reasons.split(";") if t != "-")
    assert (sample.scores or {})["axis_a"].value == row.a


def test_the_sample_metadata_names_polarity_level_model_agent_and_bundle(
    exported: Path, recorded: Path
) -> None:
    row = next(r for r in read_rows(recorded / "results.tsv") if r.rep == 1)
    sample = next(s for s in _read(exported).samples or [] if s.id == row.scenario and s.epoch == 1)
    meta = sample.metadata
    assert (meta["level"], meta["model"], meta["agent"]) == ("L1", MODEL, "claude")
    assert (meta["bundle_id"], meta["cli_version"]) == (row.bundle_id, row.cli_version)
    assert meta["polarity"] in ("positive", "negative")


def test_the_input_is_a_placeholder_naming_the_scenario_and_the_transcript_follows(
    exported: Path,
) -> None:
    sample = next(s for s in _read(exported).samples or [] if s.id == POSITIVE and s.epoch == 1)
    assert sample.input == placeholder(POSITIVE)
    roles = {m.role for m in sample.messages}
    assert {"user", "assistant", "tool"} <= roles


def test_the_header_names_the_suite_the_lock_and_that_it_is_not_publishable(
    suite: Suite, exported: Path
) -> None:
    log = _read(exported)
    header = (log.eval.metadata or {})["evalkit"]
    assert header["suite"] == suite.name
    assert header["lock"]["state"] in ("frozen", "no-lock", "drifted")
    assert header["publishable"] is False
    assert header["verdict"].startswith("NOT PUBLISHABLE")
    tagged = "NOT-PUBLISHABLE" in (log.eval.tags or [])
    assert tagged


def test_no_task_line_reaches_the_log_though_a_rep_quoted_its_task(
    suite: Suite, quoting: Path, tmp_path: Path
) -> None:
    out = tmp_path / "quoting.eval"
    write_inspect_log(suite, quoting, out)
    data = _unzipped(out)
    lines = [line.strip() for sf in suite.scenarios("all") for line in read_task(sf).splitlines()]
    long = [line for line in lines if len(line) >= MIN_MASKED_LINE]
    spelled = [v for line in long for v in (line, line.upper(), json.dumps(line)[1:-1])]
    leaked = any(text.encode() in data for text in spelled)
    assert long and not leaked
    assert MASK.encode() in data


def test_a_folder_not_publishable_is_said_in_one_line_on_stderr(
    recorded: Path, tmp_path: Path
) -> None:
    out = tmp_path / "cli.eval"
    args = ["--suite", str(REPO), "export", str(recorded), "--format", "inspect", "--out", str(out)]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.exit_code
    said = [line for line in result.stderr.splitlines() if "NOT PUBLISHABLE" in line]
    assert len(said) == 1 and out.is_file()


def test_an_out_path_that_is_not_an_eval_file_is_refused(recorded: Path, tmp_path: Path) -> None:
    out = tmp_path / "log.json"
    args = ["--suite", str(REPO), "export", str(recorded), "--format", "inspect", "--out", str(out)]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_without_inspect_installed_the_export_names_the_install_in_one_line(
    recorded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    out = tmp_path / "none.eval"
    args = ["--suite", str(REPO), "export", str(recorded), "--format", "inspect", "--out", str(out)]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1
    assert "pip install 'heldout-evalkit[inspect]'" in lines[0]
