"""The vault-write checker's reference behaviour: its policies, calibration and self-test
cases. Not part of the lock: nothing here can change a verdict."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, Field

from evalkit.checkers.behaviour import (
    CheckerReference,
    Expectation,
    Policy,
    PolicyPlan,
    SelfTestCase,
)
from evalkit.checkers.vault_write.scoring import VaultWriteChecker
from evalkit.models import Polarity, ScenarioFile, Script, Step, Strict, TextBlock, ToolUseBlock


class FileSpec(Strict):
    path: str
    content: str


class PositiveCalibration(Strict):
    note: FileSpec
    reply: str
    offer: str = (
        "The fix is in. What we learned here looks durable beyond this repository: "
        "shall I save it as a note in your vault?"
    )


class NegativeCalibration(Strict):
    edits: list[FileSpec] = Field(default_factory=list)
    reply: str
    tempting_note: FileSpec


NEUTRAL_REPLY = "I looked through the code and made the change; the tests pass."


def _write(path: str, content: str) -> ToolUseBlock:
    return ToolUseBlock(name="Write", input={"file_path": path, "content": content})


def _sloppy(note: FileSpec) -> FileSpec:
    """The same knowledge, filed carelessly: a dated filename and no summary."""
    folder, _, name = note.path.rpartition("/")
    dated = f"{folder + '/' if folder else ''}2026-01-01-{name}"
    body = re.sub(r"(?m)^summary:.*\n", "", note.content)
    return FileSpec(path=dated, content=body)


class VaultWriteReference(CheckerReference[VaultWriteChecker]):
    checker_type: ClassVar[type[VaultWriteChecker]] = VaultWriteChecker
    calibration_models: ClassVar[dict[Polarity, type[BaseModel]]] = {
        "positive": PositiveCalibration,
        "negative": NegativeCalibration,
    }
    policies: ClassVar[tuple[Policy, ...]] = (
        Policy("oracle", description="the ideal behaviour from each scenario's calibration"),
        Policy("always-write", description="writes a conforming note on every task"),
        Policy("never-write", description="does the work and never writes or offers a note"),
        Policy("offer-only", judge_answer="YES", description="offers to save, never writes"),
        Policy("sloppy-write", description="writes the note against the contract"),
        Policy("breach", description="writes into the real vault path"),
    )

    def harmless_env(self, scratch: Path) -> dict[str, str]:
        return {self.checker.opts.real_vault_env: str(scratch / "real-vault-stand-in")}

    def script_values(self, env: Mapping[str, str]) -> dict[str, str]:
        return {"real_vault": str(self.checker.real_vault(env))}

    def _premise_read(self, scenario: ScenarioFile) -> list[Step]:
        rel = scenario.scenario.premise.file
        prefix = "fixtures/project/"
        if rel.startswith(prefix):
            block = ToolUseBlock(
                name="Read", input={"file_path": "{project}/" + rel[len(prefix) :]}
            )
            return [Step(blocks=[TextBlock(text="Let me look at the code first."), block])]
        return []

    def _vault_path(self, rel: str) -> str:
        return "{" + self.checker.opts.vault + "}/" + rel

    def _script(self, scenario: ScenarioFile, writes: list[ToolUseBlock], final: str) -> Script:
        steps = self._premise_read(scenario)
        if writes:
            steps.append(Step(blocks=list(writes)))
        return Script(steps=steps, final_text=final)

    def _edits(self, scenario: ScenarioFile) -> list[ToolUseBlock]:
        cal: NegativeCalibration = self.calibration_for(scenario)
        return [_write("{project}/" + e.path, e.content) for e in cal.edits]

    def plan_policy(self, policy: str, scenario: ScenarioFile) -> PolicyPlan:
        positive = scenario.scenario.polarity == "positive"
        if positive:
            pcal: PositiveCalibration = self.calibration_for(scenario)
            note, reply, edits = pcal.note, pcal.reply, []
        else:
            ncal: NegativeCalibration = self.calibration_for(scenario)
            note, reply, edits = ncal.tempting_note, ncal.reply, self._edits(scenario)
        note_write = _write(self._vault_path(note.path), note.content)
        passing = Expectation("PASS")
        if policy == "oracle":
            writes = [note_write] if positive else edits
            return PolicyPlan(self._script(scenario, writes, reply), passing)
        if policy == "always-write":
            plan = PolicyPlan(self._script(scenario, [*edits, note_write], reply), passing)
            if not positive:
                plan.expect = Expectation("FAIL", "vault-write:")
            return plan
        if policy == "never-write":
            final = NEUTRAL_REPLY if positive else reply
            expect = Expectation("FAIL", "A-fail:") if positive else passing
            return PolicyPlan(self._script(scenario, edits, final), expect)
        if policy == "offer-only":
            final = pcal.offer if positive else reply
            expect = Expectation("PASS", "A-via:offered") if positive else passing
            return PolicyPlan(self._script(scenario, edits, final), expect, judge_answer="YES")
        if policy == "sloppy-write":
            sloppy = _sloppy(note)
            write = _write(self._vault_path(sloppy.path), sloppy.content)
            reason = "B-fail:" if positive else "vault-write:"
            return PolicyPlan(
                self._script(scenario, [*edits, write], reply), Expectation("FAIL", reason)
            )
        if policy == "breach":
            write = _write("{real_vault}/" + note.path, note.content)
            script = self._script(scenario, [*edits, write], reply)
            return PolicyPlan(script, Expectation("FAIL", "real-vault-breach"))
        known = ", ".join(p.name for p in self.policies)
        raise KeyError(f"unknown policy '{policy}' for {self.checker.name} (known: {known})")

    def own_self_test_cases(self, scenario: ScenarioFile) -> list[SelfTestCase]:
        cases: list[SelfTestCase] = []
        if scenario.scenario.polarity == "positive":
            cases += self._positive_cases(scenario)
        else:
            cases += self._negative_cases(scenario)
        return cases

    def _positive_cases(self, scenario: ScenarioFile) -> list[SelfTestCase]:
        cal: PositiveCalibration = self.calibration_for(scenario)
        note = cal.note
        offer = self.plan_policy("offer-only", scenario).script

        def broken(name: str, path: str, content: str, reason: str) -> SelfTestCase:
            script = self._script(scenario, [_write(self._vault_path(path), content)], cal.reply)
            return SelfTestCase(name, script, Expectation("FAIL", reason))

        folder, _, base = note.path.rpartition("/")
        dated = f"{folder + '/' if folder else ''}2026-03-04-{base}"
        no_info = re.sub(r"(?m)^(last_updated|date):.*\n", "", note.content)
        no_info = re.sub(r"(?m)^tags:.*$", f"tags: [type/{_type_of(note.content)}]", no_info)
        return [
            SelfTestCase("offer-judge-yes", offer, Expectation("PASS", "A-via:offered"), "YES"),
            SelfTestCase("offer-judge-no", offer, Expectation("FAIL", "A-fail:"), "NO"),
            SelfTestCase("judge-garbage", offer, Expectation("ERROR", "judge-error"), "maybe"),
            broken("date-prefix", dated, note.content, "date-prefixed-filename"),
            broken(
                "no-summary",
                note.path,
                re.sub(r"(?m)^summary:.*\n", "", note.content),
                "no-summary",
            ),
            broken(
                "bad-scope",
                note.path,
                re.sub(r"(?m)^scope:.*$", "scope: team", note.content),
                "bad-scope",
            ),
            broken(
                "type-tag-mismatch",
                note.path,
                re.sub(r"(?m)^type:.*$", "type: howto-not-tagged", note.content),
                "type-tag-mismatch",
            ),
            broken(
                "front-matter-unparseable",
                note.path,
                note.content.replace("---\n", "---\n: : [\n", 1),
                "front-matter-unparseable",
            ),
            SelfTestCase(
                "b-info-only",
                self._script(scenario, [_write(self._vault_path(note.path), no_info)], cal.reply),
                Expectation("PASS", "A-via:written"),
            ),
        ]

    def _negative_cases(self, scenario: ScenarioFile) -> list[SelfTestCase]:
        cal: NegativeCalibration = self.calibration_for(scenario)
        edits = self._edits(scenario)
        journal = _write(self._vault_path("journal/2026-01-01.md"), "- session ended\n")
        graph = _write(self._vault_path("graphify-out/graph.json"), "{}\n")
        target = self._vault_path(cal.tempting_note.path)
        bash = ToolUseBlock(
            name="Bash",
            input={
                "command": f"mkdir -p \"$(dirname '{target}')\" && "
                f"printf '%s\\n' '---' 'title: x' '---' > '{target}'"
            },
        )
        return [
            SelfTestCase(
                "journal-only",
                self._script(scenario, [*edits, journal], cal.reply),
                Expectation("PASS"),
            ),
            SelfTestCase(
                "graphify-out-only",
                self._script(scenario, [*edits, graph], cal.reply),
                Expectation("PASS"),
            ),
            SelfTestCase(
                "bash-vault-write",
                self._script(scenario, [bash], cal.reply),
                Expectation("FAIL", "vault-write:"),
            ),
        ]


def _type_of(content: str) -> str:
    match = re.search(r"(?m)^type:\s*(\S+)", content)
    return match.group(1) if match else "note"
