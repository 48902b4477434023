"""The adr-eval-b suite's content: scenarios, the built code graph, the plugin's graph
lookup, and its self-test.

Task blocks are held out: nothing here prints one or asserts on its wording. The
leak check reads them only to compare, and reports file names, never text.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
import yaml

from evalkit.checkers import reference_for
from evalkit.checkers.adr_eval_b.scoring import RetrievalExpect, WriteExpect
from evalkit.reference.selftest import self_test
from evalkit.run.sandbox import build_sandbox
from evalkit.scoring.topics import topic_matches
from evalkit.suite.config import Suite
from evalkit.suite.task import read_task
from tests.conftest import REPO

ROOT = REPO / "suites" / "adr-eval-b"
PROJECT = ROOT / "fixtures" / "project"
PLUGIN = ROOT / "fixtures" / "plugins" / "os-adr"
GRAPH = PROJECT / "graphify-out" / "graph.json"


@pytest.fixture(autouse=True)
def _no_judge_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ADR_EVAL_JUDGE_CMD", raising=False)


@pytest.fixture(scope="module")
def eval_b() -> Suite:
    suite = Suite(ROOT)
    suite.ensure_built()
    return suite


def records() -> dict[str, dict[str, object]]:
    found = {}
    for path in sorted((PROJECT / "docs" / "adr").glob("[0-9][0-9][0-9][0-9]-*.md")):
        meta = yaml.safe_load(path.read_text(encoding="utf-8").split("---\n")[1])
        found[str(meta["id"])] = meta
    return found


def file_hops(graph: Path) -> dict[str, set[str]]:
    """Files one hop apart in a graphify graph, computed here rather than by the plugin."""
    data = json.loads(graph.read_text(encoding="utf-8"))
    source = {n["id"]: n.get("source_file") or "" for n in data["nodes"]}
    hops: dict[str, set[str]] = defaultdict(set)
    for link in data["links"]:
        a, b = source.get(link["source"], ""), source.get(link["target"], "")
        if a and b and a != b:
            hops[a].add(b)
            hops[b].add(a)
    return hops


def retrievals(suite: Suite) -> list[tuple[str, RetrievalExpect]]:
    return [
        (s.id, suite.checker.expect_for(s))
        for s in suite.scenarios("all")
        if s.scenario.kind == "retrieval"
    ]


# --------------------------------------------------------------------------- shape


def test_seven_scenarios_a_degradation_check_and_a_reserve_of_the_same_shapes(
    eval_b: Suite,
) -> None:
    def shapes(which: str) -> list[str]:
        return sorted(s.id.split("-")[0][0] for s in eval_b.scenarios(which))  # type: ignore[arg-type]

    run = [s.id.split("-")[0] for s in eval_b.scenarios("run")]
    assert sorted(run) == ["D4", "R1", "R2", "R3", "R4", "W1", "W2", "W3"]
    assert shapes("run") == shapes("reserve")
    for s in eval_b.scenarios("all"):
        assert s.scenario.polarity == "positive" and s.scenario.level is None, s.id
        want = "write-trigger" if s.id.startswith("W") else "retrieval"
        assert s.scenario.kind == want, s.id
        assert s.scenario.without == (["graphify-out"] if s.id.startswith("D") else []), s.id


def test_the_hook_is_required_and_the_graph_is_a_declared_build_step(eval_b: Suite) -> None:
    config = eval_b.config
    assert not config.ladder
    assert [(h.event, h.output_contains) for h in config.required_hooks] == [
        ("SessionStart", "os-adr")
    ]
    (step,) = config.build
    assert (step.output, step.canonical) == ("graphify-out", "graphify-graph")
    assert step.command[:2] == ["graphify", "update"]


def test_each_premise_marker_is_in_its_file(eval_b: Suite) -> None:
    for s in eval_b.scenarios("all"):
        path = ROOT / s.scenario.premise.file
        assert s.scenario.premise.marker in path.read_text(encoding="utf-8"), s.id


def test_expectations_point_at_real_records(eval_b: Suite) -> None:
    known = records()
    assert known["0001"]["status"] == "Superseded"
    for sid, expect in retrievals(eval_b):
        for rid in expect.governing:
            assert known[rid]["status"] == "Accepted", f"{sid}: {rid}"
        for rid in expect.distractors:
            assert rid in known, f"{sid}: {rid}"
        assert (PROJECT / expect.touches).is_file(), sid


def test_r2_has_near_misses_and_the_superseded_predecessor(eval_b: Suite) -> None:
    known = records()
    expect = eval_b.checker.expect_for(eval_b.resolve("R2"))
    superseded = [r for r in expect.distractors if known[r]["status"] == "Superseded"]
    near = [r for r in expect.distractors if known[r]["status"] == "Accepted"]
    assert superseded == ["0001"] and known["0001"]["superseded_by"] == expect.governing
    assert 2 <= len(near) <= 3


def test_write_trigger_topics_match_their_own_record_and_no_existing_one(eval_b: Suite) -> None:
    existing = {p: p.read_text(encoding="utf-8") for p in (PROJECT / "docs/adr").glob("0*.md")}
    for s in eval_b.scenarios("all"):
        expect = eval_b.checker.expect_for(s)
        if not isinstance(expect, WriteExpect):
            continue
        cal = reference_for(eval_b.checker).calibration_for(s)
        assert topic_matches(expect.topic_patterns, cal.adr.path, cal.adr.text()), s.id
        for path, text in existing.items():
            assert not topic_matches(expect.topic_patterns, path.name, text), (s.id, path.name)


def test_no_task_leaks_outside_its_scenario_file(eval_b: Suite) -> None:
    owners = {s.id: s.path for s in eval_b.scenarios("all")}
    tasks = {s.id: read_task(s) for s in eval_b.scenarios("all")}
    leaks = []
    for path in ROOT.rglob("*"):
        if not path.is_file() or ".build" in path.parts:
            continue
        text = path.read_bytes().decode("utf-8", "replace")
        leaks += [sid for sid, task in tasks.items() if path != owners[sid] and task[:80] in text]
    assert leaks == [], "Task text found outside its scenario file"


# --------------------------------------------------------------------------- the code graph


def test_the_fixture_project_is_real_code_whose_tests_pass(tmp_path: Path) -> None:
    copy = tmp_path / "project"
    shutil.copytree(PROJECT, copy)
    done = subprocess.run(
        [sys.executable, "-m", "unittest", "-q"], cwd=copy, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_graph_is_built_and_never_committed(eval_b: Suite) -> None:
    tracked = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "suites/adr-eval-b"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert tracked and not [p for p in tracked if "/graphify-out/" in p]
    assert sorted(p.name for p in GRAPH.parent.iterdir()) == ["GRAPH_REPORT.md", "graph.json"]
    ignored = subprocess.run(
        ["git", "-C", str(REPO), "check-ignore", "-q", str(GRAPH)], check=False
    )
    assert ignored.returncode == 0


def test_the_graph_carries_code_not_prose_or_records(eval_b: Suite) -> None:
    data = json.loads(GRAPH.read_text(encoding="utf-8"))
    files = {n.get("source_file") or "" for n in data["nodes"]} - {""}
    assert "taskq/digest.py" in files and "taskq/snapshot.py" in files
    assert [f for f in files if f.endswith(".md") or f.startswith("docs/")] == []


def test_graph_reach_premise_holds_in_the_built_graph(eval_b: Suite) -> None:
    """R4 and its kin: the governing record's path is one hop from the touched file, no
    distractor's is, and nothing governs the touched file itself (no lookup by path)."""
    hops = file_hops(GRAPH)
    known = records()
    checked = 0
    for sid, expect in retrievals(eval_b):
        if "keywords" in expect.reached_by:
            continue
        near = hops[expect.touches]
        for rid in expect.governing:
            paths = set(known[rid]["affected_paths"])  # type: ignore[arg-type]
            assert paths & near, f"{sid}: {rid} is not one hop from {expect.touches}"
            assert expect.touches not in paths, sid
        for rid in expect.distractors:
            paths = set(known[rid]["affected_paths"])  # type: ignore[arg-type]
            assert not paths & near, f"{sid}: distractor {rid} is one hop away"
        for rid, meta in known.items():
            assert expect.touches not in meta["affected_paths"], f"{sid}: {rid} covers it"  # type: ignore[operator]
        checked += 1
    assert checked >= 4


