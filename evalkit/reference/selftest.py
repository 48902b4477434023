"""Model-free proof that the checker scores both directions as designed.

For every scenario of both sets, each behaviour the checker declares is played
without a model into a fresh sandbox, and its verdict is held against the one it
must get. The Task blocks are never read.
"""

from __future__ import annotations

import itertools
import os
import queue
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from evalkit.checkers.behaviour import Expectation, SelfTestCase
from evalkit.forked import forked_map
from evalkit.models import Verdict
from evalkit.records.folder.gridlock import hold_grid_lock
from evalkit.reference.agent_streams import encoder_for
from evalkit.reference.cases import self_test_cases
from evalkit.reference.escape import ESCAPE, stand_in_values
from evalkit.reference.fabricate import fabricate
from evalkit.reference.neighbourly import misroute_cases
from evalkit.reference.placeholders import render
from evalkit.reference.planted import PlantedCell, planted_scan
from evalkit.run.backends.launchers import direct_folder
from evalkit.run.observe import place_wrappers, restore_scripts
from evalkit.run.sandbox import TEMPLATES, TRANSCRIPT, build_sandbox, check_destination
from evalkit.run.sandbox import isolation_env as sandbox_isolation_env
from evalkit.scoring.decide import ProcessRecord, decide, guarded_env_now
from evalkit.scoring.judge import FixedJudge
from evalkit.scoring.transcript import parse_lines
from evalkit.suite.config import Suite, Which
from evalkit.suite.scenarios import ScenarioFile
from evalkit.suite.subject import leave_out_subject


@dataclass
class CaseCell:
    scenario: str
    case: str
    expect: Expectation
    verdict: Verdict
    lost: tuple[str, ...] = ()
    """What the agent's stream could not show of this run (`agent_streams.py`)."""

    @property
    def ok(self) -> bool:
        return meets(self.verdict, self.expect)

    @property
    def blind(self) -> bool:
        """Came out other than designed on a run whose telling in the agent's stream lost
        something the checker reads: the agent's blind spot, named, not the checker's bug."""
        return not self.ok and bool(self.lost)


def meets(verdict: Verdict, expect: Expectation) -> bool:
    if verdict.verdict != expect.verdict:
        return False
    if expect.reason is None:
        return True
    return any(expect.reason in r for r in verdict.reasons + verdict.flags)


def isolation_env(
    suite: Suite, sandbox: Path, first: Path | None = None, plugins: bool = True
) -> dict[str, str]:
    """The suite's isolation environment, with each plugin's bin/ on PATH as the CLI puts it
    (none in the no-plugin arm), after `first` (interpreters started without their launcher,
    see `launchers`)."""
    env = sandbox_isolation_env(suite, sandbox)
    loaded = suite.plugin_dirs() if plugins else []
    bins = [str(p / "bin") for p in loaded if (p / "bin").is_dir()]
    front = [str(first)] if first is not None else []
    env["PATH"] = os.pathsep.join([*front, os.environ.get("PATH", ""), *bins])
    return env


CASES_AT_ONCE = 2
"""Cases played at once, each by a forked worker process of its own (scoring is mostly
Python work, which threads of one process take turns at)."""


def run_case(
    suite: Suite,
    scenario: ScenarioFile,
    case: SelfTestCase,
    workdir: Path,
    guarded: dict[str, str] | None = None,
    from_template: bool = False,
    agent: str = "claude",
) -> CaseCell:
    """Play one case into a fresh sandbox and decide it. `guarded` points the checker's
    guarded real-world paths (default: where this process points them); it reaches the
    fabricated tools and the decision, never this process's environment. `from_template`
    copies the scenario's sandbox built once per command instead of building it anew; the run
    is told in `agent`'s stream."""
    guarded = guarded_env_now(suite.checker) if guarded is None else guarded
    sandbox = workdir / scenario.id / case.name
    if from_template:
        sandbox.parent.mkdir(parents=True, exist_ok=True)
        TEMPLATES.copy(suite, scenario, sandbox, Path(tempfile.gettempdir()))
    else:
        build_sandbox(suite, scenario, sandbox)
    return play(suite, scenario, case, sandbox, guarded, agent=agent)


