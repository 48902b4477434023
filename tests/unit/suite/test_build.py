"""Built fixture files: rebuilt when missing or stale, pruned to what is kept, and hashed by
what they mean (a graph's nodes and links), not by the bytes a build stamps."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from evalkit.models import BuildStep
from evalkit.scoring.hashing import tree_hash
from evalkit.suite.build import BuildError, canonical_hash, ensure_built

TOOL = """
import json, os, pathlib, sys
project = pathlib.Path(sys.argv[1])
if os.environ.get("FAKE_TOOL_FAIL"):
    sys.exit("cannot parse the project")
out = project / "graph-out"
out.mkdir(exist_ok=True)
counter = pathlib.Path(sys.argv[2])
counter.write_text(str(int(counter.read_text()) + 1 if counter.exists() else 1))
nodes = [{"id": p.name, "source_file": p.name} for p in sorted(project.glob("*.py"))]
(out / "graph.json").write_text(json.dumps({"nodes": nodes, "links": []}))
(out / "cache.bin").write_text("scratch")
"""


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path, BuildStep, Path]:
    suite = tmp_path / "suite"
    project = suite / "project"
    project.mkdir(parents=True)
    (project / "a.py").write_text("x = 1\n")
    tool = tmp_path / "tool.py"
    tool.write_text(TOOL)
    counter = tmp_path / "count"
    step = BuildStep(
        name="graph",
        output="graph-out",
        command=[sys.executable, str(tool), "{project}", str(counter)],
        keep=["graph.json"],
        canonical="graphify-graph",
    )
    return suite, project, step, counter


def test_a_missing_output_is_built_then_left_alone_while_fresh(setup) -> None:  # type: ignore[no-untyped-def]
    suite, project, step, counter = setup
    assert ensure_built(suite, project, [step]) == ["graph"]
    assert sorted(p.name for p in (project / "graph-out").iterdir()) == ["graph.json"]
    assert ensure_built(suite, project, [step]) == []
    assert counter.read_text() == "1"


def test_a_changed_source_or_an_edited_output_rebuilds(setup) -> None:  # type: ignore[no-untyped-def]
    suite, project, step, counter = setup
    ensure_built(suite, project, [step])
    (project / "b.py").write_text("y = 2\n")
    assert ensure_built(suite, project, [step]) == ["graph"]
    (project / "graph-out" / "graph.json").write_text('{"nodes": [], "links": []}')
    assert ensure_built(suite, project, [step]) == ["graph"]
    assert counter.read_text() == "3"


def test_the_source_hash_leaves_the_built_output_out(setup) -> None:  # type: ignore[no-untyped-def]
    suite, project, step, _ = setup
    before = tree_hash(project)
    ensure_built(suite, project, [step])
    assert tree_hash(project, frozenset({"graph-out"})) == before
    assert tree_hash(project) != before


def test_a_failing_build_names_the_step_in_one_line(setup, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    suite, project, step, _ = setup
    monkeypatch.setenv("FAKE_TOOL_FAIL", "1")
    with pytest.raises(BuildError, match=r"^build graph: .* exited 1 without graph-out/: cannot"):
        ensure_built(suite, project, [step])


def test_a_missing_tool_says_how_to_install_it(setup) -> None:  # type: ignore[no-untyped-def]
    suite, project, step, _ = setup
    missing = step.model_copy(update={"command": ["no-such-tool-xyz", "update"]})
    with pytest.raises(BuildError, match="not installed; `make setup`"):
        ensure_built(suite, project, [missing])


def _graph(folder: Path, **extra: object) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    data = {
        "directed": False,
        "graph": {"graphify_version": "0.9.96"},
        "nodes": [
            {"id": "a", "source_file": "a.py", "community": 0, "community_name": "A"},
            {"id": "b", "source_file": "b.py", "community": 1},
        ],
        "links": [{"source": "a", "target": "b", "relation": "calls"}],
        **extra,
    }
    (folder / "graph.json").write_text(json.dumps(data))


def test_the_graph_hash_ignores_the_commit_stamp_the_date_and_the_clustering(
    tmp_path: Path,
) -> None:
    step = BuildStep(name="g", output="o", command=["x"], canonical="graphify-graph")
    _graph(tmp_path / "one", built_at_commit="aaaa")
    (tmp_path / "one" / "GRAPH_REPORT.md").write_text("# Graph Report (2026-11-30)\n")
    _graph(tmp_path / "two", built_at_commit="bbbb")
    (tmp_path / "two" / "GRAPH_REPORT.md").write_text("# Graph Report (2026-12-01)\n")
    data = json.loads((tmp_path / "two" / "graph.json").read_text())
    data["nodes"].reverse()
    data["nodes"][0]["community"] = 7
    (tmp_path / "two" / "graph.json").write_text(json.dumps(data, indent=2))
    assert canonical_hash(step, tmp_path / "one") == canonical_hash(step, tmp_path / "two")
    data["links"][0]["relation"] = "imports"
    (tmp_path / "two" / "graph.json").write_text(json.dumps(data))
    assert canonical_hash(step, tmp_path / "one") != canonical_hash(step, tmp_path / "two")
    assert canonical_hash(step, tmp_path / "absent") == "missing"
