"""Which skills fired in a rep, and a misroute between the subject and its neighbours.

A user's agent loads the subject among other plugins. A subject that wins alone may lose
to a broader neighbour, or take work a neighbour should do; neither shows in a verdict
that reads only the subject's effect. So every row of a suite with neighbours names each
known skill that fired (`fired:<skill>`, a call the CLI carried out, never one it
rejected), and two misroutes:

- `neighbour-won:<skill>`: on a positive, a neighbour's skill fired and no skill of the
  subject did (the scenario's own `wanted` neighbour excepted);
- `subject-stole:<skill>`: the scenario names the neighbour a user would want
  (`wanted:`), a skill of the subject fired and that neighbour's did not.

They are flags on every checker's rows and never change a verdict here; a checker whose
rules name the subject's skill may make `neighbour-won` a reason of its own axis A. The
rule is frozen with the scoring code: what counts as a misroute is part of the instrument.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from evalkit.models import ScenarioFile, ToolCall, Transcript
from evalkit.scoring.transcript import succeeded

SKILL_TOOLS = ("Skill", "SlashCommand")
FIRED = "fired:"
NEIGHBOUR_WON = "neighbour-won:"
SUBJECT_STOLE = "subject-stole:"


class Skills(BaseModel):
    """The skills a rep's agent was given, by side, each spelled `plugin:skill`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    subject: tuple[str, ...] = ()
    neighbours: tuple[str, ...] = ()

    def known(self) -> tuple[str, ...]:
        return self.subject + self.neighbours


def called_skill(call: ToolCall) -> str | None:
    """The skill a Skill (or SlashCommand) call names, without a leading slash or its
    arguments; None for any other tool."""
    if call.name not in SKILL_TOOLS:
        return None
    raw = str(call.input.get("skill") or call.input.get("command") or "").strip()
    return raw.split()[0].lstrip("/") if raw else None


def resolve(called: str, known: tuple[str, ...]) -> list[str]:
    """The known skills a call means: its own spelling, or for a bare name (which the CLI
    resolves among the loaded plugins) every known skill of that name."""
    if ":" in called:
        return [called] if called in known else []
    return [k for k in known if k.rpartition(":")[2] == called]


def fired(transcript: Transcript, skills: Skills) -> list[str]:
    """Each known skill a call the CLI carried out fired, in order of first firing."""
    found: dict[str, None] = {}
    for call in transcript.tool_calls:
        name = called_skill(call)
        if name is not None and succeeded(call):
            for skill in resolve(name, skills.known()):
                found.setdefault(skill, None)
    return list(found)


def activation_flags(
    skills: Skills | None, scenario: ScenarioFile, transcript: Transcript
) -> list[str]:
    """The rep's `fired:` flags and its misroutes, in the order the module names them;
    nothing for a suite without neighbours."""
    if skills is None or not skills.neighbours:
        return []
    got = fired(transcript, skills)
    flags = [FIRED + s for s in got]
    subject_fired = any(s in skills.subject for s in got)
    wanted = scenario.scenario.wanted
    if scenario.scenario.polarity == "positive" and not subject_fired:
        flags += [NEIGHBOUR_WON + s for s in got if s in skills.neighbours and s != wanted]
    if wanted is not None and subject_fired and wanted not in got:
        flags.append(SUBJECT_STOLE + wanted)
    return flags
