"""The guide's quickstart, wording-loop and tune pages, followed literally: every ```bash block of
each, in order, from one empty folder, on the scripted model, through the real CLI."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]


def _gen_outputs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_outputs", REPO / "docs/gen_outputs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_outputs", module)
    spec.loader.exec_module(module)
    return module


def test_every_step_of_the_walk_through_pages_runs_as_written(
    claude_cli: str, tmp_path: Path
) -> None:
    gen = _gen_outputs()
    steps = gen.run_steps(tmp_path, claude_cli, timeout=600)
    failed = [(s.page, s.returncode) for s in steps if s.returncode != 0]
    assert failed == [], steps[-1].output[-3000:]
    assert len(steps) == sum(len(gen.commands(page)) for page in gen.PAGES)
    work = tmp_path / "guide"
    assert (work / "demo" / "results" / "demo" / "report.html").is_file()
    assert (work / "my-eval" / "compare.html").is_file()
    shown = "\n".join(s.output for s in steps)
    assert "PUBLISHABLE" in shown and "A and B differ in subject only" in shown
    tuned = "\n".join(s.output for s in steps if s.page == "tune.md")
    assert "12 should trigger, 12 should not" in tuned and "dry run: nothing planned" in tuned
    assert "need 9 scenarios a polarity" in tuned and "needs a hard cap" in tuned
    assert "stopped before baseline: budget" in tuned and "tune exited 3" in tuned
    assert (work / "tune-demo" / "tune.html").is_file()
