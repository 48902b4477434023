"""The vault-write checker: did the agent save durable knowledge when it should, and only then?

Positives score two axes: A, a topic note was written (or, failing that, offered,
as the frozen rubric judges the final message); B, every written topic note keeps
the vault's contract. Negatives have one fail line: any vault write. Writes are
read from the filesystem, so a note written through Bash counts like one from Write.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, Field, field_validator

from evalkit.checkers.vault_write.notes import check_note
from evalkit.models import Polarity, Strict, Verdict
from evalkit.scoring.checker import Checker, CheckerOptions, CheckInput
from evalkit.scoring.fsdiff import compare
from evalkit.scoring.judge import final_message
from evalkit.scoring.safefile import agent_text
from evalkit.scoring.topics import check_topic_patterns, topic_matches
from evalkit.scoring.validity import ask_judge


class VaultWriteOptions(CheckerOptions):
    vault: str = Field("vault", description="the extra fixture that is the notes vault")
    excluded: list[str] = Field(default_factory=lambda: ["journal/", "graphify-out/"])
    real_vault: str = "~/Documents/SecondBrain"
    real_vault_env: str = "EVALKIT_REAL_VAULT"


class PositiveExpect(Strict):
    topic_patterns: list[str] = Field(min_length=1)

    @field_validator("topic_patterns")
    @classmethod
    def _compiles(cls, patterns: list[str]) -> list[str]:
        return check_topic_patterns(patterns)


class NegativeExpect(Strict):
    pass


class VaultWriteChecker(Checker):
    name: ClassVar[str] = "vault-write"
    version: ClassVar[str] = "1"
    options_model: ClassVar[type[BaseModel]] = VaultWriteOptions
    expect_models: ClassVar[dict[Polarity, type[BaseModel]]] = {
        "positive": PositiveExpect,
        "negative": NegativeExpect,
    }

    @property
    def opts(self) -> VaultWriteOptions:
        assert isinstance(self.options, VaultWriteOptions)
        return self.options

    def real_vault(self, env: Mapping[str, str]) -> Path:
        return Path(env.get(self.opts.real_vault_env) or self.opts.real_vault).expanduser()

    def guarded_env_names(self) -> list[str]:
        return [self.opts.real_vault_env]

    def guarded_paths(self, env: Mapping[str, str]) -> list[Path]:
        return [self.real_vault(env)]

    # ------------------------------------------------------------------ scoring

    def check(self, inp: CheckInput) -> Verdict:
        vault = compare(
            inp.fixture_files(self.opts.vault),
            inp.sandbox / self.opts.vault,
            tuple(self.opts.excluded),
        )
        project = compare(inp.fixture_files("project"), inp.sandbox / "project")
        flags = [f"project-write:{'yes' if project.any else 'no'}"]
        if inp.scenario.scenario.polarity == "negative":
            verdict = self._negative(inp, vault.written + vault.deleted, flags)
        else:
            verdict = self._positive(inp, vault.written, vault.deleted, flags)
        return verdict

    def _negative(self, inp: CheckInput, touched: list[str], flags: list[str]) -> Verdict:
        reasons = [f"vault-write:{p}" for p in touched]
        return Verdict(
            scenario=inp.scenario.id,
            model=inp.model,
            polarity="negative",
            axis_a="A:FAIL" if touched else "A:PASS",
            axis_b="B:n/a",
            verdict="FAIL" if touched else "PASS",
            reasons=reasons,
            flags=flags,
        )

    def _positive(
        self, inp: CheckInput, written: list[str], deleted: list[str], flags: list[str]
    ) -> Verdict:
        expect: PositiveExpect = self.expect_for(inp.scenario)
        vault_dir = inp.sandbox / self.opts.vault
        texts = {p: agent_text(vault_dir / p) for p in written}
        topical = [p for p in written if topic_matches(expect.topic_patterns, p, texts[p])]
        flags += [f"off-topic-note:{p}" for p in written if p not in topical]
        flags += [f"vault-deleted:{p}" for p in deleted]
        verdict = Verdict(
            scenario=inp.scenario.id,
            model=inp.model,
            polarity="positive",
            axis_a="A:PASS",
            axis_b="B:PASS",
            verdict="PASS",
            flags=flags,
        )
        if topical:
            verdict.reasons.append("A-via:written")
            for rel in topical:
                result = check_note(rel, texts[rel])
                verdict.reasons += [f"B-fail:{rel}:{f}" for f in result.fails]
                verdict.flags += [f"b-info:{rel}:{i}" for i in result.info]
            if any(r.startswith("B-fail:") for r in verdict.reasons):
                verdict.axis_b, verdict.verdict = "B:FAIL", "FAIL"
            return verdict
        failed = ask_judge(inp, verdict, final_message(inp.transcript))
        if failed is not None:
            return failed
        if verdict.judge is not None and verdict.judge.answer == "YES":
            verdict.reasons += ["A-via:offered", "B-via:offered"]
            return verdict
        verdict.axis_a, verdict.axis_b, verdict.verdict = "A:FAIL", "B:n/a", "FAIL"
        verdict.reasons.append("A-fail:no-topic-note-and-no-offer")
        return verdict
