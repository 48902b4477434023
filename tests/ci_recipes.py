"""Read a CI recipe's jobs and run each one here, every step as written, as its CI would.

No GitHub or GitLab runner works on this machine (both need their service or a container
engine), so the recipes under docs/ci/ are held to their own words instead: each job's steps
in order, under bash, in a folder of the job's own. What a runner does that is no shell step
(a GitHub action such as actions/checkout, a GitLab job's image, its clone of the repository
and its artifacts) is a step here too, with `uses` naming it, and runs only through a stand-in
the caller names; a step with no stand-in fails the run. No step is ever skipped. A job whose
runner is macOS (srt's Seatbelt, which only a Mac enforces) cannot run here and is refused
whole, by its `runs-on`, never passed over.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.recipes import EXPRESSION, substitute

GITLAB_KEYWORDS = {"default", "stages", "variables", "workflow", "include", "image", "services"}
GITLAB_IMAGE = "gitlab:image "
"""A GitLab job's image, as a step: `gitlab:image python:3.12`."""
GITLAB_CLONE = "gitlab:clone"
GITLAB_ARTIFACTS = "gitlab:artifacts"
MACOS = "macos"
"""How a GitHub `runs-on` names a macOS runner (`macos-latest`, `macos-14`)."""


@dataclass
class Step:
    job: str
    name: str
    run: str = ""
    uses: str = ""
    env: dict[str, str] = field(default_factory=dict)
    with_: dict[str, Any] = field(default_factory=dict)

    @property
    def action(self) -> str:
        """What a stand-in is keyed by: the action's name without its version."""
        return self.uses.partition("@")[0]


@dataclass
class Job:
    name: str
    steps: list[Step]
    env: dict[str, str] = field(default_factory=dict)
    """The job's environment as the file gives it (GitHub: the workflow's and the job's `env`,
    which may hold `${{ … }}` expressions; GitLab: `variables`)."""
    runs_on: str = ""
    """The runner a GitHub job asks for (`ubuntu-latest`, `macos-latest`); empty on GitLab."""

    @property
    def macos(self) -> bool:
        return self.runs_on.startswith(MACOS)


@dataclass
class Ran:
    step: Step
    returncode: int
    stdout: str
    stderr: str
    seconds: float


StandIn = Callable[[Step, Path, dict[str, str]], None]
"""Does a runner's part of a job here: it may fill the job's folder and change the job's
environment (a tool put first on PATH), and raises when it cannot stand in."""


def _strings(mapping: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in (mapping or {}).items()}


def github_jobs(path: Path) -> list[Job]:
    """Every job of a GitHub Actions workflow, each step a `run:` or a `uses:`, in file order."""
    data: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    workflow_env = _strings(data.get("env"))
    jobs = []
    for name, spec in data["jobs"].items():
        steps = [
            Step(
                job=name,
                name=str(s.get("name") or s.get("uses") or f"step {i}"),
                run=str(s.get("run", "")),
                uses=str(s.get("uses", "")),
                env=_strings(s.get("env")),
                with_=dict(s.get("with") or {}),
            )
            for i, s in enumerate(spec.get("steps", []))
        ]
        env = {**workflow_env, **_strings(spec.get("env"))}
        jobs.append(Job(name, steps, env, runs_on=str(spec.get("runs-on", ""))))
    return jobs


def gitlab_jobs(path: Path) -> list[Job]:
    """Every job of a .gitlab-ci.yml: its image and the runner's clone, then each line of its
    `before_script` (its own, else the default's) and `script`, then its artifacts."""
    data: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    default = data.get("default") or {}
    jobs = []
    for name, spec in data.items():
        if name in GITLAB_KEYWORDS or name.startswith(".") or not isinstance(spec, dict):
            continue
        image = str(spec.get("image") or default.get("image") or "")
        steps = [
            Step(name, "image", uses=GITLAB_IMAGE + image),
            Step(name, "clone", uses=GITLAB_CLONE),
        ]
        before = spec.get("before_script", default.get("before_script", []))
        steps += [Step(name, f"before_script {i}", run=line) for i, line in enumerate(before)]
        steps += [Step(name, f"script {i}", run=line) for i, line in enumerate(spec["script"])]
        artifacts = spec.get("artifacts") or {}
        kept = [*artifacts.get("paths", []), *(artifacts.get("reports") or {}).get("junit", [])]
        if kept:
            steps.append(Step(name, "artifacts", uses=GITLAB_ARTIFACTS, with_={"path": kept}))
        env = {**_strings(data.get("variables")), **_strings(spec.get("variables"))}
        jobs.append(Job(name, steps, env))
    return jobs


def run_job(
    job: Job,
    cwd: Path,
    env: Mapping[str, str],
    stand_ins: Mapping[str, StandIn],
    values: Mapping[str, str] | None = None,
    timeout: float = 900,
) -> list[Ran]:
    """Every step of `job`, in order, stopping at the first shell step that fails: a `uses`
    step through its stand-in (none is a KeyError), a shell step under `bash -eo pipefail`
    with the job's environment (its CI expressions substituted from `values`, an unknown one
    an error) and the step's own. A shell step that still holds a CI expression is refused:
    it could not run anywhere else. A macOS job is refused before any step: no macOS runner
    (and no Seatbelt) is here."""
    if job.macos:
        raise RuntimeError(f"{job.name}: runs on {job.runs_on}; a macOS runner cannot run here")
    job_env = dict(env)
    job_env.update({k: substitute(v, values or {}) for k, v in job.env.items()})
    done: list[Ran] = []
    for step in job.steps:
        if step.uses:
            if step.action not in stand_ins:
                raise KeyError(f"{job.name}/{step.name}: no stand-in for {step.action}")
            stand_ins[step.action](step, cwd, job_env)
            continue
        if EXPRESSION.search(step.run):
            raise ValueError(f"{job.name}/{step.name}: a CI expression in a run step")
        step_env = {**job_env, **{k: substitute(v, values or {}) for k, v in step.env.items()}}
        began = time.monotonic()
        proc = subprocess.run(
            ["bash", "-eo", "pipefail", "-c", step.run],
            cwd=cwd,
            env=step_env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        done.append(Ran(step, proc.returncode, proc.stdout, proc.stderr, time.monotonic() - began))
        if proc.returncode != 0:
            break
    return done
