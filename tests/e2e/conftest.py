"""Shared fixtures for tests that drive the real Claude Code CLI."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
PINNED_CLI = REPO_ROOT / ".tools" / "claude" / "node_modules" / ".bin" / "claude"


def _find_claude() -> tuple[str | None, str]:
    """The CLI to drive, and where it came from (or why none was found)."""
    configured = os.environ.get("EVALKIT_CLAUDE")
    if configured:
        found = shutil.which(configured)
        if found is None:
            pytest.fail(f"EVALKIT_CLAUDE={configured!r} is not an executable")
        return found, "EVALKIT_CLAUDE"
    if os.access(PINNED_CLI, os.X_OK):
        return str(PINNED_CLI), "the pinned install in .tools/claude"
    on_path = shutil.which("claude")
    if on_path is not None:
        return on_path, "PATH"
    return None, (
        f"no Claude Code CLI: EVALKIT_CLAUDE is unset, {PINNED_CLI} does not exist "
        "(install it with the Makefile's npm command) and `claude` is not on PATH"
    )


@pytest.fixture(scope="session")
def claude_cli() -> str:
    """Path of the Claude Code executable; skips when absent, but fails under CI=true."""
    path, where = _find_claude()
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail(where)
        print(f"skipping e2e: {where}")
        pytest.skip(where)
    return path


# --------------------------------------------------------------------------------------------
# Driving the `evalkit` command itself: real subprocesses, each in a throwaway world.
# --------------------------------------------------------------------------------------------

EVALKIT_BIN = Path(sys.executable).parent / "evalkit"
SUITE_PARTS = ("evalkit.yaml", "scenarios", "scenarios-reserve", "fixtures", "judge-rubric.md")
_DROPPED_ENV = ("EVALKIT_", "ANTHROPIC_", "CLAUDE_", "OS_VAULT_")


@dataclass
class Done:
    """A finished evalkit invocation."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def why(self) -> str:
        """For assertion messages: the command and the tail of what it printed."""
        return (
            f"`evalkit {' '.join(self.args)}` exited {self.returncode} after {self.seconds:.1f} s"
            f"\n--- stdout\n{self.stdout[-3000:]}\n--- stderr\n{self.stderr[-3000:]}"
        )


@dataclass
class Agent:
    pid: int
    argv: list[str]

    @property
    def is_cli(self) -> bool:
        """The CLI itself, rather than a hook or tool process it started."""
        return "--output-format" in self.argv and "-p" in self.argv


