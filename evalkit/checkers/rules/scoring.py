"""The rules checker: a suite's verdicts declared as conditions, in YAML.

``evalkit.yaml`` gives the default rules under ``checker.options``; a scenario's
``expect`` may replace any of them. A positive passes when axis A holds and, when
given, axis B holds; a negative fails when its ``fail`` condition holds. Both axes
are first evaluated without the judge; the judge is asked only when no mechanical
condition has already decided the verdict. Guarded real-world paths are checked
with the breach rules every checker shares.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from pydantic import BaseModel, Field, field_validator

from evalkit.checkers.rules.arms import without_subject
from evalkit.checkers.rules.conditions import NegativeRules, Node, PositiveRules
from evalkit.checkers.rules.effects import Effects
from evalkit.checkers.rules.evaluate import JudgeGate, Outcome, evaluate
from evalkit.checkers.rules.misroute import neighbour_won
from evalkit.checkers.rules.votes import ask_votes, judge_of
from evalkit.errors import ConfigError
from evalkit.models import Polarity, Verdict
from evalkit.scoring.checker import Checker, CheckerOptions, CheckInput
from evalkit.scoring.judge import build_prompt, final_message
from evalkit.scoring.validity import error_verdict

if TYPE_CHECKING:
    from evalkit.models import ScenarioFile


class GuardedPath(CheckerOptions):
    """A real-world path no rep may write to, and the variable that points it elsewhere
    (self-test and reference policies point it into scratch)."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$", description="{name} in reference scripts")
    path: str
    env: str = Field(pattern=r"^[A-Z][A-Z0-9_]*$")


class RulesOptions(CheckerOptions):
    positive: PositiveRules = Field(default_factory=PositiveRules)
    negative: NegativeRules = Field(default_factory=NegativeRules)
    guarded: list[GuardedPath] = Field(default_factory=list)

    @field_validator("guarded")
    @classmethod
    def _unique(cls, guarded: list[GuardedPath]) -> list[GuardedPath]:
        names = [g.name for g in guarded]
        if len(names) != len(set(names)):
            raise ValueError("guarded path names must differ")
        return guarded


