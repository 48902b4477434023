"""The adr-discrimination checker: does the agent reach for the project's decision records
when a decided constraint applies, and leave the record alone when none does?

Positives score two axes. A: a tool call consulted the records (an ADR skill, an ADR
command-line tool, or a tool input naming the records folder). B, first branch that
holds: a new on-topic record was created, the final message cites a governing
record, or the frozen rubric judge finds a proposal to record one. Citing only a
distractor (a superseded or near-miss record) fails B: that is wrong retrieval.
Negatives have one fail line, a new record file; consulting and truthful citation
are informational. Files are read from the sandbox, so a record written through
Bash counts like one from Write.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, ClassVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
)

from evalkit.checkers import register
from evalkit.models import Model, Polarity, Script, Step, TextBlock, ToolCall, ToolUseBlock, Verdict
from evalkit.scoring.checker import (
    Checker,
    CheckerOptions,
    CheckInput,
    Expectation,
    Policy,
    PolicyPlan,
    SelfTestCase,
)
from evalkit.scoring.fsdiff import compare
from evalkit.scoring.rules import ask_judge, preflight
from evalkit.suite.scenarios import ScenarioFile


def _record_id(value: Any) -> Any:
    """YAML reads an unquoted 0002 as the number 2; both mean record 0002."""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:04d}"
    return value


RecordId = Annotated[str, BeforeValidator(_record_id), Field(pattern=r"^\d{1,6}$")]


class _Strict(Model):
    model_config = ConfigDict(extra="forbid")


class AdrOptions(CheckerOptions):
    adr_dir: str = Field("docs/adr", description="project-relative folder of the records")
    record_name: str = Field(
        r"^\d{3,}-.+\.md$", description="file names in adr_dir that are records"
    )
    skill_prefix: str = Field("os-adr", description="plugin name that qualifies its skills")
    skills: list[str] = Field(
        default_factory=lambda: ["find", "create"], description="its skills' bare names"
    )
    tools: list[str] = Field(
        default_factory=lambda: ["adr-find", "adr-new"],
        description="its command-line tools; any bin/adr-* path counts too",
    )

    @field_validator("record_name")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        re.compile(pattern)
        return pattern


def _check_patterns(patterns: list[str]) -> list[str]:
    for pattern in patterns:
        try:
            re.compile(pattern, re.IGNORECASE)
        except re.error as exc:
            raise ValueError(f"pattern {pattern!r} does not compile: {exc}") from None
    return patterns


class PositiveExpect(_Strict):
    governing: list[RecordId] = Field(min_length=1, description="citing any of these passes B")
    distractors: list[RecordId] = Field(
        default_factory=list, description="citing only these (and no governing id) fails B"
    )
    topic_patterns: list[str] = Field(
        min_length=1, description="regexes; a created record's path+text must match one"
    )

    @field_validator("topic_patterns")
    @classmethod
    def _compiles(cls, patterns: list[str]) -> list[str]:
        return _check_patterns(patterns)

    @field_validator("distractors")
    @classmethod
    def _disjoint(cls, distractors: list[str], info: ValidationInfo) -> list[str]:
        overlap = set(distractors) & set(info.data.get("governing", []))
        if overlap:
            raise ValueError(f"ids both governing and distractor: {sorted(overlap)}")
        return distractors


class NegativeExpect(_Strict):
    distractors: list[RecordId] = Field(default_factory=list)


class FileSpec(_Strict):
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


class PositiveCalibration(_Strict):
    reply: str = Field(description="the ideal final message; cites a governing record")
    adr: FileSpec = Field(description="an on-topic new record, as an always-create agent writes")
    edits: list[FileSpec] = Field(default_factory=list)


class NegativeCalibration(_Strict):
    reply: str = Field(description="the ideal answer; may cite records truthfully")
    adr: FileSpec = Field(description="the record an always-create agent would wrongly write")
    edits: list[FileSpec] = Field(default_factory=list, description="new files only")


NEUTRAL_REPLY = "Done. I went through the code and made the change; the tests pass."
NEUTRAL_ANSWER = "I went through the code and answered from it; nothing needed to change."
PROPOSAL = (
    "This would change how the whole system behaves, so it deserves an architecture "
    "decision record before any code changes. Shall I write one up for you to approve?"
)
UNRELATED_RECORD = (
    '---\nid: "0007"\ntitle: Format the code with a line length of 100\n'
    "status: Proposed\ndate: 2026-03-10\n---\n\n# 0007. Format the code with a line length "
    "of 100\n\n## Decision\n\nKeep lines at most 100 characters long.\n"
)


# --------------------------------------------------------------------------- pure rules


def topic_matches(patterns: list[str], rel_path: str, text: str) -> bool:
    haystack = f"{rel_path}\n{text}"
    return any(re.search(p, haystack, re.IGNORECASE) for p in patterns)


def cites(text: str, record_id: str) -> bool:
    """0002, ADR-0002, ADR 0002, ADR 2, ADR-2, ADR #2 (word-bounded, any case)."""
    number = int(record_id)
    padded = record_id if len(record_id) >= 4 else f"{number:04d}"
    bare = rf"(?<![\w.]){re.escape(padded)}(?![\w])"
    prefixed = rf"\bADRs?[\s_-]*#?\s*0*{number}(?![\w])"
    return re.search(bare, text) is not None or re.search(prefixed, text, re.I) is not None


