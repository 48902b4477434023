"""evalkit installed like a tool: a wheel in a fresh virtual environment, used from a folder
that is not this checkout, on suites `evalkit init` writes, through the real CLI."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from evalkit.pins import pinned
from evalkit.suite.scaffold import TEMPLATES
from tests.own_tasks import own_tasks

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
PINNED = REPO / ".tools" / "claude" / "node_modules" / ".bin" / "claude"

OUTSIDE_CHECKER = {
    "pyproject.toml": """\
        [build-system]
        requires = ["setuptools>=68"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "evalkit-demo-checker"
        version = "0.1.0"

        [project.entry-points."evalkit.checkers"]
        demo-rules = "evalkit_demo_checker.scoring:DemoChecker"
        """,
    "evalkit_demo_checker/__init__.py": "",
    "evalkit_demo_checker/scoring.py": """\
        from typing import ClassVar

        from evalkit.checkers.rules.scoring import RulesChecker


        class DemoChecker(RulesChecker):
            name: ClassVar[str] = "demo-rules"
        """,
    "evalkit_demo_checker/reference.py": """\
        from typing import ClassVar

        from evalkit.checkers.rules.reference import RulesReference
        from evalkit_demo_checker.scoring import DemoChecker


        class DemoReference(RulesReference):
            checker_type: ClassVar[type[DemoChecker]] = DemoChecker
        """,
}


def _run(argv: list[str], env: dict[str, str], cwd: Path, timeout: float = 600) -> str:
    done = subprocess.run(
        argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, (
        f"{' '.join(argv)} exited {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A new venv holding evalkit from a freshly built wheel, and a world for it to run in."""
    if not os.access(PINNED, os.X_OK):
        pytest.skip(f"the pinned CLI is not installed at {PINNED}")
    base = tmp_path_factory.mktemp("installed")
    for name in ("home", "scratch", "tmp"):
        (base / name).mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(
            ("EVALKIT_", "ANTHROPIC_", "CLAUDE_", "OS_VAULT_", "VIRTUAL_ENV", "PYTHONPATH")
        )
    }
    env.update(HOME=str(base / "home"), EVALKIT_SCRATCH=str(base / "scratch"),
               TMPDIR=str(base / "tmp"), COLUMNS="200", NO_COLOR="1")  # fmt: skip
    source = base / "source"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", ".tools", "results", "*.egg-info", "__pycache__", ".*_cache", "build",
    ))  # fmt: skip
    wheels = base / "wheels"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    _run([*pip, "wheel", "--no-deps", "-w", str(wheels), str(source)], env, base)
    venv = base / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], env, base)
    wheel = next(wheels.glob("heldout_evalkit-*.whl"))
    vpip = [str(venv / "bin" / "python"), "-m", "pip", "--disable-pip-version-check", "-q"]
    _run([*vpip, "install", str(wheel)], env, base)
    demo = base / "demo-checker"
    for rel, text in OUTSIDE_CHECKER.items():
        (demo / rel).parent.mkdir(parents=True, exist_ok=True)
        (demo / rel).write_text(textwrap.dedent(text))
    _run([*vpip, "install", "--no-deps", str(demo)], env, base)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return venv / "bin" / "evalkit", env


def test_the_wheel_carries_the_templates_and_not_the_shipped_suites(
    installed: tuple[Path, dict[str, str]],
) -> None:
    evalkit, env = installed
    site = next((evalkit.parent.parent / "lib").glob("python*/site-packages"))
    assert (site / "evalkit" / "templates" / "adr" / "evalkit.yaml").is_file()
    assert not (site / "suites").exists()


@pytest.mark.parametrize("template", TEMPLATES)
def test_init_then_self_test_pass_outside_the_checkout(
    installed: tuple[Path, dict[str, str]], tmp_path: Path, template: str
) -> None:
    evalkit, env = installed
    _run([str(evalkit), "init", "my-eval", "--template", template], env, tmp_path)
    assert "cells as designed" in _run([str(evalkit), "self-test"], env, tmp_path / "my-eval")


@pytest.mark.slow
@pytest.mark.parametrize("template", [t for t in TEMPLATES if t != "blank"])
def test_a_template_calibrates_through_the_real_cli_outside_the_checkout(
    installed: tuple[Path, dict[str, str]], tmp_path: Path, template: str
) -> None:
    """A whole-suite calibration of each template (`make calibrate-suites`), the run set; the
    blank template's, both sets, is the walk-through's own step in docs/usage.md
    (tests/e2e/test_readme_walkthrough.py, `make test`)."""
    evalkit, env = installed
    env = dict(env, EVALKIT_CLAUDE=str(PINNED))
    _run([str(evalkit), "init", "my-eval", "--template", template], env, tmp_path)
    out = _run(
        [str(evalkit), "calibrate", "--set", "run", "--jobs", "4", "cal"], env, tmp_path / "my-eval"
    )
    assert "cells as expected" in out


def test_an_outside_checker_loads_through_its_entry_point(
    installed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    evalkit, env = installed
    _run([str(evalkit), "init", "s", "--template", "blank"], env, tmp_path)
    config = tmp_path / "s" / "evalkit.yaml"
    config.write_text(config.read_text().replace("name: rules", "name: demo-rules"))
    assert "cells as designed" in _run([str(evalkit), "self-test"], env, tmp_path / "s")
    own_tasks(tmp_path / "s")  # freeze refuses the template's placeholders
    _run([str(evalkit), "suite", "freeze"], env, tmp_path / "s")
    assert "checker: demo-rules@1" in (tmp_path / "s" / "evalkit.lock").read_text()


def test_without_a_cli_it_says_how_to_install_the_pinned_one_with_npm(
    installed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    evalkit, env = installed
    bare = dict(env, PATH=f"{evalkit.parent}{os.pathsep}/usr/bin:/bin")
    if shutil.which("claude", path=bare["PATH"]):
        pytest.skip("a claude executable is on the system PATH")
    _run([str(evalkit), "init", "s"], bare, tmp_path)
    done = subprocess.run(
        [str(evalkit), "run", "P1", "policy:oracle", "w"], env=bare, cwd=tmp_path / "s",
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert f"npm install -g @anthropic-ai/claude-code@{pinned('claude')}" in done.stderr
    assert "make setup" not in done.stderr
