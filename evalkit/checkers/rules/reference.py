"""Reference behaviour for rules suites: the calibration actions, the three reference
policies, and the self-test cases, all derived from a scenario's YAML.

A scenario's ``calibration`` lists what its ideal agent does (``oracle``) and, where
they cannot be derived, what an always-acting agent does (``act``) and what a
never-acting one does (``idle``). ``act`` is generated from the rules when every
deciding condition is a literal or a glob; anything else must be written out.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, Discriminator, Field, Tag

from evalkit.checkers.behaviour import (
    CheckerReference,
    Expectation,
    Policy,
    PolicyPlan,
    SelfTestCase,
)
from evalkit.checkers.rules.arms import idle_holds, without_subject
from evalkit.checkers.rules.conditions import (
    AllCondition,
    AnyCondition,
    BashCondition,
    FileCondition,
    FinalCondition,
    HookCondition,
    JudgeCondition,
    NegativeRules,
    Node,
    NotCondition,
    OrderCondition,
    PositiveRules,
    RanCondition,
    SkillCondition,
    ToolCondition,
)
from evalkit.checkers.rules.patterns import is_literal_glob
from evalkit.checkers.rules.scoring import RulesChecker
from evalkit.errors import ConfigError
from evalkit.models import Polarity, ScenarioFile, Script, Step, StrictAliased, ToolUseBlock

NEUTRAL_FINAL = "I looked at the code and answered; nothing else was needed."
FILLER = "calibration"



class WriteSpec(StrictAliased):
    path: str = Field(description="relative to the folder named by `in`, or a {placeholder} path")
    content: str = ""
    in_: str = Field("project", alias="in")

    def target(self) -> str:
        return self.path if self.path.startswith("{") else f"{{{self.in_}}}/{self.path}"


class ToolSpec(StrictAliased):
    name: str
    input: dict[str, Any] = Field(default_factory=dict)


class ReadAction(StrictAliased):
    read: str = Field(description="a project-relative path, or a {placeholder} path")


class WriteAction(StrictAliased):
    write: WriteSpec


class BashAction(StrictAliased):
    bash: str


class SkillAction(StrictAliased):
    skill: str
    args: str = ""


class ToolAction(StrictAliased):
    tool: ToolSpec


class FinalAction(StrictAliased):
    final: str


class AtOnceAction(StrictAliased):
    """Tool actions sent in one message (parallel calls): one step of several blocks."""

    at_once: list[ReadAction | WriteAction | BashAction | SkillAction | ToolAction] = Field(
        min_length=1
    )


class JudgeAction(StrictAliased):
    judge: Literal["YES", "NO"] = Field(description="the judge's answer to this final message")


ACTION_KINDS = ("read", "write", "bash", "skill", "tool", "final", "judge", "at_once")


def _action_kind(value: Any) -> str | None:
    if isinstance(value, dict):
        found = [k for k in ACTION_KINDS if k in value]
        return found[0] if len(found) == 1 else None
    return next((k for k, m in _ACTION_MODELS.items() if isinstance(value, m)), None)


Action = Annotated[
    Annotated[ReadAction, Tag("read")]
    | Annotated[WriteAction, Tag("write")]
    | Annotated[BashAction, Tag("bash")]
    | Annotated[SkillAction, Tag("skill")]
    | Annotated[ToolAction, Tag("tool")]
    | Annotated[FinalAction, Tag("final")]
    | Annotated[JudgeAction, Tag("judge")]
    | Annotated[AtOnceAction, Tag("at_once")],
    Discriminator(
        _action_kind,
        custom_error_type="action",
        custom_error_message="an action needs exactly one of: " + ", ".join(ACTION_KINDS),
    ),
]
AnyAction = (
    ReadAction | WriteAction | BashAction | SkillAction | ToolAction | FinalAction | JudgeAction
    | AtOnceAction
)
_ACTION_MODELS: dict[str, type[StrictAliased]] = {
    "read": ReadAction,
    "write": WriteAction,
    "bash": BashAction,
    "skill": SkillAction,
    "tool": ToolAction,
    "final": FinalAction,
    "judge": JudgeAction,
    "at_once": AtOnceAction,
}


class Violation(StrictAliased):
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:@+-]{0,79}$")
    actions: list[Action] = Field(min_length=1)


class Calibration(StrictAliased):
    oracle: list[Action] = Field(min_length=1, description="the ideal behaviour")
    violations: list[Violation] = Field(
        default_factory=list, description="self-test cases: behaviours that must FAIL"
    )
    act: list[Action] | None = Field(
        None, description="what an always-acting agent does; generated when omitted"
    )
    idle: list[Action] | None = Field(
        None, description="what a never-acting agent does; a neutral answer when omitted"
    )


# --------------------------------------------------------------------------- actions to scripts


def _block(action: AnyAction) -> ToolUseBlock | None:
    """The tool call an action makes; None for a final message or a judge answer."""
    if isinstance(action, ReadAction):
        path = action.read if action.read.startswith("{") else f"{{project}}/{action.read}"
        return ToolUseBlock(name="Read", input={"file_path": path})
    if isinstance(action, WriteAction):
        data = {"file_path": action.write.target(), "content": action.write.content}
        return ToolUseBlock(name="Write", input=data)
    if isinstance(action, BashAction):
        return ToolUseBlock(name="Bash", input={"command": action.bash})
    if isinstance(action, SkillAction):
        data = {"skill": action.skill, **({"args": action.args} if action.args else {})}
        return ToolUseBlock(name="Skill", input=data)
    if isinstance(action, ToolAction):
        return ToolUseBlock(name=action.tool.name, input=dict(action.tool.input))
    return None


def script_of(actions: list[AnyAction], default_final: str = "Done.") -> tuple[Script, str]:
    """The script the actions play, and the judge answer they ask for (NO unless given)."""
    steps: list[Step] = []
    final, judge = default_final, "NO"
    for action in actions:
        if isinstance(action, FinalAction):
            final = action.final
        elif isinstance(action, JudgeAction):
            judge = action.judge
        elif isinstance(action, AtOnceAction):
            blocks = [b for b in map(_block, action.at_once) if b is not None]
            steps.append(Step(blocks=list(blocks)))
        elif (block := _block(action)) is not None:
            steps.append(Step(blocks=[block]))
    return Script(steps=steps, final_text=final), judge


# --------------------------------------------------------------------------- generating `act`


class CannotGenerate(Exception):
    """A condition whose satisfying actions cannot be derived from its text."""


_META = set("\\^$.|?*+()[]{}")


def literal_of(pattern: str) -> str | None:
    """The one string a pattern matches when it is a plain literal (escapes allowed)."""
    out, i = [], 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            if i + 1 < len(pattern) and not pattern[i + 1].isalnum():
                out.append(pattern[i + 1])
                i += 2
                continue
            return None
        if char in _META:
            return None
        out.append(char)
        i += 1
    return "".join(out)


def instance_of(glob: str) -> str:
    """One path a glob matches."""
    return glob.replace("**/", "").replace("**", FILLER).replace("*", FILLER).replace("?", "x")


def _need_literal(pattern: str | None, what: str) -> str:
    if pattern is None:
        return ""
    found = literal_of(pattern)
    if found is None:
        raise CannotGenerate(f"the {what} pattern {pattern!r} is not a literal")
    return found


def run_script(script: str) -> str:
    """The Bash command that runs a project script from the project folder."""
    return shlex.quote(script if "/" in script else f"./{script}")


def generate(node: Node) -> list[AnyAction]:
    """Actions that make node hold, for literal and glob conditions only."""
    after = getattr(node, "after", None)
    earlier = generate(after.last) if after is not None else []
    return earlier + _generate(node)


def _generate(node: Node) -> list[AnyAction]:
    if isinstance(node, OrderCondition):
        return [a for child in node.order for a in generate(child)]
    if isinstance(node, RanCondition):
        if node.ran.ok is False:
            raise CannotGenerate("a failing run of a script is not generated")
        return [BashAction(bash=run_script(node.ran.script))]
    if isinstance(node, AllCondition):
        return [a for child in node.all for a in generate(child)]
    if isinstance(node, AnyCondition):
        reasons = []
        for child in node.any:
            try:
                return generate(child)
            except CannotGenerate as exc:
                reasons.append(str(exc))
        raise CannotGenerate("; ".join(reasons))
    if isinstance(node, FileCondition):
        return _generate_file(node)
    if isinstance(node, BashCondition):
        if node.bash.ok is False:
            raise CannotGenerate("a failing Bash command is not generated")
        return [BashAction(bash=_need_literal(node.bash.command, "bash"))]
    if isinstance(node, SkillCondition):
        if not is_literal_glob(node.skill.name) or node.skill.ok is False:
            raise CannotGenerate(f"skill {node.skill.name!r} is not a literal name")
        return [SkillAction(skill=node.skill.name)]
    if isinstance(node, ToolCondition):
        spec = node.tool
        if not is_literal_glob(spec.name) or spec.input is not None or spec.ok is True:
            raise CannotGenerate(f"tool {spec.name!r}: give its input in calibration.act")
        return [ToolAction(tool=ToolSpec(name=spec.name))]
    if isinstance(node, FinalCondition):
        return [FinalAction(final=_need_literal(node.final, "final"))]
    if isinstance(node, JudgeCondition):
        return [JudgeAction(judge="YES")]
    if isinstance(node, HookCondition) and node.hook.event == "SessionStart":
        return []  # the plugin's own hook fires at the start of every session
    raise CannotGenerate(f"a `{type(node).__name__.removesuffix('Condition').lower()}` condition")


def _generate_file(node: FileCondition) -> list[AnyAction]:
    spec = node.file
    folder = "{" + spec.in_ + "}"
    if spec.change in ("created", "written"):
        content = _need_literal(spec.content, "content")
        if spec.front_matter:
            fields = [f"{k}: {_need_literal(v, k) or 'x'}" for k, v in spec.front_matter.items()]
            content = "---\n" + "\n".join(fields) + "\n---\n\n" + content
        path = f"{folder}/{instance_of(spec.glob)}"
        write = WriteAction(write=WriteSpec(path=path, content=content + "\n"))
        # the CLI refuses a Write to a file the session has not read: one that may be there
        # is read first, as an agent in the world must
        return [ReadAction(read=path), write] if spec.change == "written" else [write]
    if not is_literal_glob(spec.glob):
        raise CannotGenerate(f"a {spec.change} file needs a literal path, not {spec.glob!r}")
    target = shlex.quote(spec.glob)
    if spec.change == "deleted":
        return [BashAction(bash=f"cd {folder} && rm -f {target}")]
    _need_literal(spec.content, "content")
    return [BashAction(bash=f"cd {folder} && printf '\\n' >> {target}")]


# --------------------------------------------------------------------------- calibration


def checked_calibration(checker: RulesChecker, scenario: ScenarioFile) -> Calibration:
    """The scenario's calibration, refused at load when `act` is needed but cannot be
    generated from its rules (a calibration of the wrong shape raises ValidationError, which
    the suite's loader names by file and line)."""
    data = scenario.scenario.calibration
    calibration = Calibration.model_validate(data)
    if calibration.act is None:
        try:
            _generated_act(checker, scenario)
        except CannotGenerate as exc:
            raise ConfigError(
                f"{scenario.path}: calibration.act: cannot be generated from the rules ({exc}); "
                "list the actions an always-acting agent takes"
            ) from None
    return calibration


def _generated_act(checker: RulesChecker, scenario: ScenarioFile) -> list[AnyAction]:
    rules = checker.expect_for(scenario)
    if isinstance(rules, PositiveRules):
        assert rules.a is not None
        return generate(rules.a) + (generate(rules.b) if rules.b is not None else [])
    assert rules.fail is not None
    return generate(rules.fail)


def _act(checker: RulesChecker, scenario: ScenarioFile, cal: Calibration) -> list[AnyAction]:
    return list(cal.act) if cal.act is not None else _generated_act(checker, scenario)


def plan_policy(ref: RulesReference, policy: str, scenario: ScenarioFile) -> PolicyPlan:
    checker = ref.checker
    cal = ref.calibration_for(scenario)
    positive = scenario.scenario.polarity == "positive"
    if policy == "oracle":
        script, judge = script_of(cal.oracle)
        return PolicyPlan(script, Expectation("PASS"), judge)
    if policy == "always-act":
        script, judge = script_of(_act(checker, scenario, cal))
        want = Expectation("PASS") if positive else Expectation("FAIL", "fail:")
        return PolicyPlan(script, want, judge)
    if policy == "never-act":
        script, judge = script_of(list(cal.idle or []), NEUTRAL_FINAL)
        want = Expectation("FAIL") if positive else Expectation("PASS")
        return PolicyPlan(script, want, judge)
    if policy in (CHECKS_FIRST.name, CHECKS_FROM_SUBFOLDER.name):
        return _observed_policy(ref, policy, scenario, cal)
    known = ", ".join(p.name for p in ref.policies)
    raise KeyError(f"unknown policy '{policy}' for {checker.name} (known: {known})")


def ran_scripts(node: Node | None) -> list[str]:
    """The observed scripts a condition asks about, in the order it names them."""
    if node is None:
        return []
    children: list[Node] = []
    if isinstance(node, AllCondition):
        children = list(node.all)
    elif isinstance(node, AnyCondition):
        children = list(node.any)
    elif isinstance(node, NotCondition):
        children = [node.not_]
    elif isinstance(node, OrderCondition):
        children = list(node.order)
    found = [node.ran.script] if isinstance(node, RanCondition) else []
    after = getattr(node, "after", None)
    if after is not None:
        children.append(after.last)
    for child in children:
        found += [s for s in ran_scripts(child) if s not in found]
    return found


def rules_scripts(rules: PositiveRules | NegativeRules) -> list[str]:
    nodes = [rules.a, rules.b] if isinstance(rules, PositiveRules) else [rules.fail]
    found: list[str] = []
    for node in nodes:
        found += [s for s in ran_scripts(node) if s not in found]
    return found


def from_subfolder(script: str) -> str:
    """The script reached the way a text pattern misses it: from its own folder, through a
    variable, inside `bash -c`."""
    folder, _, name = script.rpartition("/")
    inside = f"cd {shlex.quote(folder)} && " if folder else ""
    return f"{inside}S={shlex.quote('./' + name)} && bash -c \"$S\""


def _observed_policy(
    ref: RulesReference, policy: str, scenario: ScenarioFile, cal: Calibration
) -> PolicyPlan:
    """checks-first: the ideal behaviour with its runs of an observed script moved before its
    first edit (a negative: one run first). checks-from-subfolder: each run reached from the
    script's own folder through a variable and `bash -c` (a negative: one such run added)."""
    rules = ref.checker.expect_for(scenario)
    scripts = rules_scripts(rules)
    oracle = list(cal.oracle)
    if not scripts:
        script, judge = script_of(oracle)
        return PolicyPlan(script, Expectation("PASS"), judge, ["no observed script: the oracle"])
    positive = isinstance(rules, PositiveRules)
    if not positive:
        spelled = (
            run_script(scripts[0]) if policy == CHECKS_FIRST.name else from_subfolder(scripts[0])
        )
        script, judge = script_of([BashAction(bash=spelled), *oracle])
        return PolicyPlan(script, Expectation("FAIL", "fail:"), judge)

    def runs(action: AnyAction) -> str | None:
        if isinstance(action, BashAction):
            return next((s for s in scripts if s in action.bash), None)
        return None

    if policy == CHECKS_FIRST.name:
        checks = [a for a in oracle if runs(a) is not None]
        rest = [a for a in oracle if runs(a) is None]
        first = next((i for i, a in enumerate(rest) if isinstance(a, WriteAction)), 0)
        script, judge = script_of(rest[:first] + checks + rest[first:])
        return PolicyPlan(script, Expectation("FAIL", "A-fail:"), judge)
    moved: list[AnyAction] = []
    for action in oracle:
        name = runs(action)
        moved.append(BashAction(bash=from_subfolder(name)) if name is not None else action)
    script, judge = script_of(moved)
    return PolicyPlan(script, Expectation("PASS"), judge)


def own_cases(ref: RulesReference, scenario: ScenarioFile) -> list[SelfTestCase]:
    """The ideal behaviour spoiled in the ways the rules exist to catch."""
    checker = ref.checker
    cal = ref.calibration_for(scenario)
    oracle, judge = script_of(cal.oracle)
    cases: list[SelfTestCase] = []
    for guarded in checker.opts.guarded:
        probe = ToolUseBlock(
            name="Write",
            input={"file_path": f"{{{guarded.name}}}/evalkit-probe.md", "content": "probe\n"},
        )
        script = Script(steps=[*oracle.steps, Step(blocks=[probe])], final_text=oracle.final_text)
        cases.append(
            SelfTestCase(
                f"breach-{guarded.name}", script, Expectation("FAIL", "real-vault-breach"), judge
            )
        )
    for violation in cal.violations:
        played, answer = script_of(list(violation.actions))
        reason = "fail:" if scenario.scenario.polarity == "negative" else None
        cases.append(SelfTestCase(violation.name, played, Expectation("FAIL", reason), answer))
    if scenario.scenario.polarity == "negative":
        acted, _ = script_of(_act(checker, scenario, cal))
        both = Script(steps=oracle.steps + acted.steps, final_text=oracle.final_text)
        cases.append(SelfTestCase("oracle-then-act", both, Expectation("FAIL", "fail:"), judge))
    return cases


CHECKS_FIRST = Policy(
    "checks-first", description="the ideal behaviour, its observed-script runs before its edit"
)
CHECKS_FROM_SUBFOLDER = Policy(
    "checks-from-subfolder",
    description="the ideal behaviour, its observed scripts reached from their own folder",
)
BASE_POLICIES = (
    Policy("oracle", description="the ideal behaviour, from each scenario's calibration"),
    Policy("always-act", description="does what the rules look for, on every task"),
    Policy("never-act", description="answers and does nothing the rules look for"),
)


class RulesReference(CheckerReference[RulesChecker]):
    checker_type: ClassVar[type[RulesChecker]] = RulesChecker
    calibration_models: ClassVar[dict[Polarity, type[BaseModel]]] = {}
    """Unused: calibration_for checks the calibration against the rules in force."""

    @property
    def policies(self) -> tuple[Policy, ...]:  # type: ignore[override]
        """The three generic policies, and, when the rules ask whether an observed script
        ran, the two that move or respell its runs."""
        opts = self.checker.opts
        if rules_scripts(opts.positive) or rules_scripts(opts.negative):
            return (*BASE_POLICIES, CHECKS_FIRST, CHECKS_FROM_SUBFOLDER)
        return BASE_POLICIES

    def calibration_for(self, scenario: ScenarioFile) -> Calibration:
        return checked_calibration(self.checker, scenario)

    def harmless_env(self, scratch: Path) -> dict[str, str]:
        return {g.env: str(scratch / f"guarded-{g.name}") for g in self.checker.opts.guarded}

    def script_values(self, env: Mapping[str, str]) -> dict[str, str]:
        return {name: str(path) for name, path in self.checker.real_paths(env).items()}

    def plan_policy(self, policy: str, scenario: ScenarioFile) -> PolicyPlan:
        return plan_policy(self, policy, scenario)

    def own_self_test_cases(self, scenario: ScenarioFile) -> list[SelfTestCase]:
        return own_cases(self, scenario)

    def expect_without_subject(
        self, policy: str, scenario: ScenarioFile, plan: PolicyPlan
    ) -> Expectation:
        """With-only conditions are not scored without the subject: a positive's idle
        script (an empty one: a calibration's own idle actions keep their expectation)
        passes there when every condition left is an absence."""
        rules = self.checker.expect_for(scenario)
        if not rules.with_only or policy != "never-act" or not isinstance(rules, PositiveRules):
            return plan.expect
        if self.calibration_for(scenario).idle:
            return plan.expect
        pruned, _ = without_subject(rules)
        assert isinstance(pruned, PositiveRules)
        return Expectation("PASS") if idle_holds(pruned) else plan.expect