def play(
    suite: Suite,
    scenario: ScenarioFile,
    case: SelfTestCase,
    sandbox: Path,
    guarded: dict[str, str],
    first: Path | None = None,
    agent: str = "claude",
) -> CaseCell:
    """Play one case into the fresh sandbox at `sandbox` and decide it; `first` goes first
    on the PATH of its Bash commands; the run is told in `agent`'s own stream format and
    read back through that agent's normaliser."""
    names = list(suite.fixture_dirs())
    values = suite.reference.script_values(guarded)
    if case.name == ESCAPE:
        values.update(stand_in_values(sandbox / "escape-stand-ins"))
    script = render(case.script, sandbox, names, values)
    hook_output = " ".join(h.output_contains for h in suite.config.required_hooks)
    plugins = not case.without_subject
    if not plugins:
        leave_out_subject(suite, sandbox)
    env = {
        **isolation_env(suite, sandbox, first, plugins),
        **{k: v for k, v in guarded.items() if v},
    }
    placed = place_wrappers(suite.config.observe, sandbox)
    encoder = encoder_for(agent, sandbox.parent)
    lines = fabricate(
        script, sandbox, env, hook_output, case.fault, stream=sandbox / TRANSCRIPT,
        plugins=plugins, encoder=encoder,
    )  # fmt: skip
    restore_scripts(placed)
    (sandbox / TRANSCRIPT).write_text("\n".join(lines) + "\n", encoding="utf-8")
    record = ProcessRecord(exit_code=None, timeout=0, guarded_env=guarded)
    verdict = decide(
        suite.instrument(scenario),
        sandbox,
        parse_lines(lines),
        "self-test",
        FixedJudge(case.judge_answer),
        record,
        sandbox,
        without_subject=case.without_subject,
    )
    return CaseCell(scenario.id, case.name, case.expect, verdict, tuple(sorted(encoder.lost)))


class _Lanes:
    """One sandbox folder per case played at once, reset between cases instead of copied
    and deleted: a case changes a few files of a sandbox, and creating and deleting every
    file of it for each case is most of what self-test would cost. A lane is moved to the
    case's own path while the case plays, so every path the case sees is the one a fresh
    copy would have had; a sandbox kept for a failing cell leaves with its lane. Free lanes
    wait in a folder of their own beside the sandboxes (a rename never crosses disks),
    named for the process that made them."""

    def __init__(self, suite: Suite, root: Path, scratch: Path) -> None:
        self._suite, self._root, self._scratch = suite, root, scratch
        self._folder = Path(tempfile.mkdtemp(prefix=".lanes-", dir=root))
        self._free: queue.SimpleQueue[Path] = queue.SimpleQueue()
        self._count = itertools.count()
        self._home: dict[Path, Path] = {}

    def prepare(self, scenario: ScenarioFile) -> None:
        """Build scenario's template now, so no case waits while another builds it."""
        TEMPLATES.template(self._suite, scenario, self._scratch)

    def lay_out(self, scenario: ScenarioFile, sandbox: Path) -> None:
        """A fresh sandbox of scenario at sandbox, which must not exist yet."""
        sandbox.parent.mkdir(parents=True, exist_ok=True)
        check_destination(sandbox)
        try:
            lane = self._free.get_nowait()
        except queue.Empty:
            TEMPLATES.copy(self._suite, scenario, sandbox, self._scratch)
            return
        os.rename(lane, sandbox)
        self._home[sandbox] = lane
        try:
            TEMPLATES.reset(self._suite, scenario, sandbox, self._scratch)
        except OSError:
            shutil.rmtree(sandbox, ignore_errors=True)
            TEMPLATES.copy(self._suite, scenario, sandbox, self._scratch)

    def give_back(self, sandbox: Path) -> None:
        lane = self._home.pop(sandbox, None)
        if lane is None:
            lane = self._folder / f"{os.getpid()}-{next(self._count)}"
        os.rename(sandbox, lane)
        self._free.put(lane)

    def remove(self) -> None:
        shutil.rmtree(self._folder, ignore_errors=True)