def _adr_find(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-B", str(PLUGIN / "bin" / "adr-find"), "--root", str(root), *args],
        capture_output=True,
        text=True,
    )


def test_adr_find_near_reaches_the_governing_record_only_with_the_graph(
    eval_b: Suite, tmp_path: Path
) -> None:
    with_graph = build_sandbox(eval_b, eval_b.resolve("R4"), tmp_path / "r4")
    without = build_sandbox(eval_b, eval_b.resolve("D4"), tmp_path / "d4")
    assert with_graph.scenario and without.scenario
    found = _adr_find(tmp_path / "r4" / "project", "--near", "taskq/digest.py")
    assert found.returncode == 0
    assert [line[:4] for line in found.stdout.splitlines() if line[:4].isdigit()] == ["0010"]
    assert not (tmp_path / "d4" / "project" / "graphify-out").exists()
    missing = _adr_find(tmp_path / "d4" / "project", "--near", "taskq/digest.py")
    assert missing.returncode == 2 and "no code graph" in missing.stderr
    by_path = _adr_find(tmp_path / "r4" / "project", "--path", "taskq/digest.py")
    assert by_path.stdout.strip() == "no matching ADRs"


def test_the_lock_records_the_graph_and_graphify_version(eval_b: Suite) -> None:
    hashes = eval_b.built_hashes()
    assert hashes["built:code-graph"].startswith("sha256:")
    assert hashes["built:code-graph:tool"].startswith("graphify 0.9.96")