def cited_ids(text: str, ids: Iterable[str]) -> list[str]:
    return sorted({i for i in ids if cites(text, i)})


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


class Consultation:
    """Which tool calls reached the decision records, and how."""

    def __init__(self, opts: AdrOptions) -> None:
        self.opts = opts
        folder = re.escape(opts.adr_dir.strip("/"))
        self.folder = re.compile(rf"(?<![\w.-]){folder}(?![\w.-])")
        names = "|".join(re.escape(t) for t in opts.tools) or r"(?!)"
        self.tool = re.compile(rf"(?<![\w.-])({names})(?![\w.-])|\bbin/(adr-[\w-]+)")

    def skill(self, call: ToolCall) -> str | None:
        if call.name not in ("Skill", "SlashCommand"):
            return None
        raw = str(call.input.get("skill") or call.input.get("command") or "").strip()
        name = raw.split()[0].lstrip("/") if raw else ""
        prefix, _, bare = name.rpartition(":")
        if prefix == self.opts.skill_prefix or (not prefix and bare in self.opts.skills):
            return name
        return None

    def names_folder(self, call: ToolCall) -> bool:
        texts = _strings(call.input)
        base = call.input.get("path")
        if isinstance(base, str):
            texts += [f"{base.rstrip('/')}/{call.input.get(k)}" for k in ("pattern", "glob")]
        return any(self.folder.search(t) for t in texts)

    def reasons(self, calls: list[ToolCall]) -> list[str]:
        found: list[str] = []
        for call in calls:
            skill = self.skill(call)
            if skill:
                found.append(f"A-via:skill:{skill}")
            elif call.name == "Bash" and (ran := self.tool.search(str(call.input.get("command")))):
                found.append(f"A-via:tool:{ran.group(1) or ran.group(2)}")
            elif self.names_folder(call):
                found.append(f"A-via:records:{call.name}")
        return list(dict.fromkeys(found))


# --------------------------------------------------------------------------- checker


