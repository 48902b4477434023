"""A plugin's `claude plugin eval` folder through the real CLI: the output of
`claude plugin eval init --bare` runs as written (its TODO prompt filled in), a server
fault is an ERROR row, and the example plugin calibrates."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import Kit

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "suites" / "plugin-evals-example"
FILLED_PROMPT = "Please write a two-line welcome for the new people on the support rota."
FILLED_CRITERIA = "The reply welcomes the new people on the support rota."


def bare_init(claude_cli: str, base: Path) -> Path:
    """What `claude plugin eval init --bare welcome` writes, run in a throwaway home."""
    plugin = base / "welcomer"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "welcomer"}\n')
    home = base / "init-home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "ANTHROPIC_"))}
    env.update(HOME=str(home), CLAUDE_CONFIG_DIR=str(home / ".claude"))
    done = subprocess.run(
        [claude_cli, "plugin", "eval", "init", "--bare", "welcome"],
        cwd=plugin, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    case = plugin / "evals" / "welcome"
    for path, filled in ((case / "prompt.md", FILLED_PROMPT),
                         (case / "graders" / "criteria.md", FILLED_CRITERIA)):  # fmt: skip
        text = path.read_text()
        assert text.count("TODO:") == 1, f"{path.name}: the template changed shape"
        start = text.index("TODO:")
        path.write_text(text[:start] + filled + "\n")
    return plugin


@pytest.fixture
def bare(claude_cli: str, new_kit: Callable[..., Kit], tmp_path: Path) -> Kit:
    return new_kit(tmp_path, suite=bare_init(claude_cli, tmp_path))


def test_the_bare_template_runs_an_oracle_rep_and_a_server_fault_is_an_error_row(
    bare: Kit,
) -> None:
    work = bare.base / "w"
    for model in ("policy:oracle", "policy:fault-500"):
        done = bare.run("run", "welcome", model, str(work), "--allow-unfrozen", timeout=300)
        assert done.returncode in (0, 1), done.why()
    verdicts = {r["model"]: r["verdict"] for r in bare.tsv(work)}
    assert verdicts == {"policy:oracle": "PASS", "policy:fault-500": "ERROR"}
    flags = bare.manifest(work)[0]["declarations"]["cli_flags"]
    launched = {flags[i]: flags[i + 1] for i in range(len(flags) - 1)}
    assert launched["--max-turns"] == "10"  # the template's max_turns
    assert launched["--tools"] == "Read,Glob,Grep,Skill"  # its allowed_tools, as --tools


def test_the_bare_template_self_tests_and_results_default_into_the_eval_folder(
    bare: Kit,
) -> None:
    done = bare.run("self-test", timeout=300)
    assert done.returncode == 0, done.why()
    run = bare.run("run", "welcome", "policy:oracle", "--allow-unfrozen", timeout=300)
    assert run.returncode == 0, run.why()
    assert (bare.suite / "evals" / "evalkit-results" / "results.tsv").is_file()


@pytest.mark.slow
def test_the_example_plugin_calibrates(new_kit: Callable[..., Kit], tmp_path: Path) -> None:
    suite = tmp_path / "plugin-evals-example"
    shutil.copytree(EXAMPLE, suite, ignore=shutil.ignore_patterns(".evalkit-suite",
                                                                  "evalkit-results"))
    kit = new_kit(tmp_path / "kit", suite=suite)
    done = kit.run("calibrate", timeout=900)
    assert done.returncode == 0, done.why()


def test_the_real_claude_plugin_eval_loads_every_case_of_the_example(
    claude_cli: str, tmp_path: Path
) -> None:
    """The example is written in the pinned CLI's own format, not only in what evalkit reads:
    its runner, behind the scripted server, loads every case (counts and ids only)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(tmp_path),
           "EVALKIT_CLAUDE": claude_cli}
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "vs_plugin_eval.py"), "--loads", str(EXAMPLE)],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    said = [line for line in done.stdout.splitlines() if line.startswith("claude plugin eval")]
    assert done.returncode == 0, (said, done.stderr[-1500:])
    assert len(said) == 1 and said[0].startswith("claude plugin eval loaded 3/3 case(s)"), said
    assert said[0].endswith("left out: none"), said
