"""`evalkit watch`: a new release of an agent's CLI run against its pin, and one exit code.

It asks npm what the agent's package has released since the pin, and for the newest release
runs the suite's gate grid as an ordinary grid of two CLI versions, interleaved rep by rep
(`grid --cli PIN,NEW`), into a folder of its own under WORKDIR; then the gate's paired test
of side `cli:<pin>` against `cli:<new>`, with the gate's settings and exit codes: 0 the
release holds (or there is none), 1 it is worse, 2 the run could not be trusted or the
release not installed, 3 this size cannot tell. A cursor in WORKDIR keeps what each release
came to (`loops/cursor.py`), so a scheduled watch tests a release once and retries one whose
run failed. `--bump`, on a 0, moves the pin to the release, after checking the installed CLI
is the tarball the registry serves, and gives back the diff.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from evalkit.errors import ConfigError, RefusedError
from evalkit.loops.cursor import CURSOR_NAME, OUTCOMES, Cursor, CursorEntry
from evalkit.loops.pinfile import Pin, read_toml_pin, write_bump
from evalkit.loops.releases import Newer, check_integrity, listing, newer_than, registry_integrity
from evalkit.pins import pinned
from evalkit.records.folder.gridlock import hold_grid_lock
from evalkit.records.folder.run_ids import default_workdir
from evalkit.records.folder.workdir import Workdir
from evalkit.run.agents.clis import CLIS, AgentName, agent_name
from evalkit.run.agents.registry import adapter
from evalkit.run.commands import GridRequest, Limits, Quiet, View, run_grid
from evalkit.run.prerequisites.cli_versions import install, resolve
from evalkit.suite.config import Suite

if TYPE_CHECKING:
    from evalkit.compare.gate import Verdict

WATCH_FOLDER = "watch"
"""WORKDIR's default, under the suite's results folder."""


@dataclass
class WatchRequest:
    """`evalkit watch [WORKDIR] --agent NAME --models M`: the newest release against the pin."""

    suite: Suite
    agent: str
    models: list[str]
    workdir: Path | None = None
    which: Literal["run", "reserve", "all"] = "run"
    scenarios: list[str] = field(default_factory=list)
    reps: int = 1
    jobs: int = 2
    registry: str | None = None
    """Passed to npm for every question and install (`--registry URL`)."""
    pins: Path | None = None
    """A TOML file whose `[agents]` table holds the pin; None: the suite's `agents:` block,
    else evalkit's own pin."""
    bump: bool = False
    limits: Limits = field(default_factory=Limits)


@dataclass
class Watched:
    """What a watch came to, for the caller to print and exit with."""

    code: int
    pin: Pin
    newest: str | None = None
    verdict: Verdict | None = None
    folder: Path | None = None
    recorded: CursorEntry | None = None
    """The cursor's earlier outcome, when the newest release was not run again."""
    diff: str = ""

    @property
    def outcome(self) -> str:
        return OUTCOMES[self.code]


def shown(path: Path) -> str:
    """A path as a person reads it: from the working folder when it lies inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def read_pin(suite: Suite, agent: AgentName, pins: Path | None) -> Pin:
    """The pin watched and bumped: `--pins FILE`'s, else the suite's own (`agents:`), else
    evalkit's own, read only (a bump then writes the suite's `agents:` block)."""
    if pins is not None:
        return read_toml_pin(pins, agent)
    where = f"{shown(suite.config_path)} agents.{agent}"
    own = suite.config.agents.get(agent)
    if own is not None:
        return Pin(agent, own, suite.config_path, "suite", where)
    return Pin(
        agent, pinned(agent), suite.config_path, "suite", f"evalkit's own; bumped in {where}"
    )


def watchable(agent: str) -> AgentName:
    """An agent whose adapter can run another version of its CLI, or one line naming why not."""
    name = agent_name(agent)
    if not adapter(name).capabilities.cli_versions:
        raise RefusedError(
            f"watch --agent {name}: its adapter cannot install another version of its CLI "
            "(no --cli versions), so no release can run beside its pin"
        )
    return name


def _checked(request: WatchRequest) -> AgentName:
    """Every refusal that needs neither npm nor a rep, made first."""
    name = watchable(request.agent)
    if not request.models:
        raise ConfigError("watch needs --models, e.g. --models sonnet or --models policy:oracle")
    if request.bump and request.pins is None:
        from evalkit.suite.plugin_evals import instrument_home

        if instrument_home(request.suite.root) is not None:
            raise ConfigError(
                f"watch --bump: {request.suite.config_path} is written afresh from a plugin's "
                "eval folder; name the pin file to bump with --pins FILE"
            )
    return name


def found_line(pin: Pin, newer: Newer) -> str:
    """What npm's answer came to, in one line: the pin, the newest release, what was skipped."""
    head = f"{pin.agent}: pinned at {pin.version} ({pin.source}); "
    head += f"newest release {newer.newest}" if newer.newest else "no newer release on npm"
    skipped = [f"pre-release {v}" for v in newer.prereleases]
    skipped += [f"{v} (above dist-tag latest)" for v in newer.unpromoted]
    return head + (f"; skipped: {', '.join(skipped)}" if skipped else "")


