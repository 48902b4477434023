"""The adr-eval-b checker's reference behaviour: its policies (two of them reactive),
calibration and self-test cases. Not part of the lock: nothing here can change a verdict."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from evalkit.checkers.adr_discrimination.reference import (
    NEUTRAL_REPLY,
    PROPOSAL,
    UNRELATED_RECORD,
    AdrDiscriminationReference,
    FileSpec,
)
from evalkit.checkers.adr_eval_b.scoring import (
    AdrEvalBChecker,
    RetrievalExpect,
    _kind,
)
from evalkit.checkers.behaviour import Expectation, Policy, PolicyPlan, SelfTestCase
from evalkit.models import (
    Polarity,
    Quote,
    ScenarioFile,
    Script,
    Step,
    Strict,
    TextBlock,
    ToolUseBlock,
)

FOUND_ID = r"(?m)^(\d{4})\s"
"""The first record id adr-find prints: each of its result blocks starts with one."""
NOTHING_FOUND = "I looked for a decision record that applies and found none, so I went ahead."


class EvalBCalibration(Strict):
    reply: str = Field(description="the ideal final message")
    adr: FileSpec = Field(description="the record an always-create agent writes")
    grep_words: list[str] = Field(
        min_length=1, description="the obvious words of the task, as a grep-only agent uses them"
    )


class AdrEvalBReference(AdrDiscriminationReference):
    """Builds on the adr-discrimination reference's steps (skills, reads, writes)."""

    checker_type: ClassVar[type[AdrEvalBChecker]] = AdrEvalBChecker
    calibration_models: ClassVar[dict[Polarity, type[BaseModel]]] = {"positive": EvalBCalibration}
    policies: ClassVar[tuple[Policy, ...]] = (
        Policy("oracle", description="W: consults, records the decision; R: looks up, cites"),
        Policy("always-create", description="writes a new decision record on every task"),
        Policy("never-consult", description="never touches the records and cites none"),
        Policy("cite-distractor", description="consults, then cites a near miss or superseded"),
        Policy("grep-only", description="adr-find by the task's words; cites what it found"),
        Policy("graph-only", description="adr-find --near the touched file; cites what it found"),
    )

    def calibration_for(self, scenario: ScenarioFile) -> Any:
        return EvalBCalibration.model_validate(scenario.scenario.calibration)

    def _adr_find(self, args: str, intro: str = "Looking up the decision records.") -> Step:
        call = ToolUseBlock(name="Bash", input={"command": f"adr-find --root . {args}"})
        return Step(blocks=[TextBlock(text=intro), call])

    def _lookup(self, scenario: ScenarioFile) -> Step:
        """The lookup the scenario's reach calls for: its words, or the graph from its file."""
        expect = self.checker.expect_for(scenario)
        cal: EvalBCalibration = self.calibration_for(scenario)
        if isinstance(expect, RetrievalExpect) and "keywords" not in expect.reached_by:
            return self._adr_find(f"--near {expect.touches}")
        return self._adr_find(" ".join(cal.grep_words))

    def _open_governing(self, scenario: ScenarioFile) -> list[Step]:
        expect = self.checker.expect_for(scenario)
        if not isinstance(expect, RetrievalExpect):
            return []
        command = f"cat {self.checker.opts.adr_dir.strip('/')}/{expect.governing[0]}-*.md"
        return [Step(blocks=[ToolUseBlock(name="Bash", input={"command": command})])]

    def _reactive(self, grep: bool, scenario: ScenarioFile) -> Script:
        expect = self.checker.expect_for(scenario)
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
        expect = self.checker.expect_for(scenario)
        if not isinstance(expect, RetrievalExpect):
            return Expectation("FAIL", "B-fail:no-record-or-proposal")
        graph_present = "graphify-out" not in {w.strip("/") for w in scenario.scenario.without}
        found = (
            "keywords" in expect.reached_by
            if strategy == "grep"
            else ("graph" in expect.reached_by and graph_present)
        )
        return Expectation("PASS", "B-via:cited-governing") if found else Expectation("FAIL", "B-")

    def expect_without_subject(
        self, policy: str, scenario: ScenarioFile, plan: PolicyPlan
    ) -> Expectation:
        """Without the plugin `adr-find` is not on PATH: the lookup-only policies find
        nothing, so the records they would have cited are never retrieved."""
        if policy in ("grep-only", "graph-only") and plan.expect.verdict == "PASS":
            return Expectation("FAIL", "B-fail:governing-not-retrieved")
        return plan.expect

    def plan_policy(self, policy: str, scenario: ScenarioFile) -> PolicyPlan:
        kind = _kind(scenario)
        cal: EvalBCalibration = self.calibration_for(scenario)
        expect = self.checker.expect_for(scenario)
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
        raise KeyError(f"unknown policy '{policy}' for {self.checker.name} (known: {known_names})")

    def own_self_test_cases(self, scenario: ScenarioFile) -> list[SelfTestCase]:
        if _kind(scenario) == "write-trigger":
            return self._write_cases(scenario) + self.record_cases(scenario)
        return self._retrieval_cases(scenario) + self.record_cases(scenario)

    def _case(self, name: str, steps: list[Step], final: str, want: Expectation) -> SelfTestCase:
        return SelfTestCase(name, Script(steps=steps, final_text=final), want)

    def _write_cases(self, scenario: ScenarioFile) -> list[SelfTestCase]:
        cal: EvalBCalibration = self.calibration_for(scenario)
        consult = [self._skill("find", scenario)]
        proposal = Script(steps=consult, final_text=PROPOSAL)
        folder = self.checker.opts.adr_dir.strip("/")
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
        expect: RetrievalExpect = self.checker.expect_for(scenario)
        gov = expect.governing[0]
        consult = [self._skill("find", scenario)]
        folder = self.checker.opts.adr_dir.strip("/")
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
                "lookup-rejected",
                [self.rejected_lookup()],
                cal.reply,
                Expectation("FAIL", "A-fail:no-adr-consultation"),
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
