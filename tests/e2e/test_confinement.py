"""Reps run confined by default; where they cannot be, nothing runs unless --unconfined says
so, and then every row, verify and report say it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e.conftest import Kit

pytestmark = pytest.mark.e2e


def _path_without_bwrap(kit: Kit) -> str:
    """A PATH with every tool of this machine's PATH except bwrap."""
    bin_dir = kit.base / "no-bwrap-bin"
    bin_dir.mkdir()
    for folder in os.environ["PATH"].split(os.pathsep):
        if not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            if name != "bwrap" and not (bin_dir / name).exists():
                (bin_dir / name).symlink_to(Path(folder) / name)
    return str(bin_dir)


def test_without_bwrap_run_refuses_in_one_line_and_plans_nothing(kit: Kit) -> None:
    kit.extra_env["PATH"] = _path_without_bwrap(kit)
    work = kit.base / "work"
    done = kit.run("run", "P1", "policy:oracle", str(work))
    assert done.returncode == 2, done.why()
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.why()
    assert "bubblewrap" in done.stderr and "--unconfined" in done.stderr, done.why()
    assert not work.exists(), "a refused run left files"


def test_unconfined_runs_flags_every_row_and_is_never_publishable(kit: Kit) -> None:
    kit.extra_env["PATH"] = _path_without_bwrap(kit)
    work = kit.base / "work"
    done = kit.run("run", "P1", "policy:oracle", str(work), "--reps", "2", "--unconfined")
    assert done.returncode == 0, done.why()
    assert "UNCONFINED" in done.stderr, done.why()
    rows = kit.tsv(work)
    assert [r["verdict"] for r in rows] == ["PASS", "PASS"], rows
    assert all("unconfined" in r["flags"].split(";") for r in rows), rows
    lines = kit.manifest(work)
    assert {x["declarations"]["confinement"] for x in lines} == {"none"}
    verify = kit.run("verify", str(work))
    assert "NOT PUBLISHABLE" in verify.stdout, verify.why()
    assert "2 row(s) ran unconfined" in verify.stdout, verify.why()
    assert all(x["run_id"] in verify.stdout for x in lines), verify.why()
    page = kit.base / "report.html"
    report = kit.run("report", str(work), "--html", str(page))
    assert "UNCONFINED: 2 row(s)" in report.stdout, report.why()
    assert "NOT PUBLISHABLE" in report.stdout, report.why()
    html = page.read_text(encoding="utf-8")
    assert '"unconfined": 2' in html or '"unconfined":2' in html, "the page's data lacks it"
    assert "id: 'unconfined'" in html, "the page has no unconfined banner"


def test_a_confined_rep_records_what_it_could_reach(kit: Kit) -> None:
    work = kit.base / "work"
    done = kit.run("run", "P1", "policy:oracle", str(work))
    assert done.returncode == 0, done.why()
    rows = kit.tsv(work)
    assert [r["verdict"] for r in rows] == ["PASS"], rows
    assert "unconfined" not in rows[0]["flags"].split(";")
    line = kit.manifest(work)[0]
    assert line["declarations"]["confinement"] == "bwrap"
    import json

    process = json.loads((work / line["evidence"] / "process.json").read_text())
    reach = process["reach"]
    assert reach["confined"] is True
    assert str(kit.suite) in reach["hidden"] and str(work) in reach["hidden"]
    assert not any(str(kit.home) == p or p.startswith(str(kit.home) + "/")
                   for p in reach["writable"] + reach["readable"])  # fmt: skip