def watch(request: WatchRequest, view: View | None = None) -> Watched:
    """The newest release newer than the pin, tested against it unless the cursor holds its
    outcome already; the cursor advanced on an outcome that is the release's."""
    view = view or Quiet()
    agent = _checked(request)
    pin = read_pin(request.suite, agent, request.pins)
    newer = newer_than(pin.version, listing(CLIS[agent].package, request.registry))
    view.say(found_line(pin, newer))
    newest = newer.newest
    if newest is None:
        return Watched(0, pin)
    work = (request.workdir or default_workdir(request.suite) / WATCH_FOLDER).resolve()
    work.mkdir(parents=True, exist_ok=True)
    # a second watch of this WORKDIR would test the same release again: refused, naming this
    with hold_grid_lock(Workdir(work).grid_lock, f"watch --agent {agent}", what="watch"):
        return _watched(request, agent, pin, newest, work, view)


def _watched(
    request: WatchRequest, agent: AgentName, pin: Pin, newest: str, work: Path, view: View
) -> Watched:
    """The watch of one release under WORKDIR's lock: the cursor read, the release tested
    unless it holds the outcome already, the cursor advanced."""
    cursor = Cursor.load(work / CURSOR_NAME)
    entry = cursor.tested(agent, newest, pin.version)
    if entry is not None and not cursor.to_run(agent, newest, pin.version, request.reps):
        done = Watched(entry.outcome, pin, newest, folder=work / entry.folder, recorded=entry)
        view.say(
            f"{agent} {newest} was tested against {pin.version} already: {done.outcome} (exit "
            f"{done.code}, {shown(work / entry.folder)}, {entry.reps} rep(s)); not run again"
        )
    else:
        done = _test(request, pin, newest, work, view)
    if done.code == 0 and request.bump:
        done.diff = bump(pin, newest, request.registry)
    if done.recorded is None and done.folder is not None:
        folder = done.folder.relative_to(work).as_posix()
        tested = CursorEntry(outcome=done.code, pin=pin.version, reps=request.reps, folder=folder)
        cursor.advance(agent, newest, tested)
    return done


def attempt_folder(work: Path, agent: str, newest: str, pin: str) -> Path:
    """A results folder of its own for this attempt: a retried one never pools with the rows
    of the attempt that failed."""
    base = f"{agent}-{newest}-vs-{pin}"
    folder, number = work / base, 1
    while folder.exists():
        number += 1
        folder = work / f"{base}.{number}"
    return folder


def _test(request: WatchRequest, pin: Pin, newest: str, work: Path, view: View) -> Watched:
    """Both versions installed (a failure is one line, exit 2), the grid run, the gate asked."""
    from evalkit.compare.gate import choose_sides, gate, settings_for

    resolve([pin.version, newest], registry=request.registry)
    folder = attempt_folder(work, pin.agent, newest, pin.version)
    clis = f"{pin.version},{newest}"
    command = f"watch: grid --models {','.join(request.models)} --set {request.which}"
    command += f" --scenarios {','.join(request.scenarios)}" if request.scenarios else ""
    command += f" --reps {request.reps} --cli {clis}"
    view.say(f"running {pin.version} against {newest}, interleaved, in {shown(folder)}")
    grid = GridRequest(
        suite=request.suite, models=request.models, workdir=folder, which=request.which,
        scenarios=request.scenarios, reps=request.reps, jobs=request.jobs,
        clis=[pin.version, newest], command=command,
        limits=replace(request.limits, agent=pin.agent),
    )  # fmt: skip
    ran = run_grid(grid, view)
    if ran.stopped:
        raise KeyboardInterrupt
    side_a, side_b = choose_sides(request.suite, folder, None, f"cli:{pin.version}",
                                  f"cli:{newest}")  # fmt: skip
    verdict = gate(request.suite, side_a, side_b, settings_for(request.suite))
    return Watched(verdict.exit_code, pin, newest, verdict, folder)


def bump(pin: Pin, version: str, registry: str | None = None) -> str:
    """The pin file moved to `version`, once the installed CLI is shown to be the tarball the
    registry serves under it; the unified diff."""
    cli = install(version, registry=registry)
    says = registry_integrity(CLIS[watchable(pin.agent)].package, version, registry)
    check_integrity(version, cli.integrity, says)
    return write_bump(pin, version, shown(pin.path))