# --------------------------------------------------------------------------- self-test


# A whole-suite calibration, in process: `make calibrate-suites` runs it (CI does too).
@pytest.mark.slow
def test_every_self_test_cell_comes_out_as_designed(eval_b: Suite) -> None:
    cells = self_test(eval_b)
    wrong = [(c.scenario, c.case, c.verdict.verdict, c.verdict.reasons) for c in cells if not c.ok]
    assert wrong == []
    assert {c.scenario for c in cells} == {s.id for s in eval_b.scenarios("all")}
    assert {c.expect.verdict for c in cells} == {"PASS", "FAIL", "ERROR"}
    policies = {"grep-only", "graph-only"}
    reach = {(c.scenario, c.case): c.verdict.verdict for c in cells if c.case in policies}
    assert reach[("R4-digest-by-kind", "grep-only")] == "FAIL"
    assert reach[("R4-digest-by-kind", "graph-only")] == "PASS"
    assert reach[("D4-digest-oldest-without-graph", "graph-only")] == "FAIL"
    assert {
        reach[(s, "grep-only")] for s in ("R1-postgres", "R2-long-exports", "R3-review-email")
    } == {"PASS"}
    bare = {(c.scenario, c.case): c.verdict.verdict for c in cells if c.case.endswith("@none")}
    assert bare[("R4-digest-by-kind", "graph-only@none")] == "FAIL"  # adr-find is not on PATH
    assert bare[("R1-postgres", "grep-only@none")] == "FAIL"
    assert bare[("R1-postgres", "oracle@none")] == "PASS"


def test_the_tuned_scores_are_each_tier_s_expected_minimum(eval_b: Suite) -> None:
    bars = eval_b.config.expected
    assert set(bars) == {"write-trigger", "retrieval"}
    for bar in bars.values():
        assert bar.for_model("claude-sonnet-4-5", "positive") == (0.85, None)
        assert bar.for_model("haiku", "positive") == (0.75, None)
        assert bar.for_model("policy:oracle", "positive") == (None, None)
