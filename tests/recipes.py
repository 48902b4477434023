"""Recipes quoted in the docs, run as written: a fenced block found under its heading, and a CI
workflow's jobs run step by step on this machine (no container engine, no CI service).

A recipe the docs show but no test runs drifts from what evalkit does; these helpers let a
test take the doc's own text, so editing the doc is editing what the test runs.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
EXPRESSION = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")


def fenced(doc: Path, heading: str, language: str) -> str:
    """The first ```language block in the section whose heading starts with `heading`."""
    text = doc.read_text(encoding="utf-8")
    match = re.search(rf"^#+ {re.escape(heading)}.*$", text, re.MULTILINE)
    if match is None:
        raise LookupError(f"{doc.name}: no heading {heading!r}")
    section = text[match.end() :]
    following = re.search(r"^#+ ", section, re.MULTILINE)
    section = section[: following.start()] if following else section
    for found in FENCE.finditer(section):
        if found.group(1) == language:
            return found.group(2)
    raise LookupError(f"{doc.name}: no ```{language} block under {heading!r}")


@dataclass
class Step:
    """One step of a workflow job: a shell command (`run`) or an action (`uses`)."""

    run: str = ""
    uses: str = ""
    env: dict[str, str] = field(default_factory=dict)
    with_: dict[str, Any] = field(default_factory=dict)


def job_steps(workflow: str, job: str) -> list[Step]:
    """The steps of one job of a GitHub Actions workflow, read with a safe loader."""
    data = YAML(typ="safe").load(workflow)
    steps = data["jobs"][job]["steps"]
    return [
        Step(
            run=str(s.get("run", "")),
            uses=str(s.get("uses", "")),
            env={str(k): str(v) for k, v in (s.get("env") or {}).items()},
            with_=dict(s.get("with") or {}),
        )
        for s in steps
    ]


def substitute(text: str, values: Mapping[str, str]) -> str:
    """`${{ name }}` expressions replaced by `values[name]`; an unknown one is an error, so a
    recipe cannot silently run with an empty value."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise KeyError(f"no value for ${{{{ {name} }}}}")
        return values[name]

    return EXPRESSION.sub(one, text)


Action = Callable[[Step, Path], None]


@dataclass
class StepRunner:
    """Runs a job's steps in `cwd` with bash, as a runner would: each `run:` with the job's
    environment plus the step's `env:` (expressions substituted from `values`). Actions are
    handled by `actions` (keyed by the action's name without its version); a `run:` listed in
    `prepared` is taken as done already (e.g. `make setup` on a machine that is set up)."""

    cwd: Path
    env: dict[str, str]
    values: dict[str, str] = field(default_factory=dict)
    actions: dict[str, Action] = field(default_factory=dict)
    prepared: frozenset[str] = frozenset()
    timeout: float = 300

    def run_job(self, steps: list[Step]) -> list[subprocess.CompletedProcess[str]]:
        done = []
        for step in steps:
            if step.uses:
                name = step.uses.partition("@")[0]
                if name not in self.actions:
                    raise KeyError(f"no stand-in for the action {name}")
                self.actions[name](step, self.cwd)
                continue
            if step.run.strip() in self.prepared:
                continue
            env = dict(self.env)
            env.update({k: substitute(v, self.values) for k, v in step.env.items()})
            result = subprocess.run(
                ["bash", "-e", "-o", "pipefail", "-c", substitute(step.run, self.values)],
                cwd=self.cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=self.timeout,
            )
            done.append(result)
            if result.returncode != 0:
                break
        return done


def upload_to(store: Path, values: Mapping[str, str]) -> Action:
    """actions/upload-artifact: the step's `path` copied to store/<name>."""

    def upload(step: Step, cwd: Path) -> None:
        name = substitute(str(step.with_["name"]), values)
        shutil.copytree(cwd / str(step.with_["path"]), store / name, symlinks=True)

    return upload


def download_from(store: Path) -> Action:
    """actions/download-artifact without a name: every artifact into <path>/<name>."""

    def download(step: Step, cwd: Path) -> None:
        target = cwd / str(step.with_.get("path", "."))
        for artifact in sorted(store.iterdir()):
            shutil.copytree(artifact, target / artifact.name, symlinks=True)

    return download


def nothing(step: Step, cwd: Path) -> None:
    """An action whose work is done already (actions/checkout in a prepared folder)."""