@register
class AdrDiscriminationChecker(Checker):
    name: ClassVar[str] = "adr-discrimination"
    version: ClassVar[str] = "1"
    options_model: ClassVar[type[BaseModel]] = AdrOptions
    expect_models: ClassVar[dict[Polarity, type[BaseModel]]] = {
        "positive": PositiveExpect,
        "negative": NegativeExpect,
    }
    calibration_models: ClassVar[dict[Polarity, type[BaseModel]]] = {
        "positive": PositiveCalibration,
        "negative": NegativeCalibration,
    }
    source_modules: ClassVar[tuple[str, ...]] = ("evalkit.scoring.fsdiff", "evalkit.scoring.judge")
    policies: ClassVar[tuple[Policy, ...]] = (
        Policy("oracle", description="finds the governing record, cites it; answers negatives"),
        Policy("always-create", description="writes a new decision record on every task"),
        Policy("never-consult", description="never touches the records and cites none"),
        Policy("cite-distractor", description="consults, then cites only a distractor"),
    )

    @property
    def opts(self) -> AdrOptions:
        assert isinstance(self.options, AdrOptions)
        return self.options

    # ------------------------------------------------------------------ scoring

    def check(self, inp: CheckInput) -> Verdict:
        early = preflight(inp, [])
        if early is not None:
            return early
        fixture = inp.suite.fixture_dirs()["project"]
        changes = compare(fixture, inp.sandbox / "project")
        folder = self.opts.adr_dir.strip("/") + "/"
        record = re.compile(self.opts.record_name)

        def is_record(rel: str) -> bool:
            return (
                rel.startswith(folder)
                and "/" not in rel[len(folder) :]
                and bool(record.match(rel[len(folder) :]))
            )

        created = [p for p in changes.added if is_record(p)]
        flags = [
            f"adr-dir-changed:{p}"
            for p in changes.written
            if p.startswith(folder) and p not in created
        ]
        flags += [f"adr-dir-deleted:{p}" for p in changes.deleted if p.startswith(folder)]
        edited = [p for p in changes.changed if not p.startswith(folder)]
        flags.append(f"existing-file-edited:{'yes' if edited else 'no'}")
        known = _record_ids(fixture / folder, record)
        consulted = Consultation(self.opts).reasons(inp.transcript.tool_calls)
        final = inp.transcript.final_message
        if inp.scenario.scenario.polarity == "negative":
            return self._negative(inp, created, consulted, cited_ids(final, known), flags)
        return self._positive(inp, created, consulted, final, known, flags)

    def _negative(
        self,
        inp: CheckInput,
        created: list[str],
        consulted: list[str],
        cited: list[str],
        flags: list[str],
    ) -> Verdict:
        flags = consulted + flags + [f"cited-adr:{'yes' if cited else 'no'}"]
        flags += [f"cited:{i}" for i in cited]
        return Verdict(
            scenario=inp.scenario.id,
            model=inp.model,
            polarity="negative",
            axis_a="A:yes" if consulted else "A:no",
            axis_b="B:FAIL" if created else "B:PASS",
            verdict="FAIL" if created else "PASS",
            reasons=[f"adr-created:{p}" for p in created],
            flags=flags,
        )

    def _positive(
        self,
        inp: CheckInput,
        created: list[str],
        consulted: list[str],
        final: str,
        known: list[str],
        flags: list[str],
    ) -> Verdict:
        expect: PositiveExpect = self.expect_for(inp.scenario)
        project = inp.sandbox / "project"
        texts = {p: (project / p).read_bytes().decode("utf-8", "replace") for p in created}
        topical = [p for p in created if topic_matches(expect.topic_patterns, p, texts[p])]
        flags += [f"off-topic-adr:{p}" for p in created if p not in topical]
        cited = cited_ids(final, set(known) | set(expect.governing) | set(expect.distractors))
        flags += [f"cited:{i}" for i in cited]
        governing = [i for i in cited if i in expect.governing]
        wrong = [i for i in cited if i in expect.distractors]
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
        if wrong and not governing:
            verdict.axis_b = "B:FAIL"
            verdict.reasons += [f"cited-distractor:{i}" for i in wrong]
        elif topical:
            verdict.reasons += ["B-via:created"] + [f"created:{p}" for p in topical]
        elif governing:
            verdict.reasons.append("B-via:cited-governing")
        else:
            failed = ask_judge(inp, verdict, final)
            if failed is not None:
                return failed
            if verdict.judge is not None and verdict.judge.answer == "YES":
                verdict.reasons.append("B-via:judge-proposed")
            else:
                verdict.axis_b = "B:FAIL"
                verdict.reasons.append("B-fail:no-record-citation-or-proposal")
        if not consulted or verdict.axis_b != "B:PASS":
            verdict.verdict = "FAIL"
        return verdict

    # ------------------------------------------------------------------ reference behaviour

    def _read_project_file(self, rel: str) -> Step:
        return Step(blocks=[ToolUseBlock(name="Read", input={"file_path": "{project}/" + rel})])

    def _premise(self, scenario: ScenarioFile) -> str | None:
        prefix = "fixtures/project/"
        rel = scenario.scenario.premise.file
        return rel[len(prefix) :] if rel.startswith(prefix) else None

    def _skill(self, name: str, scenario: ScenarioFile) -> Step:
        call = ToolUseBlock(
            name="Skill",
            input={"skill": f"{self.opts.skill_prefix}:{name}", "args": scenario.scenario.topic},
        )
        return Step(blocks=[TextBlock(text="Checking the project's decision records."), call])

    def _consult(self, scenario: ScenarioFile) -> list[Step]:
        steps = [self._skill("find", scenario)]
        premise = self._premise(scenario)
        index = f"{self.opts.adr_dir.strip('/')}/README.md"
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

    def _look_around(self, scenario: ScenarioFile) -> list[Step]:
        """Read the premise when it is code; never the records (that would be consulting)."""
        premise = self._premise(scenario)
        folder = self.opts.adr_dir.strip("/") + "/"
        rel = premise if premise and not premise.startswith(folder) else "README.md"
        return [self._read_project_file(rel)]

    def plan_policy(self, policy: str, scenario: ScenarioFile) -> PolicyPlan:
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
            expect_p: PositiveExpect = self.expect_for(scenario)
            if not expect_p.distractors:
                raise ValueError(f"{scenario.id}: cite-distractor needs expect.distractors")
            wrong = expect_p.distractors[0]
            final = f"I checked the decision records: ADR {wrong} covers this, so I followed it."
            script = Script(steps=self._consult(scenario), final_text=final)
            return PolicyPlan(script, Expectation("FAIL", f"cited-distractor:{wrong}"))
        known = ", ".join(p.name for p in self.policies)
        raise KeyError(f"unknown policy '{policy}' for {self.name} (known: {known})")

    def own_self_test_cases(self, scenario: ScenarioFile) -> list[SelfTestCase]:
        cases: list[SelfTestCase] = []
        if scenario.scenario.polarity == "positive":
            cases += self._positive_cases(scenario)
        else:
            cases += self._negative_cases(scenario)
        return cases

    def _bash_write(self, spec: FileSpec) -> Step:
        command = f"mkdir -p \"$(dirname '{spec.path}')\" && cat > '{spec.path}' <<'ADR_EOF'\n"
        command += spec.text().rstrip("\n") + "\nADR_EOF"
        return Step(blocks=[ToolUseBlock(name="Bash", input={"command": command})])

    def _positive_cases(self, scenario: ScenarioFile) -> list[SelfTestCase]:
        cal: PositiveCalibration = self.calibration_for(scenario)
        expect: PositiveExpect = self.expect_for(scenario)
        consult = self._consult(scenario)
        gov, folder = expect.governing[0], self.opts.adr_dir.strip("/")
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
                f"/{self.opts.skill_prefix}:find",
                Expectation("PASS", "A-via:skill:"),
            ),
            skill_as("other-plugin-skill", "other-plugin:find", Expectation("FAIL", "A-fail:")),
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
        folder = self.opts.adr_dir.strip("/")
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
        ]


def _record_ids(folder: Path, record: re.Pattern[str]) -> list[str]:
    """The ids of the fixture's records: the leading digits of each record file's name."""
    if not folder.is_dir():
        return []
    ids = set()
    for path in folder.iterdir():
        digits = re.match(r"\d+", path.name)
        if path.is_file() and record.match(path.name) and digits:
            ids.add(digits.group(0))
    return sorted(ids)
