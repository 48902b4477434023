"""What a run asks of a scripted model (`policy:<name>`), which the reference layer answers.

The scripted agents (policies, their servers, the self-test that proves them) are reference
behaviour and sit above the runner. The runner names the seam here; `evalkit.reference.
scripted.Policies` fills it, and whoever starts the run (the CLI, calibrate) hands it to the
run's context, so nothing in `run/` imports the reference layer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from evalkit.errors import ConfigError
from evalkit.records.rows.policy_models import PREFIX as PREFIX
from evalkit.records.rows.policy_models import is_policy as is_policy

if TYPE_CHECKING:
    from evalkit.models import Verdict
    from evalkit.suite.config import Suite
    from evalkit.suite.scenarios import ScenarioFile



class ScriptServer(Protocol):
    """A scripted model's API endpoint on loopback, serving one attempt."""

    @property
    def base_url(self) -> str: ...

    @property
    def markers(self) -> list[str]:
        """`marker:<channel>:<word>` of each marker the agent's requests carried."""
        ...

    @property
    def bodies(self) -> list[str]:
        """Every model request body as received (JSON), in order."""
        ...

    def stop(self) -> None: ...

    def hold_past(self, turns: int) -> None:
        """Serve `turns` model turns, then hold the next request unanswered (a turn cap)."""
        ...

    @property
    def held(self) -> bool:
        """Whether a request past the turn cap came, and was held."""
        ...

    def served_record(self) -> str | None:
        """What it was asked and served, one JSON line a request (`scoring/tampering/served.py`
        reads it); None when it keeps no record."""
        ...

    def request_pieces(self, body: dict[str, Any]) -> Iterator[tuple[str, str, str]]:
        """(channel, text, the call's own input) of what the world put in one request body,
        read as this server's wire carries it."""
        ...


@dataclass(frozen=True)
class RepScript:
    """Everything a scripted agent is played from for one attempt."""

    suite: Suite
    model: str
    scenario: ScenarioFile
    rep: int
    attempt: int
    sandbox: Path
    scratch: Path
    workdir: Path
    guarded: dict[str, str]
    agent: str
    places: dict[str, str] = field(default_factory=dict)
    """Placeholder name -> the world path its folder appears at (empty: the sandbox's own)."""
    spelled: dict[str, str] = field(default_factory=dict)
    """A guarded path -> its spelling in the world, for the policies that reach for it."""
    cli: Path | None = None
    """The rep's CLI, whose own text (from an empty world) its requests' scan exempts."""
    subject: list[Path] = field(default_factory=list)
    """The subject's folders (plugins), whose own text the scan exempts."""


@dataclass(frozen=True)
class ScriptedRep:
    """One attempt's scripted agent: the model name its CLI is given, the judge's fixed
    answer, and how its server starts (on a thread of its own, while the sandbox is built)."""

    cli_model: str
    judge_answer: str
    start: Callable[[], ScriptServer]


class ScriptedModels(Protocol):
    """The scripted models a run may name, and the proof that they play as designed."""

    def names(self, suite: Suite) -> list[str]:
        """The policy names a refusal lists as known."""
        ...

    def accepts(self, suite: Suite, name: str, agent: str = "claude") -> bool:
        """Whether `policy:<name>` names a policy this suite can play through `agent`'s CLI
        (a policy an agent's wire cannot play is refused in one line)."""
        ...

    def confined_only(self, model: str) -> bool:
        """Whether this model may only run confined (it tries every way out of its rep)."""
        ...

    def for_rep(self, want: RepScript) -> ScriptedRep:
        """The scripted agent of one attempt, its script rendered for its sandbox."""
        ...

    def self_test(self, suite: Suite, agent: str = "claude") -> tuple[int, int]:
        """The suite's self-test told in `agent`'s stream: the cells other than designed
        (an agent's named blind spot is not one), and all cells."""
        ...

    def as_designed(
        self, suite: Suite, model: str, scenario: ScenarioFile, verdict: Verdict
    ) -> str | None:
        """None when a rep of this policy came out as its plan designed, else the verdict
        its plan designed."""
        ...


def require_scripted(scripted: ScriptedModels | None) -> ScriptedModels:
    """The run's scripted models, or one line saying none were handed to it."""
    if scripted is None:
        raise ConfigError(
            "this run was given no scripted models, so it cannot run a policy:<name> model"
        )
    return scripted
