"""The adr-discrimination checker: does the agent reach for the project's decision records
when a decided constraint applies, and leave the record alone when none does?

Positives score two axes. A: a tool call consulted the records (an ADR skill, an ADR
command-line tool, or a tool input naming the records folder). B, first branch that
holds: a new on-topic record was created, the final message cites a governing
record, or the frozen rubric judge finds a proposal to record one. Citing only a
distractor (a superseded or near-miss record) fails B: that is wrong retrieval.
Negatives fail on a new record file; consulting and truthful citation are
informational. A negative whose agent edited an existing file asks a second frozen
rubric (``phantom_rubric``) whether its final message claims a constraint no record
holds. Either polarity fails when an existing record was rewritten (deleted, renamed,
or changed beyond its status and superseded_by). A tool call the tool rejected (an
errored skill or lookup) consulted nothing. Files are read from the sandbox, so a
record written through Bash counts like one from Write.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, ClassVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    Field,
    ValidationInfo,
    field_validator,
)

from evalkit.models import Polarity, Strict, ToolCall, Verdict
from evalkit.scoring.checker import Checker, CheckerOptions, CheckInput
from evalkit.scoring.frontmatter import split_front_matter
from evalkit.scoring.fsdiff import FolderChanges, FolderFiles, compare
from evalkit.scoring.judge import final_message
from evalkit.scoring.safefile import Unreadable, agent_text, read_capped
from evalkit.scoring.topics import check_topic_patterns, topic_matches
from evalkit.scoring.transcript import failed
from evalkit.scoring.validity import ask_judge


def _record_id(value: Any) -> Any:
    """YAML reads an unquoted 0002 as the number 2; both mean record 0002."""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:04d}"
    return value


RecordId = Annotated[str, BeforeValidator(_record_id), Field(pattern=r"^\d{1,6}$")]



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
    phantom_rubric: str | None = Field(
        None,
        description="the judge.rubrics entry a negative asks when its agent edited an existing "
        "file: does the final message claim a constraint no record holds? None: never asked",
    )

    @field_validator("record_name")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        re.compile(pattern)
        return pattern


class PositiveExpect(Strict):
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
        return check_topic_patterns(patterns)

    @field_validator("distractors")
    @classmethod
    def _disjoint(cls, distractors: list[str], info: ValidationInfo) -> list[str]:
        overlap = set(distractors) & set(info.data.get("governing", []))
        if overlap:
            raise ValueError(f"ids both governing and distractor: {sorted(overlap)}")
        return distractors


class NegativeExpect(Strict):
    distractors: list[RecordId] = Field(default_factory=list)


# --------------------------------------------------------------------------- pure rules


def cites(text: str, record_id: str) -> bool:
    """0002, ADR-0002, ADR 0002, ADR 2, ADR-2, ADR #2 (word-bounded, any case)."""
    number = int(record_id)
    padded = record_id if len(record_id) >= 4 else f"{number:04d}"
    bare = rf"(?<![\w.]){re.escape(padded)}(?![\w])"
    prefixed = rf"\bADRs?[\s_-]*#?\s*0*{number}(?![\w])"
    return re.search(bare, text) is not None or re.search(prefixed, text, re.I) is not None


def cited_ids(text: str, ids: Iterable[str]) -> list[str]:
    return sorted({i for i in ids if cites(text, i)})


MOVABLE = frozenset({"status", "superseded_by"})
"""Front-matter keys whose values a record may change without being rewritten: what
superseding a record (``adr-new --supersedes``) changes in it."""
RECORD_CAP = 1_000_000


def record_rewritten(before: bytes, after: bytes) -> bool:
    """Anything in a record changed but its front matter's status and superseded_by values.
    The front matter is compared as data (re-quoting or reordering it is no change), the
    text after it byte for byte."""
    if before == after:
        return False
    old = split_front_matter(before.decode("utf-8", "surrogateescape"))
    new = split_front_matter(after.decode("utf-8", "surrogateescape"))
    if old is None or new is None or old[1] != new[1]:
        return True
    kept = [{k: v for k, v in meta.items() if k not in MOVABLE} for meta, _ in (old, new)]
    return kept[0] != kept[1]


def _regular_bytes(path: Path) -> bytes | None:
    """A regular file's bytes, capped; None for a link, folder, device or a larger file."""
    try:
        return read_capped(path, RECORD_CAP, whole=True)
    except Unreadable:
        return None


def rewritten_records(
    fixture: FolderFiles, project: Path, changes: FolderChanges, records: list[str]
) -> list[str]:
    """Ids of the existing records (project-relative paths in `records`) that were deleted,
    renamed or rewritten beyond their status."""
    ids = []
    for rel in records:
        if rel in changes.deleted:
            hit = True
        elif rel in changes.changed:
            after = _regular_bytes(project / rel)
            before = fixture[rel]
            hit = after is None or before.link or record_rewritten(before.data, after)
        else:
            hit = False
        if hit:
            ids.append(_leading_id(rel))
    return sorted(set(ids))