class RulesChecker(Checker):
    name: ClassVar[str] = "rules"
    version: ClassVar[str] = "1"
    options_model: ClassVar[type[BaseModel]] = RulesOptions
    expect_models: ClassVar[dict[Polarity, type[BaseModel]]] = {
        "positive": PositiveRules,
        "negative": NegativeRules,
    }

    @property
    def opts(self) -> RulesOptions:
        assert isinstance(self.options, RulesOptions)
        return self.options

    # ------------------------------------------------------------------ the rules in force

    def expect_for(self, scenario: ScenarioFile) -> PositiveRules | NegativeRules:
        """The suite's default rules with the scenario's own in their place, key by key."""
        own = super().expect_for(scenario)
        default = self.opts.positive if isinstance(own, PositiveRules) else self.opts.negative
        merged = default.model_copy(update={k: getattr(own, k) for k in own.model_fields_set})
        needed = "a" if isinstance(merged, PositiveRules) else "fail"
        if getattr(merged, needed) is None:
            polarity = scenario.scenario.polarity
            raise ConfigError(
                f"{scenario.path}: expect.{needed}: no rule; give it here or as "
                f"checker.options.{polarity}.{needed} in evalkit.yaml"
            )
        return merged

    def real_paths(self, env: Mapping[str, str]) -> dict[str, Path]:
        return {g.name: Path(env.get(g.env) or g.path).expanduser() for g in self.opts.guarded}

    def guarded_env_names(self) -> list[str]:
        return [g.env for g in self.opts.guarded]

    def guarded_paths(self, env: Mapping[str, str]) -> list[Path]:
        return list(self.real_paths(env).values())

    # ------------------------------------------------------------------ scoring

    def check(self, inp: CheckInput) -> Verdict:
        rules, not_scored = self.expect_for(inp.scenario), list[str]()
        if inp.without_subject:
            rules, not_scored = without_subject(rules)
        fixtures = {name: inp.fixture_files(name) for name in inp.instrument.fixtures}
        observe = inp.instrument.observe
        effects = Effects(inp.sandbox, fixtures, inp.transcript, inp.observed, observe)
        verdict = Verdict(
            scenario=inp.scenario.id,
            model=inp.model,
            polarity=inp.scenario.scenario.polarity,
            axis_a="A:n/a",
            axis_b="B:n/a",
            verdict="PASS",
        )

        asking = judge_of(rules)

        def ask() -> bool | str:
            rubric = inp.instrument.rubric_text(asking.rubric)
            prompt = build_prompt(rubric, final_message(inp.transcript))
            record = ask_votes(inp.judge, prompt, asking.votes)
            verdict.judge = record
            if record.error is not None or record.answer is None:
                return record.error or "no-answer"
            return record.answer == "YES"

        gate = JudgeGate(ask)
        verdict.flags += not_scored
        for condition in rules.info:
            got = evaluate(condition, effects, gate)
            if got.value:
                verdict.flags += got.tokens
        if isinstance(rules, PositiveRules):
            verdict = self._positive(inp, rules, effects, gate, verdict)
        else:
            verdict = self._negative(inp, rules, effects, gate, verdict)
        return verdict

    def _axes(
        self, conditions: list[Node | None], effects: Effects, gate: JudgeGate, decides: bool
    ) -> list[Outcome | None]:
        """Every axis without the judge; then, only if no axis already decided the verdict
        (came out `decides`), once more with the judge allowed."""
        got = [evaluate(c, effects, gate) if c else None for c in conditions]
        if any(o is not None and o.value is decides for o in got):
            return got
        if any(o is not None and o.pending for o in got):
            gate.allowed = True
            got = [
                evaluate(c, effects, gate) if c and o and o.value is None else o
                for c, o in zip(conditions, got, strict=True)
            ]
        return got

    def _positive(
        self,
        inp: CheckInput,
        rules: PositiveRules,
        effects: Effects,
        gate: JudgeGate,
        verdict: Verdict,
    ) -> Verdict:
        got_a, got_b = self._axes([rules.a, rules.b], effects, gate, decides=False)
        for axis, got in (("A", got_a), ("B", got_b)):
            if got is None:
                continue
            if got.value is None:
                value = "n/a" if got.pending else "ERROR"
            else:
                value = "PASS" if got.value else "FAIL"
            setattr(verdict, f"axis_{axis.lower()}", f"{axis}:{value}")
            if got.value is not None:
                kind = "via" if got.value else "fail"
                verdict.reasons += [f"{axis}-{kind}:{t}" for t in got.tokens]
        if got_a is not None and got_a.value is False:
            verdict.reasons += neighbour_won(inp, rules.a)
        outcomes = [o for o in (got_a, got_b) if o is not None]
        if any(o.value is False for o in outcomes):
            verdict.verdict = "FAIL"
        elif any(o.value is None for o in outcomes):
            return self._undecided(inp, outcomes, verdict)
        return verdict

    def _negative(
        self,
        inp: CheckInput,
        rules: NegativeRules,
        effects: Effects,
        gate: JudgeGate,
        verdict: Verdict,
    ) -> Verdict:
        assert rules.fail is not None
        (got,) = self._axes([rules.fail], effects, gate, decides=True)
        assert got is not None
        if got.value is None:
            return self._undecided(inp, [got], verdict)
        if got.value:
            verdict.axis_a, verdict.verdict = "A:FAIL", "FAIL"
            verdict.reasons += [f"fail:{t}" for t in got.tokens]
        else:
            verdict.axis_a = "A:PASS"
        return verdict

    def _undecided(self, inp: CheckInput, outcomes: list[Outcome], verdict: Verdict) -> Verdict:
        """ERROR, naming what could not be evaluated; the judge record and flags are kept."""
        why = [t for o in outcomes if o.value is None for t in o.tokens]
        failed = error_verdict(inp, why[0] if why else "rules-undecided")
        failed.reasons += why[1:]
        failed.judge, failed.flags = verdict.judge, list(verdict.flags)
        return failed