def _proc_environ(pid: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return b""


def agent_processes(scratch: Path) -> list[Agent]:
    """Live processes started for reps whose scratch folder is under `scratch`: the CLI, and
    every hook or tool process it left, found by their CLAUDE_CONFIG_DIR or working folder."""
    root = str(scratch.resolve())
    marker = f"CLAUDE_CONFIG_DIR={root}/".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            stat = (entry / "stat").read_text()
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if stat.rpartition(")")[2].split()[0] == "Z":
            continue
        environ = _proc_environ(entry.name)
        if any(e.startswith(marker) for e in environ.split(b"\0")) or cwd.startswith(root + "/"):
            found.append(Agent(int(entry.name), [a.decode(errors="replace") for a in argv if a]))
    return found


def read_tsv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    """The header and the rows of a results TSV, read without evalkit's own reader.
    Every line must have the header's column count (no half rows)."""
    if not path.is_file():
        return [], []
    lines = path.read_text(encoding="utf-8").splitlines()
    header = lines[0].split("\t")
    rows = []
    for number, line in enumerate(lines[1:], start=2):
        cells = line.split("\t")
        assert len(cells) == len(header), f"{path}:{number}: {len(cells)} columns, a half row"
        rows.append(dict(zip(header, cells, strict=True)))
    return header, rows


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def copy_suite(dest: Path, only: set[str] | None = None, source: Path = REPO_ROOT) -> Path:
    """A private copy of the suite (config, both scenario sets, fixtures, rubric, and the lock
    when the copy is whole), optionally keeping only the scenarios whose short id (P1, N4,
    ...) is in `only`."""
    dest.mkdir(parents=True, exist_ok=True)
    for part in SUITE_PARTS:
        src = source / part
        if src.is_dir():
            shutil.copytree(src, dest / part, ignore=shutil.ignore_patterns(".git", "__pycache__"))
        elif src.is_file():
            shutil.copy2(src, dest / part)
    if only is None and (source / "evalkit.lock").is_file():
        shutil.copy2(source / "evalkit.lock", dest / "evalkit.lock")  # a whole copy stays frozen
    if only is not None:
        for folder in ("scenarios", "scenarios-reserve"):
            for path in (dest / folder).glob("*.md"):
                if path.stem.split("-")[0] not in only:
                    path.unlink()
    return dest


def task_blocks(suite_root: Path = REPO_ROOT) -> list[tuple[str, str]]:
    """(scenario id, Task block) for every scenario of both sets. Only ever used to check
    that some output does NOT contain a Task block; never printed."""
    from evalkit.suite.config import load_suite
    from evalkit.suite.task import read_task

    suite = load_suite(suite_root)
    return [(s.id, read_task(s)) for s in suite.scenarios("all")]


def leaked_tasks(output: str, tasks: list[tuple[str, str]]) -> list[str]:
    """Ids of the scenarios whose Task block, or any long line of it, appears in output."""
    leaked = []
    for scenario_id, task in tasks:
        lines = [x.strip() for x in task.splitlines() if len(x.strip()) >= 40]
        if task in output or any(x in output for x in lines):
            leaked.append(scenario_id)
    return leaked


def without_signals(reasons: str) -> str:
    """A row's reasons without the CLI-label flags (`signals:`, `signal-disagrees:`), which
    say whether an export arrived: a test of another behaviour compares the rest."""
    kept = [r for r in reasons.split(";") if not r.startswith(("signals:", "signal-disagrees:"))]
    return ";".join(kept)


@dataclass
class Kit:
    """One isolated world for evalkit subprocesses: its own HOME, scratch, real-vault stand-in
    and TMPDIR, all under `base`. Every invocation's output is kept in `outputs`."""

    base: Path
    cli: str
    suite: Path = REPO_ROOT
    extra_env: dict[str, str] = field(default_factory=dict)
    outputs: list[Done] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.base = self.base.resolve()
        for folder in (self.home, self.scratch, self.real_vault, self.tmp):
            folder.mkdir(parents=True, exist_ok=True)

    home = property(lambda self: self.base / "home")
    scratch = property(lambda self: self.base / "scratch")
    real_vault = property(lambda self: self.base / "real-vault")
    tmp = property(lambda self: self.base / "tmp")

    @property
    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(_DROPPED_ENV)}
        env.update(
            HOME=str(self.home),
            EVALKIT_SCRATCH=str(self.scratch),
            EVALKIT_REAL_VAULT=str(self.real_vault),
            EVALKIT_CLAUDE=self.cli,
            TMPDIR=str(self.tmp),
            COLUMNS="200",
            NO_COLOR="1",
        )
        env.update(self.extra_env)
        return env

    def command(self, *args: str) -> list[str]:
        return [str(EVALKIT_BIN), "--suite", str(self.suite), *args]

    def run(self, *args: str, timeout: float = 180, env: dict[str, str] | None = None) -> Done:
        began = time.monotonic()
        proc = subprocess.run(
            self.command(*args),
            cwd=self.base,
            env=env or self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        done = Done(list(args), proc.returncode, proc.stdout, proc.stderr, 0.0)
        done.seconds = time.monotonic() - began
        self.outputs.append(done)
        return done

    def start(self, *args: str) -> subprocess.Popen[str]:
        """evalkit in the background, in this process group, so a signal reaches it alone."""
        return subprocess.Popen(
            self.command(*args),
            cwd=self.base,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def run_many(self, *invocations: tuple[str, ...], timeout: float = 180) -> list[Done]:
        """Several evalkit commands at once (they mostly wait on timers), each with its own
        wall time, measured by polling."""
        began = time.monotonic()
        running = []
        for number, args in enumerate(invocations):
            out = (self.tmp / f"many-{number}.out").open("w+")
            err = (self.tmp / f"many-{number}.err").open("w+")
            proc = subprocess.Popen(
                self.command(*args), cwd=self.base, env=self.env,
                stdin=subprocess.DEVNULL, stdout=out, stderr=err, text=True,
            )  # fmt: skip
            running.append((args, proc, out, err))
        ended: dict[int, float] = {}
        while len(ended) < len(running) and time.monotonic() - began < timeout:
            for number, (_, proc, _, _) in enumerate(running):
                if number not in ended and proc.poll() is not None:
                    ended[number] = time.monotonic() - began
            time.sleep(0.05)
        done = []
        for number, (args, proc, out, err) in enumerate(running):
            if number not in ended:
                proc.kill()
                proc.wait()
            out.seek(0)
            err.seek(0)
            seconds = ended.get(number, time.monotonic() - began)
            done.append(Done(list(args), proc.returncode, out.read(), err.read(), seconds))
            out.close()
            err.close()
        self.outputs += done
        return done

    def agents(self) -> list[Agent]:
        return agent_processes(self.scratch)

    def wait_for_agents(self, count: int, timeout: float = 30) -> list[Agent]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [a for a in self.agents() if a.is_cli]
            if len(found) >= count:
                return found
            time.sleep(0.05)
        raise AssertionError(f"fewer than {count} claude process(es) after {timeout} s")

    def interrupt(
        self, proc: subprocess.Popen[str], agents: int, sig: int, timeout: float
    ) -> tuple[str, str, float]:
        """Once `agents` CLI processes run, send sig to evalkit alone (each CLI has its own
        session) and wait: (stdout, stderr, seconds from the signal to the exit)."""
        try:
            self.wait_for_agents(agents)
            time.sleep(0.3)
            began = time.monotonic()
            proc.send_signal(sig)
            stdout, stderr = proc.communicate(timeout=timeout)
            return stdout, stderr, time.monotonic() - began
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()

    def leftovers(self, grace: float = 3.0) -> list[Agent]:
        """Processes still alive after a short grace (a killed process may take a moment to be
        reaped by init). Kills them, by pid, so one failing test does not leak into others."""
        deadline = time.monotonic() + grace
        found = self.agents()
        while found and time.monotonic() < deadline:
            time.sleep(0.1)
            found = self.agents()
        for agent in found:
            try:
                os.kill(agent.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return found

    def tsv(self, workdir: Path) -> list[dict[str, str]]:
        return read_tsv(workdir / "results.tsv")[1]

    def manifest(self, workdir: Path) -> list[dict[str, Any]]:
        return read_jsonl(workdir / "manifest.jsonl")


@pytest.fixture(scope="session")
def evalkit_bin() -> Path:
    if not EVALKIT_BIN.is_file():
        pytest.skip(f"no evalkit console script next to {sys.executable}")
    return EVALKIT_BIN


@pytest.fixture(scope="session")
def new_kit(claude_cli: str, evalkit_bin: Path) -> Callable[..., Kit]:
    """Factory for a Kit: new_kit(base_folder, suite=REPO_ROOT)."""

    def make(base: Path, suite: Path = REPO_ROOT) -> Kit:
        return Kit(base, claude_cli, suite)

    return make


@pytest.fixture
def kit(new_kit: Callable[..., Kit], tmp_path: Path) -> Iterator[Kit]:
    made = new_kit(tmp_path)
    yield made
    made.leftovers(grace=0)


@pytest.fixture(scope="session")
def tasks() -> list[tuple[str, str]]:
    return task_blocks()


@pytest.fixture(scope="session")
def suite_copier() -> Callable[..., Path]:
    """copy_suite(dest, only=None): a private copy of the suite to edit."""
    return copy_suite


@pytest.fixture(scope="session")
def task_leaks(tasks: list[tuple[str, str]]) -> Callable[[str], list[str]]:
    """task_leaks(output) -> ids of the scenarios whose Task block the output contains."""
    assert tasks, "no Task blocks read"
    return lambda output: leaked_tasks(output, tasks)
