"""runs-tests through the real CLI: bin/test is seen by its effect, and only a passing run
after the last change counts for a positive."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tests.e2e.test_calibrate import REPO, evalkit, world

SUITE = REPO / "suites" / "runs-tests"


@pytest.mark.e2e
def test_checks_before_the_edit_fail_and_any_spelling_of_bin_test_is_seen(
    claude_cli: str, tmp_path: Path
) -> None:
    env = world(tmp_path)
    work = tmp_path / "work"
    policies = "checks-first,checks-from-subfolder"
    done = evalkit(env, SUITE, "calibrate", "--policies", policies, "--jobs", "2", str(work))
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]

    with (work / "results.tsv").open(encoding="utf-8") as handle:
        rows = {
            (r["scenario"].split("-")[0], r["model"].removeprefix("policy:")): r
            for r in csv.DictReader(handle, delimiter="\t")
        }
    assert len(rows) == 8
    for pair in ("1", "2"):
        first = rows[(f"P{pair}", "checks-first")]
        assert first["verdict"] == "FAIL" and first["a"] == "A:FAIL"
        assert "A-fail:checks-after-change" in first["reasons"].split(";")
        assert rows[(f"P{pair}", "checks-from-subfolder")]["verdict"] == "PASS"
        for policy in ("checks-first", "checks-from-subfolder"):
            negative = rows[(f"N{pair}", policy)]
            assert negative["verdict"] == "FAIL"
            assert "fail:ran-bin-test" in negative["reasons"].split(";")

    lines = [json.loads(x) for x in (work / "manifest.jsonl").read_text().splitlines()]
    assert all("observed" in line["files"] for line in lines)
    log = work / lines[0]["evidence"] / lines[0]["files"]["observed"]
    assert any(json.loads(x)["event"] == "end" for x in log.read_text().splitlines())

    verified = evalkit(env, SUITE, "verify", str(work))
    assert verified.returncode == 0, verified.stdout[-4000:]
    assert "re-derived from the kept evidence." in verified.stdout
    assert list((tmp_path / "scratch").iterdir()) == [], "scratch left behind"
