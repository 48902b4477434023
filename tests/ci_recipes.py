"""Extract the shell steps of a CI recipe and run them here, in order, as the CI would.

No GitHub or GitLab runner works on this machine (both need a container engine), so the
recipes under docs/ are held to their own words instead: every `run:` step of a GitHub
Actions workflow, every `script:` line of a GitLab CI job, run with bash from a given folder
and environment. Steps that install software are skipped by name (the test's environment
already has evalkit and the CLI). The scale-out recipes can use `run_steps` the same way.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

GITLAB_KEYWORDS = {"default", "stages", "variables", "workflow", "include", "image", "services"}


@dataclass
class Step:
    job: str
    name: str
    script: str


@dataclass
class Ran:
    step: Step
    returncode: int
    stdout: str
    stderr: str


def github_steps(path: Path) -> list[Step]:
    """Every `run:` step of every job, in file order; `uses:` steps are the runner's."""
    data: dict[str, Any] = yaml.safe_load(path.read_text())
    found = []
    for job, spec in data["jobs"].items():
        for index, step in enumerate(spec.get("steps", [])):
            if "run" in step:
                found.append(Step(job, step.get("name", f"step {index}"), step["run"]))
    return found


def gitlab_steps(path: Path) -> list[Step]:
    """Every `script:` line of every job (a job's `before_script` and the default's are
    installation and left out), in file order."""
    data: dict[str, Any] = yaml.safe_load(path.read_text())
    found = []
    for job, spec in data.items():
        if job in GITLAB_KEYWORDS or job.startswith(".") or not isinstance(spec, dict):
            continue
        for index, line in enumerate(spec.get("script", [])):
            found.append(Step(job, f"script {index}", line))
    return found


def run_steps(
    steps: list[Step],
    cwd: Path,
    env: dict[str, str],
    skip: Callable[[Step], bool] = lambda step: step.name.startswith("install"),
    timeout: float = 900,
) -> list[Ran]:
    """Each step under `bash -eo pipefail`, stopping at the first that fails. A step that
    still holds a CI expression (`${{ … }}`) is refused: it could not run anywhere else."""
    done = []
    for step in steps:
        if skip(step):
            continue
        if "${{" in step.script:
            raise ValueError(f"{step.job}/{step.name}: a CI expression in a run step")
        proc = subprocess.run(
            ["bash", "-eo", "pipefail", "-c", step.script],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        done.append(Ran(step, proc.returncode, proc.stdout, proc.stderr))
        if proc.returncode != 0:
            break
    return done
