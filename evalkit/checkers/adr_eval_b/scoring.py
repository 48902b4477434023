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
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field, field_validator

from evalkit.checkers import register
from evalkit.checkers.adr_discrimination.scoring import (
    NEUTRAL_REPLY,
    PROPOSAL,
    UNRELATED_RECORD,
    AdrDiscriminationChecker,
    FileSpec,
    RecordId,
    _check_patterns,
    _Strict,
    cited_ids,
    topic_matches,
)
from evalkit.errors import ConfigError
from evalkit.models import Quote, Script, Step, TextBlock, ToolCall, ToolUseBlock, Verdict
from evalkit.scoring.checker import CheckInput, Expectation, Policy, PolicyPlan, SelfTestCase
from evalkit.scoring.rules import ask_judge
from evalkit.suite.scenarios import ScenarioFile

Kind = Literal["write-trigger", "retrieval"]
FOUND_ID = r"(?m)^(\d{4})\s"
"""The first record id adr-find prints: each of its result blocks starts with one."""
NOTHING_FOUND = "I looked for a decision record that applies and found none, so I went ahead."


class WriteExpect(_Strict):
    touches: str = Field(description="project-relative file the task changes")
    topic_patterns: list[str] = Field(
        min_length=1, description="regexes; a created record's path+text must match one"
    )

    @field_validator("topic_patterns")
    @classmethod
    def _compiles(cls, patterns: list[str]) -> list[str]:
        return _check_patterns(patterns)


class RetrievalExpect(_Strict):
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


