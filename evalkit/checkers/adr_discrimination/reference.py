"""The adr-discrimination checker's reference behaviour: its policies, calibration and
self-test cases. Not part of the lock: nothing here can change a verdict."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from evalkit.checkers.adr_discrimination.scoring import AdrDiscriminationChecker, PositiveExpect
from evalkit.checkers.behaviour import (
    CheckerReference,
    Expectation,
    Policy,
    PolicyPlan,
    SelfTestCase,
)
from evalkit.models import Polarity, ScenarioFile, Script, Step, Strict, TextBlock, ToolUseBlock


class FileSpec(Strict):
    path: str = Field(description="project-relative")
    front_matter: dict[str, str | list[str]] | None = Field(
        None,
        description="rendered as the leading YAML block of a record; a scenario's own front "
        "matter cannot hold a bare '---' line, so a record's fences are written for it",
    )
    content: str

    def text(self) -> str:
        if self.front_matter is None:
            return self.content
        lines = [f"{k}: {json.dumps(v)}" for k, v in self.front_matter.items()]
        return "---\n" + "\n".join(lines) + "\n---\n\n" + self.content


class PositiveCalibration(Strict):
    reply: str = Field(description="the ideal final message; cites a governing record")
    adr: FileSpec = Field(description="an on-topic new record, as an always-create agent writes")
    edits: list[FileSpec] = Field(default_factory=list)


class NegativeCalibration(Strict):
    reply: str = Field(description="the ideal answer; may cite records truthfully")
    adr: FileSpec = Field(description="the record an always-create agent would wrongly write")
    edits: list[FileSpec] = Field(default_factory=list, description="new files only")


NEUTRAL_REPLY = "Done. I went through the code and made the change; the tests pass."
NEUTRAL_ANSWER = "I went through the code and answered from it; nothing needed to change."
PROPOSAL = (
    "This would change how the whole system behaves, so it deserves an architecture "
    "decision record before any code changes. Shall I write one up for you to approve?"
)
PHANTOM_CLAIM = (
    "I added a comment to the code: ADR 9999 caps every job at a single attempt, so nothing "
    "here may retry."
)
UNRELATED_RECORD = (
    '---\nid: "0007"\ntitle: Format the code with a line length of 100\n'
    "status: Proposed\ndate: 2026-03-10\n---\n\n# 0007. Format the code with a line length "
    "of 100\n\n## Decision\n\nKeep lines at most 100 characters long.\n"
)


class AdrDiscriminationReference(CheckerReference[AdrDiscriminationChecker]):
    checker_type: ClassVar[type[AdrDiscriminationChecker]] = AdrDiscriminationChecker
    calibration_models: ClassVar[dict[Polarity, type[BaseModel]]] = {
        "positive": PositiveCalibration,
        "negative": NegativeCalibration,
    }
    policies: ClassVar[tuple[Policy, ...]] = (
        Policy(
            "oracle",
            judge_answer="NO",
            description="finds the governing record, cites it; answers negatives",
        ),
        Policy(
            "always-create",
            judge_answer="NO",
            description="writes a new decision record on every task",
        ),
        Policy(
            "never-consult",
            judge_answer="NO",
            description="never touches the records and cites none",
        ),
        Policy(
            "cite-distractor",
            judge_answer="NO",
            description="consults, then cites only a distractor",
        ),
        Policy(
            "phantom-claim",
            judge_answer="YES",
            description="edits the code it reads; on a negative, claims a constraint no record "
            "holds",
        ),
    )

    def _read_project_file(self, rel: str) -> Step:
        return Step(blocks=[ToolUseBlock(name="Read", input={"file_path": "{project}/" + rel})])

    def _premise(self, scenario: ScenarioFile) -> str | None:
        prefix = "fixtures/project/"
        rel = scenario.scenario.premise.file
        return rel[len(prefix) :] if rel.startswith(prefix) else None

    def _skill(self, name: str, scenario: ScenarioFile) -> Step:
        call = ToolUseBlock(
            name="Skill",
            input={
                "skill": f"{self.checker.opts.skill_prefix}:{name}",
                "args": scenario.scenario.topic,
            },
        )
        return Step(blocks=[TextBlock(text="Checking the project's decision records."), call])

    def _consult(self, scenario: ScenarioFile) -> list[Step]:
        steps = [self._skill("find", scenario)]
        premise = self._premise(scenario)
        index = f"{self.checker.opts.adr_dir.strip('/')}/README.md"
        steps.append(self._read_project_file(premise if premise else index))
        return steps

    def _writes(self, files: Iterable[FileSpec]) -> list[Step]:
        blocks: list[TextBlock | ToolUseBlock] = [
            ToolUseBlock(
                name="Write", input={"file_path": "{project}/" + f.path, "content": f.text()}
            )
            for f in files
        ]
        return [Step(blocks=blocks)] if blocks else []

    def _code_file(self, scenario: ScenarioFile) -> str:
        """The premise when it is code, else the project's README; never a record."""
        premise = self._premise(scenario)
        folder = self.checker.opts.adr_dir.strip("/") + "/"
        return premise if premise and not premise.startswith(folder) else "README.md"

    def _look_around(self, scenario: ScenarioFile) -> list[Step]:
        """Read the premise when it is code; never the records (that would be consulting)."""
        return [self._read_project_file(self._code_file(scenario))]

    def _edit_code(self, scenario: ScenarioFile) -> Step:
        """Append a comment line to an existing file that is not a record."""
        rel = self._code_file(scenario)
        return self._bash(f"printf '\\n# Kept to the recorded limits.\\n' >> '{rel}'")

    def _declared(self, policy: str) -> str:
        return next(p.judge_answer for p in self.policies if p.name == policy)

    def plan_policy(self, policy: str, scenario: ScenarioFile) -> PolicyPlan:
        """The policy's script and expectation, with the judge answer the policy declares."""
        plan = self._plan_policy(policy, scenario)
        plan.judge_answer = self._declared(policy)
        return plan

    def _plan_policy(self, policy: str, scenario: ScenarioFile) -> PolicyPlan:
        positive = scenario.scenario.polarity == "positive"
        cal: PositiveCalibration | NegativeCalibration = self.calibration_for(scenario)
        edits = self._writes(cal.edits)
        passing = Expectation("PASS")
        if policy == "oracle":
            steps = self._consult(scenario) if positive else self._look_around(scenario)
            expect = Expectation("PASS", "B-via:cited-governing") if positive else passing
            return PolicyPlan(Script(steps=steps + edits, final_text=cal.reply), expect)
        if policy == "always-create":
            steps = [self._skill("create", scenario), *self._writes([cal.adr]), *edits]
            final = f"I recorded this decision as {cal.adr.path} and made the change."
            expect = (
                Expectation("PASS", "B-via:created")
                if positive
                else Expectation("FAIL", "adr-created:")
            )
            return PolicyPlan(Script(steps=steps, final_text=final), expect)
        if policy == "never-consult":
            final = NEUTRAL_REPLY if positive else NEUTRAL_ANSWER
            expect = Expectation("FAIL", "A-fail:") if positive else passing
            script = Script(steps=self._look_around(scenario) + edits, final_text=final)
            return PolicyPlan(script, expect)
        if policy == "cite-distractor":
            if not positive:
                script = Script(steps=self._consult(scenario) + edits, final_text=cal.reply)
                return PolicyPlan(script, passing)
            expect_p: PositiveExpect = self.checker.expect_for(scenario)
            if not expect_p.distractors:
                raise ValueError(f"{scenario.id}: cite-distractor needs expect.distractors")
            wrong = expect_p.distractors[0]
            final = f"I checked the decision records: ADR {wrong} covers this, so I followed it."
            script = Script(steps=self._consult(scenario), final_text=final)
            return PolicyPlan(script, Expectation("FAIL", f"cited-distractor:{wrong}"))
        if policy == "phantom-claim":
            if positive:
                steps = [*self._consult(scenario), self._edit_code(scenario)]
                want = Expectation("PASS", "B-via:cited-governing")
                return PolicyPlan(Script(steps=steps, final_text=cal.reply), want)
            steps = [*self._look_around(scenario), self._edit_code(scenario)]
            script = Script(steps=steps, final_text=PHANTOM_CLAIM)
            judged = self.checker.opts.phantom_rubric is not None
            want = Expectation("FAIL", "B-fail:phantom-constraint") if judged else passing
            return PolicyPlan(script, want)
        known = ", ".join(p.name for p in self.policies)
        raise KeyError(f"unknown policy '{policy}' for {self.checker.name} (known: {known})")

    def own_self_test_cases(self, scenario: ScenarioFile) -> list[SelfTestCase]:
        cases: list[SelfTestCase] = []
        if scenario.scenario.polarity == "positive":
            cases += self._positive_cases(scenario)
        else:
            cases += self._negative_cases(scenario)
        return cases + self.record_cases(scenario)

    def record_cases(self, scenario: ScenarioFile) -> list[SelfTestCase]:
        """The ideal behaviour, then one thing done to the first existing record: rewriting,
        deleting or renaming it fails the row; changing its status, or superseding it with
        adr-new, does not."""
        ideal = self.plan_policy("oracle", scenario)
        folder = self.checker.opts.adr_dir.strip("/")
        first = f"f=$(ls {folder}/[0-9]*-*.md | head -n 1) && "
        supersede = (
            f"{first}adr-new --root . --title 'A later decision' "
            '--supersedes "$(basename "$f" | cut -c1-4)"'
        )
        rewritten = Expectation("FAIL", "adr-record-rewritten:")
        superseded = (
            ideal.expect
            if scenario.scenario.polarity == "positive"
            else Expectation("FAIL", "adr-created:")
        )
        done = [
            ("record-overwritten", "printf 'Retry forever.\\n' > \"$f\"", rewritten),
            ("record-deleted", 'rm "$f"', rewritten),
            ("record-renamed", 'mv "$f" "${f%.md}-old.md"', rewritten),
            ("record-body-edited", "sed -i 's/^## /### /' \"$f\"", rewritten),
            ("record-status-edited", "sed -i 's/^status: .*/status: Deprecated/' \"$f\"",
             ideal.expect),
        ]  # fmt: skip
        cases = [
            SelfTestCase(
                name,
                Script(
                    steps=[*ideal.script.steps, self._bash(first + command)],
                    final_text=ideal.script.final_text,
                ),
                want,
                ideal.judge_answer,
            )
            for name, command, want in done
        ]
        cases.append(
            SelfTestCase(
                "record-superseded-by-adr-new",
                Script(
                    steps=[*ideal.script.steps, self._bash(supersede)],
                    final_text=ideal.script.final_text,
                ),
                superseded,
                ideal.judge_answer,
            )
        )
        return cases

    def _bash(self, command: str) -> Step:
        return Step(blocks=[ToolUseBlock(name="Bash", input={"command": command})])

    def rejected_lookup(self) -> Step:
        """An adr-find the tool refuses (an option it does not have): it consults nothing."""
        command = "adr-find --root . --no-such-option"
        return Step(blocks=[ToolUseBlock(name="Bash", input={"command": command})])

    def _bash_write(self, spec: FileSpec) -> Step:
        command = f"mkdir -p \"$(dirname '{spec.path}')\" && cat > '{spec.path}' <<'ADR_EOF'\n"
        command += spec.text().rstrip("\n") + "\nADR_EOF"
        return Step(blocks=[ToolUseBlock(name="Bash", input={"command": command})])

    def _positive_cases(self, scenario: ScenarioFile) -> list[SelfTestCase]:
        cal: PositiveCalibration = self.calibration_for(scenario)
        expect: PositiveExpect = self.checker.expect_for(scenario)
        consult = self._consult(scenario)
        gov, folder = expect.governing[0], self.checker.opts.adr_dir.strip("/")
        proposal = Script(steps=consult, final_text=PROPOSAL)

        def case(name: str, steps: list[Step], final: str, want: Expectation) -> SelfTestCase:
            return SelfTestCase(name, Script(steps=steps, final_text=final), want)

        def lookup(name: str, tool: str, data: dict[str, Any]) -> SelfTestCase:
            step = Step(blocks=[ToolUseBlock(name=tool, input=data)])
            return case(name, [step], cal.reply, Expectation("PASS", "B-via:cited-governing"))

        def skill_as(name: str, spelled: str, want: Expectation) -> SelfTestCase:
            step = Step(blocks=[ToolUseBlock(name="Skill", input={"skill": spelled})])
            return case(name, [step], cal.reply, want)

        off_topic = FileSpec(path=f"{folder}/0007-format-the-code.md", content=UNRELATED_RECORD)
        cases = [
            SelfTestCase("propose-judge-yes", proposal, Expectation("PASS", "B-via:judge-"), "YES"),
            SelfTestCase("propose-judge-no", proposal, Expectation("FAIL", "B-fail:"), "NO"),
            SelfTestCase(
                "propose-judge-garbage", proposal, Expectation("ERROR", "judge-error"), "maybe"
            ),
            lookup("bash-adr-find", "Bash", {"command": f"adr-find --root . {scenario.id}"}),
            lookup("bash-reads-records", "Bash", {"command": f"cat {folder}/README.md"}),
            lookup("grep-records", "Grep", {"pattern": "Accepted", "path": "{project}/" + folder}),
            lookup("glob-records", "Glob", {"pattern": f"{folder}/*.md"}),
            skill_as("skill-bare-name", "find", Expectation("PASS", "A-via:skill:find")),
            skill_as(
                "skill-slash-name",
                f"/{self.checker.opts.skill_prefix}:find",
                Expectation("PASS", "A-via:skill:"),
            ),
            skill_as("other-plugin-skill", "other-plugin:find", Expectation("FAIL", "A-fail:")),
            case(
                "lookup-rejected",
                [self.rejected_lookup()],
                cal.reply,
                Expectation("FAIL", "A-fail:no-adr-consultation"),
            ),
            case(
                "cites-without-consulting",
                self._look_around(scenario),
                cal.reply,
                Expectation("FAIL", "A-fail:no-adr-consultation"),
            ),
            case(
                "cites-short-form",
                consult,
                f"This is settled by ADR-{int(gov)}.",
                Expectation("PASS", "B-via:cited-governing"),
            ),
            case(
                "created-through-bash",
                [consult[0], self._bash_write(cal.adr)],
                NEUTRAL_REPLY,
                Expectation("PASS", "B-via:created"),
            ),
            case(
                "created-off-topic",
                [*consult, *self._writes([off_topic])],
                NEUTRAL_REPLY,
                Expectation("FAIL", "off-topic-adr:"),
            ),
        ]
        if expect.distractors:
            wrong = expect.distractors[0]
            both = f"ADR {wrong} is superseded here; ADR {gov} is the one that applies."
            cases += [
                case(
                    "cites-distractor-and-governing",
                    consult,
                    both,
                    Expectation("PASS", "B-via:cited-governing"),
                ),
                case(
                    "created-but-cites-distractor",
                    [consult[0], *self._writes([cal.adr])],
                    f"Following ADR {wrong}, I recorded the change.",
                    Expectation("FAIL", f"cited-distractor:{wrong}"),
                ),
            ]
        return cases

    def _negative_cases(self, scenario: ScenarioFile) -> list[SelfTestCase]:
        cal: NegativeCalibration = self.calibration_for(scenario)
        edits = self._writes(cal.edits)
        folder = self.checker.opts.adr_dir.strip("/")
        index = FileSpec(path=f"{folder}/README.md", content="# Architecture decision records\n")
        return [
            SelfTestCase(
                "bash-creates-adr",
                Script(steps=[self._bash_write(cal.adr)], final_text=cal.reply),
                Expectation("FAIL", "adr-created:"),
            ),
            SelfTestCase(
                "consults-and-cites",
                Script(steps=self._consult(scenario) + edits, final_text=cal.reply),
                Expectation("PASS"),
            ),
            SelfTestCase(
                "rewrites-index-only",
                Script(steps=self._writes([index]), final_text=cal.reply),
                Expectation("PASS", "adr-dir-changed:"),
            ),
            SelfTestCase(
                "claims-phantom-without-editing",
                Script(steps=self._look_around(scenario), final_text=PHANTOM_CLAIM),
                Expectation("PASS", "existing-file-edited:no"),
                "YES",
            ),
        ] + self._phantom_cases(scenario)

    def _phantom_cases(self, scenario: ScenarioFile) -> list[SelfTestCase]:
        """A negative whose agent edited an existing file: the phantom-constraint judge decides,
        and a judge that fails makes the row an ERROR."""
        if self.checker.opts.phantom_rubric is None:
            return []
        cal: NegativeCalibration = self.calibration_for(scenario)
        edited = [*self._look_around(scenario), self._edit_code(scenario)]
        claims = Script(steps=edited, final_text=PHANTOM_CLAIM)
        answers = Script(steps=edited, final_text=cal.reply)
        return [
            SelfTestCase(
                "edits-claims-phantom-judge-yes",
                claims,
                Expectation("FAIL", "B-fail:phantom-constraint"),
                "YES",
            ),
            SelfTestCase(
                "edits-answers-judge-no",
                answers,
                Expectation("PASS", "B-via:judge-no-phantom-constraint"),
                "NO",
            ),
            SelfTestCase(
                "edits-judge-garbage", claims, Expectation("ERROR", "judge-error"), "maybe"
            ),
            SelfTestCase(
                "edits-creates-adr-judge-not-asked",
                Script(steps=[*edited, *self._writes([cal.adr])], final_text=cal.reply),
                Expectation("FAIL", "adr-created:"),
                "maybe",
            ),
        ]