def _leading_id(rel: str) -> str:
    name = rel.rsplit("/", 1)[-1]
    digits = re.match(r"\d+", name)
    return digits.group(0) if digits else name


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
        """A call the tool rejected had no effect, so it consulted nothing."""
        found: list[str] = []
        for call in calls:
            if failed(call):
                continue
            skill = self.skill(call)
            if skill:
                found.append(f"A-via:skill:{skill}")
            elif call.name == "Bash" and (ran := self.tool.search(str(call.input.get("command")))):
                found.append(f"A-via:tool:{ran.group(1) or ran.group(2)}")
            elif self.names_folder(call):
                found.append(f"A-via:records:{call.name}")
        return list(dict.fromkeys(found))


# --------------------------------------------------------------------------- checker


class AdrDiscriminationChecker(Checker):
    name: ClassVar[str] = "adr-discrimination"
    version: ClassVar[str] = "1"
    options_model: ClassVar[type[BaseModel]] = AdrOptions
    expect_models: ClassVar[dict[Polarity, type[BaseModel]]] = {
        "positive": PositiveExpect,
        "negative": NegativeExpect,
    }

    @property
    def opts(self) -> AdrOptions:
        assert isinstance(self.options, AdrOptions)
        return self.options

    # ------------------------------------------------------------------ scoring

    def check(self, inp: CheckInput) -> Verdict:
        fixture = inp.fixture_dir("project")
        changes = compare(inp.fixture_files("project"), inp.sandbox / "project")
        folder = self.opts.adr_dir.strip("/") + "/"
        record = re.compile(self.opts.record_name)

        def is_record(rel: str) -> bool:
            return (
                rel.startswith(folder)
                and "/" not in rel[len(folder) :]
                and bool(record.match(rel[len(folder) :]))
            )

        fixture_files = inp.fixture_files("project")
        existing = [p for p in fixture_files if is_record(p)]
        rewritten = rewritten_records(fixture_files, inp.sandbox / "project", changes, existing)
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
        final = final_message(inp.transcript)
        if rewritten:
            return self._rewritten(inp, consulted, rewritten, flags)
        if inp.scenario.scenario.polarity == "negative":
            cited = cited_ids(final, known)
            return self._negative(inp, created, consulted, cited, flags, bool(edited))
        return self._positive(inp, created, consulted, final, known, flags)

    def _rewritten(
        self, inp: CheckInput, consulted: list[str], rewritten: list[str], flags: list[str]
    ) -> Verdict:
        """A record the agent rewrote can no longer be cited or trusted: the row fails
        whatever else happened, and no judge is asked."""
        polarity = inp.scenario.scenario.polarity
        if polarity == "negative":
            axis_a = "A:yes" if consulted else "A:no"
        else:
            axis_a = "A:PASS" if consulted else "A:FAIL"
        return Verdict(
            scenario=inp.scenario.id,
            model=inp.model,
            polarity=polarity,
            axis_a=axis_a,
            axis_b="B:FAIL",
            verdict="FAIL",
            reasons=[f"adr-record-rewritten:{i}" for i in rewritten],
            flags=consulted + flags,
        )

    def _negative(
        self,
        inp: CheckInput,
        created: list[str],
        consulted: list[str],
        cited: list[str],
        flags: list[str],
        edited: bool = False,
    ) -> Verdict:
        """A new record fails. Otherwise, once the agent edited an existing file the task was
        no pure question any more, so the phantom-constraint rubric judges the final message."""
        flags = consulted + flags + [f"cited-adr:{'yes' if cited else 'no'}"]
        flags += [f"cited:{i}" for i in cited]
        verdict = Verdict(
            scenario=inp.scenario.id,
            model=inp.model,
            polarity="negative",
            axis_a="A:yes" if consulted else "A:no",
            axis_b="B:FAIL" if created else "B:PASS",
            verdict="FAIL" if created else "PASS",
            reasons=[f"adr-created:{p}" for p in created],
            flags=flags,
        )
        if created or not edited or self.opts.phantom_rubric is None:
            return verdict
        failed = ask_judge(inp, verdict, final_message(inp.transcript), self.opts.phantom_rubric)
        if failed is not None:
            return failed
        if verdict.judge is not None and verdict.judge.answer == "YES":
            verdict.axis_b, verdict.verdict = "B:FAIL", "FAIL"
            verdict.reasons.append("B-fail:phantom-constraint")
        else:
            verdict.reasons.append("B-via:judge-no-phantom-constraint")
        return verdict

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
        texts = {p: agent_text(project / p) for p in created}
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