class EvalBCalibration(_Strict):
    reply: str = Field(description="the ideal final message")
    adr: FileSpec = Field(description="the record an always-create agent writes")
    grep_words: list[str] = Field(
        min_length=1, description="the obvious words of the task, as a grep-only agent uses them"
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


@register
class AdrEvalBChecker(AdrDiscriminationChecker):
    name: ClassVar[str] = "adr-eval-b"
    version: ClassVar[str] = "1"
    source_modules: ClassVar[tuple[str, ...]] = (
        "evalkit.checkers.adr_discrimination.scoring",
        *AdrDiscriminationChecker.source_modules,
    )
    policies: ClassVar[tuple[Policy, ...]] = (
        Policy("oracle", description="W: consults, records the decision; R: looks up, cites"),
        Policy("always-create", description="writes a new decision record on every task"),
        Policy("never-consult", description="never touches the records and cites none"),
        Policy("cite-distractor", description="consults, then cites a near miss or superseded"),
        Policy("grep-only", description="adr-find by the task's words; cites what it found"),
        Policy("graph-only", description="adr-find --near the touched file; cites what it found"),
    )

    # ------------------------------------------------------------------ scenario fields

    def expect_for(self, scenario: ScenarioFile) -> Any:
        return EXPECT_MODELS[_kind(scenario)].model_validate(scenario.scenario.expect)

    def calibration_for(self, scenario: ScenarioFile) -> Any:
        return EvalBCalibration.model_validate(scenario.scenario.calibration)

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
        texts = {p: (project / p).read_bytes().decode("utf-8", "replace") for p in created}
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

    # ------------------------------------------------------------------ reference behaviour

    def _adr_find(self, args: str, intro: str = "Looking up the decision records.") -> Step:
        call = ToolUseBlock(name="Bash", input={"command": f"adr-find --root . {args}"})
        return Step(blocks=[TextBlock(text=intro), call])

    def _lookup(self, scenario: ScenarioFile) -> Step:
        """The lookup the scenario's reach calls for: its words, or the graph from its file."""
        expect = self.expect_for(scenario)
        cal: EvalBCalibration = self.calibration_for(scenario)
        if isinstance(expect, RetrievalExpect) and "keywords" not in expect.reached_by:
            return self._adr_find(f"--near {expect.touches}")
        return self._adr_find(" ".join(cal.grep_words))

    def _open_governing(self, scenario: ScenarioFile) -> list[Step]:
        expect = self.expect_for(scenario)
        if not isinstance(expect, RetrievalExpect):
            return []
        command = f"cat {self.opts.adr_dir.strip('/')}/{expect.governing[0]}-*.md"
        return [Step(blocks=[ToolUseBlock(name="Bash", input={"command": command})])]

    def _reactive(self, grep: bool, scenario: ScenarioFile) -> Script:
        expect = self.expect_for(scenario)
        cal: EvalBCalibration = self.calibration_for(scenario)
        step = (
            self._adr_find(" ".join(cal.grep_words))
            if grep
            else self._adr_find(f"--near {expect.touches}")
        )
        cite = "I checked the decision records: ADR {quote} governs this, so I followed it."
        return Script(
            steps=[step],
            final_text=cite,
            final_quote=Quote(pattern=FOUND_ID, fallback=NOTHING_FOUND),
        )

    def _reach_expectation(self, scenario: ScenarioFile, strategy: str) -> Expectation:
        """grep-only finds what the task's words reach; graph-only what the graph reaches
        while the sandbox has it. Each misses everything else."""
        expect = self.expect_for(scenario)
        if not isinstance(expect, RetrievalExpect):
            return Expectation("FAIL", "B-fail:no-record-or-proposal")
        graph_present = "graphify-out" not in {w.strip("/") for w in scenario.scenario.without}
        found = (
            "keywords" in expect.reached_by
            if strategy == "grep"
            else ("graph" in expect.reached_by and graph_present)
        )
        return Expectation("PASS", "B-via:cited-governing") if found else Expectation("FAIL", "B-")

    def plan_policy(self, policy: str, scenario: ScenarioFile) -> PolicyPlan:
        kind = _kind(scenario)
        cal: EvalBCalibration = self.calibration_for(scenario)
        expect = self.expect_for(scenario)
        write = kind == "write-trigger"
        if policy == "oracle":
            steps = [self._skill("find", scenario), self._lookup(scenario)]
            if write:
                steps += self._writes([cal.adr])
                want = Expectation("PASS", "B-via:created")
            else:
                steps += self._open_governing(scenario)
                want = Expectation("PASS", "B-via:cited-governing")
            return PolicyPlan(Script(steps=steps, final_text=cal.reply), want)
        if policy == "always-create":
            steps = [self._skill("create", scenario), *self._writes([cal.adr])]
            final = f"I recorded this decision as {cal.adr.path} and made the change."
            want = (
                Expectation("PASS", "B-via:created")
                if write
                else Expectation("FAIL", "B-fail:governing-not-retrieved")
            )
            return PolicyPlan(Script(steps=steps, final_text=final), want)
        if policy == "never-consult":
            steps = [self._read_project_file(expect.touches)]
            return PolicyPlan(
                Script(steps=steps, final_text=NEUTRAL_REPLY), Expectation("FAIL", "A-fail:")
            )
        if policy == "cite-distractor":
            wrong = (
                expect.distractors[0]
                if isinstance(expect, RetrievalExpect) and expect.distractors
                else None
            )
            steps = [self._skill("find", scenario), self._lookup(scenario)]
            if wrong is None:
                final = "I checked the decision records: ADR 0004 covers this, so I followed it."
                want = Expectation("FAIL", "B-")
            else:
                final = (
                    f"I checked the decision records: ADR {wrong} covers this, so I followed it."
                )
                want = Expectation("FAIL", f"cited-distractor:{wrong}")
            return PolicyPlan(Script(steps=steps, final_text=final), want)
        if policy in ("grep-only", "graph-only"):
            grep = policy == "grep-only"
            return PolicyPlan(
                self._reactive(grep, scenario),
                self._reach_expectation(scenario, "grep" if grep else "graph"),
            )
        known_names = ", ".join(p.name for p in self.policies)
        raise KeyError(f"unknown policy '{policy}' for {self.name} (known: {known_names})")

    def own_self_test_cases(self, scenario: ScenarioFile) -> list[SelfTestCase]:
        if _kind(scenario) == "write-trigger":
            return self._write_cases(scenario)
        return self._retrieval_cases(scenario)

    def _case(self, name: str, steps: list[Step], final: str, want: Expectation) -> SelfTestCase:
        return SelfTestCase(name, Script(steps=steps, final_text=final), want)

    def _write_cases(self, scenario: ScenarioFile) -> list[SelfTestCase]:
        cal: EvalBCalibration = self.calibration_for(scenario)
        consult = [self._skill("find", scenario)]
        proposal = Script(steps=consult, final_text=PROPOSAL)
        folder = self.opts.adr_dir.strip("/")
        off_topic = FileSpec(path=f"{folder}/0011-format-the-code.md", content=UNRELATED_RECORD)
        return [
            SelfTestCase("propose-judge-yes", proposal, Expectation("PASS", "B-via:judge-"), "YES"),
            SelfTestCase("propose-judge-no", proposal, Expectation("FAIL", "B-fail:"), "NO"),
            SelfTestCase(
                "propose-judge-garbage", proposal, Expectation("ERROR", "judge-error"), "maybe"
            ),
            self._case(
                "created-through-bash",
                [self._adr_find(" ".join(cal.grep_words)), self._bash_write(cal.adr)],
                NEUTRAL_REPLY,
                Expectation("PASS", "B-via:created"),
            ),
            self._case(
                "created-off-topic",
                [*consult, *self._writes([off_topic])],
                NEUTRAL_REPLY,
                Expectation("FAIL", "off-topic-adr:"),
            ),
            self._case(
                "records-outside-the-records-folder",
                self._writes([FileSpec(path=f"notes/{Path(cal.adr.path).name}", content="x")]),
                NEUTRAL_REPLY,
                Expectation("FAIL", "A-fail:no-adr-consultation"),
            ),
            SelfTestCase(
                "proposes-without-consulting",
                Script(steps=[], final_text=PROPOSAL),
                Expectation("FAIL", "A-fail:"),
                "YES",
            ),
            self._case(
                "other-plugin-skill",
                [Step(blocks=[ToolUseBlock(name="Skill", input={"skill": "other-plugin:find"})])],
                NEUTRAL_REPLY,
                Expectation("FAIL", "A-fail:"),
            ),
        ]

    def _retrieval_cases(self, scenario: ScenarioFile) -> list[SelfTestCase]:
        cal: EvalBCalibration = self.calibration_for(scenario)
        expect: RetrievalExpect = self.expect_for(scenario)
        gov = expect.governing[0]
        consult = [self._skill("find", scenario)]
        folder = self.opts.adr_dir.strip("/")
        cases = [
            self._case(
                "cites-short-form",
                consult,
                f"This is settled by ADR-{int(gov)}.",
                Expectation("PASS", "B-via:cited-governing"),
            ),
            self._case(
                "opens-governing-without-citing",
                [*consult, *self._open_governing(scenario)],
                NEUTRAL_REPLY,
                Expectation("PASS", "B-via:opened-governing"),
            ),
            self._case(
                "finds-nothing",
                consult,
                NOTHING_FOUND,
                Expectation("FAIL", "B-fail:governing-not-retrieved"),
            ),
            self._case(
                "cites-without-consulting",
                [self._read_project_file(expect.touches)],
                cal.reply,
                Expectation("FAIL", "A-fail:no-adr-consultation"),
            ),
            self._case(
                "glob-records",
                [Step(blocks=[ToolUseBlock(name="Glob", input={"pattern": f"{folder}/*.md"})])],
                cal.reply,
                Expectation("PASS", "A-via:records:Glob"),
            ),
            self._case(
                "creates-instead-of-citing",
                [*consult, *self._writes([cal.adr])],
                NEUTRAL_REPLY,
                Expectation("FAIL", "adr-created:"),
            ),
        ]
        for wrong in expect.distractors:
            cases.append(
                self._case(
                    f"cites-distractor-{wrong}",
                    consult,
                    f"Per ADR {wrong}, this is already decided.",
                    Expectation("FAIL", f"cited-distractor:{wrong}"),
                )
            )
        if expect.distractors:
            wrong = expect.distractors[0]
            cases.append(
                self._case(
                    "cites-distractor-and-governing",
                    consult,
                    f"ADR {wrong} does not apply here; ADR {gov} is the one in force.",
                    Expectation("PASS", "B-via:cited-governing"),
                )
            )
            cases.append(
                self._case(
                    "opens-governing-cites-distractor",
                    [*consult, *self._open_governing(scenario)],
                    f"Per ADR {wrong}, this is already decided.",
                    Expectation("FAIL", f"cited-distractor:{wrong}"),
                )
            )
        return cases


def opened_records(calls: list[ToolCall], adr_dir: str) -> list[str]:
    """Ids of the records a successful Read, or a Bash command, opened by file name."""
    folder = re.compile(rf"{re.escape(adr_dir.strip('/'))}/(\d{{3,}})-")
    opened: set[str] = set()
    for call in calls:
        if call.is_error:
            continue
        if call.name == "Read":
            target = str(call.input.get("file_path", ""))
        elif call.name == "Bash":
            target = str(call.input.get("command", ""))
        else:
            continue
        opened.update(folder.findall(target))
    return sorted(opened)