LOCK = ".self-test.lock"
"""In WORKDIR while a self-test lays its sandboxes out there; a second one is refused."""


def self_test(
    suite: Suite, workdir: Path | None = None, which: Which = "all", agent: str = "claude"
) -> list[CaseCell]:
    """Every case of every scenario, with every guarded real-world path pointed into scratch
    (a stand-in of its own for each case, so cases played at once never meet). In workdir,
    only the sandboxes of cells that came out other than designed are kept, and a second
    self-test into the same workdir is refused while this one runs. Every template is built,
    and python3's launcher asked, before the cases play. Each run is told in `agent`'s
    stream format, so the checkers are proven through that agent's normaliser."""
    work = [
        (scenario, case)
        for scenario in suite.scenarios(which)
        for case in self_test_cases(suite.reference, scenario) + misroute_cases(suite, scenario)
        if case.fault != "no-hook" or suite.config.required_hooks  # no hook is required
    ]
    if workdir is None:
        return _self_test(suite, work, None, agent)
    with hold_grid_lock(workdir / LOCK, "self-test", what="self-test"):
        return _self_test(suite, work, workdir, agent)


def self_test_and_scan(
    suite: Suite, workdir: Path | None = None, which: Which = "all", agent: str = "claude"
) -> tuple[list[CaseCell], list[PlantedCell]]:
    """`self_test`'s cells, and the world scan's over fabricated request bodies of every
    wire (`planted.py`), kept apart so that a suite's count of cells is its scenarios'."""
    return self_test(suite, workdir, which, agent), planted_scan(suite)


def _self_test(
    suite: Suite,
    work: list[tuple[ScenarioFile, SelfTestCase]],
    workdir: Path | None,
    agent: str = "claude",
) -> list[CaseCell]:
    scratch = Path(tempfile.mkdtemp(prefix="evalkit-selftest-"))
    lanes: _Lanes | None = None
    try:
        root = workdir.resolve() if workdir else scratch / "sandboxes"
        root.mkdir(parents=True, exist_ok=True)
        lanes = made = _Lanes(suite, root, Path(tempfile.gettempdir()))
        probe_env = {**os.environ, **isolation_env(suite, root)}
        with ThreadPoolExecutor(CASES_AT_ONCE, thread_name_prefix="evalkit-self-test") as pool:
            asked = pool.submit(direct_folder, scratch / "interpreters", probe_env, root)
            built = [
                pool.submit(made.prepare, scenario)
                for scenario in {scenario.id: scenario for scenario, _ in work}.values()
            ]
            first = asked.result()
            for done in built:
                done.result()

        def one(number: int) -> CaseCell:
            scenario, case = work[number]
            guarded = suite.reference.harmless_env(scratch / "worlds" / str(number))
            sandbox = root / scenario.id / case.name
            made.lay_out(scenario, sandbox)
            cell = play(suite, scenario, case, sandbox, guarded, first, agent)
            if cell.ok:
                made.give_back(sandbox)
            return cell

        cells = forked_map(one, range(len(work)), CASES_AT_ONCE)
        if workdir is not None and root.is_dir():
            made.remove()
            for folder in [p for p in root.iterdir() if p.is_dir() and not any(p.iterdir())]:
                folder.rmdir()
        return cells
    finally:
        if lanes is not None:
            lanes.remove()
        shutil.rmtree(scratch, ignore_errors=True)
