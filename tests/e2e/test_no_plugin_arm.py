"""The no-plugin arm (`--variant none`) through the real CLI: does the behaviour come from the
plugin, or would the model do it anyway?"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from evalkit.suite.config import Suite

if TYPE_CHECKING:
    from conftest import Kit

pytestmark = pytest.mark.e2e

ADR = Path(__file__).resolve().parents[2] / "suites" / "adr-discrimination"
RUNS_TESTS = ADR.parent / "runs-tests"


@pytest.fixture
def adr(new_kit: Callable[..., Kit], tmp_path: Path) -> Kit:
    return new_kit(tmp_path, suite=ADR)


def test_a_grid_with_and_without_the_plugin_verifies_and_compares(adr: Kit) -> None:
    work = adr.base / "w"
    grid = adr.run("grid", str(work), "--models", "policy:oracle",
                   "--scenarios", "P1,N1", "--variants", "suite,none", "--reps", "1",
                   timeout=600)  # fmt: skip
    assert grid.returncode == 0, grid.why()
    rows = adr.tsv(work)
    assert sorted({r["variant"] for r in rows}) == ["none", "suite"]
    for r in rows:
        bare = "required-hooks-not-applied" in r["flags"].split(";")
        assert bare == (r["variant"] == "none"), (r["scenario"], r["model"], r["variant"])
    assert len({r["bundle_id"] for r in rows if r["variant"] == "none"} & {
        r["bundle_id"] for r in rows if r["variant"] == "suite"
    }) == 0
    manifest = [json.loads(x) for x in (work / "manifest.jsonl").read_text().splitlines()]
    neighbours = sorted(n.stock or "" for n in Suite(ADR).config.neighbours)
    for line in manifest:
        flags = line["declarations"]["cli_flags"]
        transcript = (work / line["evidence"] / line["files"]["transcript"]).read_text()
        init = next(json.loads(x) for x in transcript.splitlines() if '"init"' in x)
        loaded = sorted(p["name"] for p in init["plugins"] if p.get("path") != "builtin")
        bare = line["declarations"]["variant"] == "none"
        # the neighbours load in both arms; only the subject is left out of the bare one
        assert flags.count("--plugin-dir") == len(neighbours) + (0 if bare else 1)
        assert loaded == sorted(neighbours + ([] if bare else ["os-adr"])), line["evidence"]
    verified = adr.run("verify", str(work), timeout=600)
    assert verified.returncode == 0, verified.why()
    assert verified.stdout.strip().splitlines()[-1].startswith("PUBLISHABLE"), verified.why()
    report = json.loads(adr.run("report", str(work), "--format", "json").stdout)
    assert sorted(s["variant"] for s in report["subjects"]) == ["none", "suite"]
    assert sorted(m["variant"] for m in report["models"]) == ["none", "suite"]
    page = adr.run("report", str(work), "--html", str(adr.base / "page.html"))
    assert page.returncode == 0, page.why()
    compared = adr.run("compare", str(work), "--a", "variant:none", "--b", "variant:suite")
    assert compared.returncode == 0, compared.why()
    assert "recall" in compared.stdout and "specificity" in compared.stdout
    assert "95% interval" in compared.stdout


def test_calibrate_holds_the_policies_to_their_verdicts_without_the_plugin(
    new_kit: Callable[..., Kit], tmp_path: Path
) -> None:
    kit = new_kit(tmp_path, suite=RUNS_TESTS)
    work = kit.base / "cal"
    done = kit.run("calibrate", str(work), "--variant", "none", "--policies",
                   "oracle,never-act", timeout=600)  # fmt: skip
    assert done.returncode == 0, done.why()
    rows = kit.tsv(work)
    assert {r["variant"] for r in rows} == {"none"} and len(rows) == 8
    assert all("required-hooks-not-applied" in r["flags"] for r in rows)
    verified = kit.run("verify", str(work), timeout=600)
    assert verified.returncode == 0, verified.why()
