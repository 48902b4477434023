"""The guide's "Write your own eval" walkthrough (its in-depth page), followed literally: its
shell blocks run in order in an empty folder, its rules example loads, its entry-point
example names the group."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest
import yaml
from pydantic import TypeAdapter

from evalkit.checkers import GROUP
from evalkit.checkers.rules.conditions import NegativeRules, PositiveRules

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^( *)```(\w+)\n(.*?)^\1```$", re.MULTILINE | re.DOTALL)


def section() -> str:
    text = (REPO / "docs" / "usage.md").read_text(encoding="utf-8")
    start = text.index("## Write your own eval")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def blocks(kind: str) -> list[str]:
    return [textwrap.dedent(m.group(3)) for m in FENCE.finditer(section()) if m.group(2) == kind]


def test_the_shell_steps_run_as_written(claude_cli: str, tmp_path: Path) -> None:
    script = "set -euo pipefail\n" + "\n".join(blocks("bash"))
    assert "evalkit init" in script and "evalkit calibrate --set all" in script
    for name in ("home", "scratch", "tmp", "work"):
        (tmp_path / name).mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EVALKIT_", "ANTHROPIC_"))}
    env.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        HOME=str(tmp_path / "home"),
        EVALKIT_SCRATCH=str(tmp_path / "scratch"),
        EVALKIT_CLAUDE=claude_cli,
        TMPDIR=str(tmp_path / "tmp"),
        COLUMNS="200",
        NO_COLOR="1",
    )
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path / "work", env=env,
                          capture_output=True, text=True, timeout=1200)  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-3000:]
    assert "cells as designed" in done.stdout and "cells as expected" in done.stdout
    assert (tmp_path / "work" / "my-eval" / "evalkit.lock").is_file()


def test_the_rules_example_loads_as_rules() -> None:
    (example,) = blocks("yaml")
    data = yaml.safe_load(example)
    assert isinstance(data.get("observe"), list)
    rules = data["checker"]["options"]
    PositiveRules.model_validate(rules["positive"])
    NegativeRules.model_validate(rules["negative"])


def test_the_entry_point_example_names_the_group_evalkit_reads() -> None:
    (example,) = blocks("toml")
    groups = tomllib.loads(example)["project"]["entry-points"]
    assert list(groups) == [GROUP]
    for target in TypeAdapter(dict[str, str]).validate_python(groups[GROUP]).values():
        assert re.fullmatch(r"[\w.]+:\w+", target)
