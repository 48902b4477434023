"""The adr-eval-b checker: with nothing in the prompt naming the records, does the agent
notice an architecture decision and propose recording it (write-trigger), and retrieve
the decision in force, including one reachable only through the code graph (retrieval)?

Every scenario should act. Axis A is the ADR machinery's: a tool call consulted the
records (an os-adr skill, an ``adr-*`` tool, or a tool input naming the records folder).
Axis B depends on the scenario's kind:

- write-trigger: a new on-topic record in the records folder (mechanical), else the
  frozen rubric judge on the final message only: did it propose recording the decision,
  or ask whether to?
- retrieval: the final message cites a governing record, or a tool call opened one and
  the final message cites no distractor. Citing only distractors (near misses or the
  superseded predecessor) fails, as does finding nothing; a new record is no retrieval.

The record-change detection, citation rules and consultation rules are the
adr-discrimination checker's; this module adds the kinds and their policies.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, Field, field_validator

from evalkit.checkers.adr_discrimination.scoring import (
    AdrDiscriminationChecker,
    RecordId,
    cited_ids,
)
from evalkit.errors import ConfigError
from evalkit.models import Strict, ToolCall, Verdict
from evalkit.scoring.checker import CheckInput
from evalkit.scoring.safefile import agent_text
from evalkit.scoring.topics import check_topic_patterns, topic_matches
from evalkit.scoring.transcript import failed
from evalkit.scoring.validity import ask_judge

if TYPE_CHECKING:
    from evalkit.models import ScenarioFile

class WriteExpect(Strict):
    touches: str = Field(description="project-relative file the task changes")
    topic_patterns: list[str] = Field(
        min_length=1, description="regexes; a created record's path+text must match one"
    )

    @field_validator("topic_patterns")
    @classmethod
    def _compiles(cls, patterns: list[str]) -> list[str]:
        return check_topic_patterns(patterns)


class RetrievalExpect(Strict):
    touches: str = Field(description="project-relative file the task changes")
    governing: list[RecordId] = Field(min_length=1, description="citing any of these passes B")
    distractors: list[RecordId] = Field(
        default_factory=list, description="citing only these (no governing id) fails B"
    )
    reached_by: list[Literal["keywords", "graph"]] = Field(
        min_length=1,
        description="the lookups that list a governing record first: adr-find by the task's "
        "obvious words (calibration.grep_words), and adr-find --near the touched file, "
        "one hop away in the code graph; self-test holds the scenario to it",
    )


EXPECT_MODELS: dict[str, type[BaseModel]] = {
    "write-trigger": WriteExpect,
    "retrieval": RetrievalExpect,
}


def _kind(scenario: ScenarioFile) -> str:
    kind = scenario.scenario.kind or ""
    if kind not in EXPECT_MODELS:
        raise ConfigError(
            f"{scenario.path}: kind: '{kind}' is not one of {', '.join(EXPECT_MODELS)}"
        )
    return kind


class AdrEvalBChecker(AdrDiscriminationChecker):
    name: ClassVar[str] = "adr-eval-b"
    version: ClassVar[str] = "1"

    # ------------------------------------------------------------------ scenario fields

    def expect_for(self, scenario: ScenarioFile) -> Any:
        return EXPECT_MODELS[_kind(scenario)].model_validate(scenario.scenario.expect)

    # ------------------------------------------------------------------ scoring

    def check(self, inp: CheckInput) -> Verdict:
        if inp.scenario.scenario.polarity != "positive":
            raise ConfigError(f"{inp.scenario.path}: polarity: every Eval B scenario is positive")
        return super().check(inp)

    def _positive(
        self,
        inp: CheckInput,
        created: list[str],
        consulted: list[str],
        final: str,
        known: list[str],
        flags: list[str],
    ) -> Verdict:
        verdict = Verdict(
            scenario=inp.scenario.id,
            model=inp.model,
            polarity="positive",
            axis_a="A:PASS" if consulted else "A:FAIL",
            axis_b="B:PASS",
            verdict="PASS",
            reasons=consulted or ["A-fail:no-adr-consultation"],
            flags=flags,
        )
        expect = self.expect_for(inp.scenario)
        if isinstance(expect, WriteExpect):
            failed = self._write_trigger(inp, verdict, expect, created, final, known)
            if failed is not None:
                return failed
        else:
            self._retrieval(inp, verdict, expect, created, final, known)
        if not consulted or verdict.axis_b != "B:PASS":
            verdict.verdict = "FAIL"
        return verdict

    def _write_trigger(
        self,
        inp: CheckInput,
        verdict: Verdict,
        expect: WriteExpect,
        created: list[str],
        final: str,
        known: list[str],
    ) -> Verdict | None:
        project = inp.sandbox / "project"
        texts = {p: agent_text(project / p) for p in created}
        topical = [p for p in created if topic_matches(expect.topic_patterns, p, texts[p])]
        verdict.flags += [f"off-topic-adr:{p}" for p in created if p not in topical]
        verdict.flags += [f"cited:{i}" for i in cited_ids(final, known)]
        if topical:
            verdict.reasons += ["B-via:created"] + [f"created:{p}" for p in topical]
            return None
        failed = ask_judge(inp, verdict, final)
        if failed is not None:
            return failed
        if verdict.judge is not None and verdict.judge.answer == "YES":
            verdict.reasons.append("B-via:judge-proposed")
        else:
            verdict.axis_b = "B:FAIL"
            verdict.reasons.append("B-fail:no-record-or-proposal")
        return None

    def _retrieval(
        self,
        inp: CheckInput,
        verdict: Verdict,
        expect: RetrievalExpect,
        created: list[str],
        final: str,
        known: list[str],
    ) -> None:
        verdict.flags += [f"adr-created:{p}" for p in created]
        cited = cited_ids(final, set(known) | set(expect.governing) | set(expect.distractors))
        verdict.flags += [f"cited:{i}" for i in cited]
        governing = [i for i in cited if i in expect.governing]
        wrong = [i for i in cited if i in expect.distractors]
        opened = opened_records(inp.transcript.tool_calls, self.opts.adr_dir)
        verdict.flags += [f"opened:{i}" for i in opened]
        opened = [i for i in opened if i in expect.governing]
        if governing:
            verdict.reasons.append("B-via:cited-governing")
        elif wrong:
            verdict.axis_b = "B:FAIL"
            verdict.reasons += [f"cited-distractor:{i}" for i in wrong]
        elif opened:
            verdict.reasons.append("B-via:opened-governing")
        else:
            verdict.axis_b = "B:FAIL"
            verdict.reasons.append("B-fail:governing-not-retrieved")


def opened_records(calls: list[ToolCall], adr_dir: str) -> list[str]:
    """Ids of the records a successful Read, or a Bash command, opened by file name."""
    folder = re.compile(rf"{re.escape(adr_dir.strip('/'))}/(\d{{3,}})-")
    opened: set[str] = set()
    for call in calls:
        if failed(call):
            continue
        if call.name == "Read":
            target = str(call.input.get("file_path", ""))
        elif call.name == "Bash":
            target = str(call.input.get("command", ""))
        else:
            continue
        opened.update(folder.findall(target))
    return sorted(opened)
