"""The one path to a verdict, in its documented order, on fabricated runs.

Order: breach scan; stop (timeout, interrupt); the CLI's exit status and its own error
words; a required hook that started and failed; trace validity; a required hook that
never fired; then the checker.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from evalkit.checkers.behaviour import Expectation, SelfTestCase
from evalkit.models import (
    JudgeRecord,
    Reach,
    Script,
    Step,
    ToolUseBlock,
    Transcript,
    Verdict,
)
from evalkit.reference.selftest import run_case
from evalkit.scoring.decide import ProcessRecord, decide
from evalkit.scoring.judge import Judge, interpret
from evalkit.scoring.transcript import read_transcript
from evalkit.suite.config import Suite


class CountingJudge(Judge):
    def __init__(self, raw: str = "YES") -> None:
        self.asked = 0
        self.raw = raw

    def ask(self, prompt: str) -> JudgeRecord:
        self.asked += 1
        return interpret(prompt, self.raw)


def fabricated(
    suite: Suite, tmp_path: Path, scenario: str, blocks: list[ToolUseBlock], final: str = "Done."
) -> Path:
    script = Script(steps=[Step(blocks=blocks)] if blocks else [], final_text=final)
    run_case(
        suite, suite.resolve(scenario), SelfTestCase("c", script, Expectation("PASS")), tmp_path
    )
    return tmp_path / suite.resolve(scenario).id / "c"


def breach_write() -> ToolUseBlock:
    path = os.path.join(os.environ["EVALKIT_REAL_VAULT"], "leak.md")
    return ToolUseBlock(name="Write", input={"file_path": path, "content": "x\n"})


def decide_in(
    suite: Suite,
    sandbox: Path,
    scenario: str,
    process: ProcessRecord | None,
    judge: Judge | None = None,
    transcript: Transcript | None = None,
    evidence: Path | None = None,
) -> Verdict:
    return decide(
        suite.instrument(suite.resolve(scenario)),
        sandbox,
        transcript or read_transcript(sandbox / "transcript.jsonl"),
        "m",
        judge or CountingJudge(),
        process,
        evidence=evidence,
    )


def process(**kw: object) -> ProcessRecord:
    guarded = {"EVALKIT_REAL_VAULT": os.environ["EVALKIT_REAL_VAULT"]}
    values: dict[str, object] = {"exit_code": 0, "timeout": 60.0, "guarded_env": guarded}
    values.update(kw)
    return ProcessRecord.model_validate(values)


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        ({"stopped": "timeout", "exit_code": -15}, "timeout:60s"),
        ({"stopped": "interrupted", "exit_code": -15}, "interrupted"),
        ({"exit_code": 1}, "cli-exit:1"),
    ],
)
def test_a_breach_is_named_on_an_error_row_whatever_ended_the_rep(
    suite: Suite, tmp_path: Path, record: dict[str, object], reason: str
) -> None:
    sandbox = fabricated(suite, tmp_path, "N1", [breach_write()])
    verdict = decide_in(suite, sandbox, "N1", process(**record))
    assert verdict.verdict == "ERROR"
    assert reason in verdict.reasons
    assert any(r.startswith("real-vault-breach:") for r in verdict.reasons), verdict.reasons


def test_a_failing_cli_with_no_transcript_names_its_exit_code(suite: Suite, tmp_path: Path) -> None:
    sandbox = fabricated(suite, tmp_path, "N1", [])
    verdict = decide_in(suite, sandbox, "N1", process(exit_code=1), transcript=Transcript())
    assert verdict.verdict == "ERROR"
    assert verdict.reasons[0] == "cli-exit:1"


def test_the_judge_is_never_asked_when_the_verdict_is_already_an_error(
    suite: Suite, tmp_path: Path
) -> None:
    sandbox = fabricated(suite, tmp_path, "P1", [], final="Shall I save a note?")
    judge = CountingJudge("YES")
    verdict = decide_in(suite, sandbox, "P1", process(exit_code=1), judge=judge)
    assert verdict.verdict == "ERROR"
    assert judge.asked == 0
    assert decide_in(suite, sandbox, "P1", process(), judge=judge).verdict == "PASS"
    assert judge.asked == 1


def test_a_checker_crash_leaves_its_traceback_in_the_evidence_not_on_the_terminal(
    suite: Suite,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    sandbox = fabricated(suite, tmp_path / "s", "N1", [])

    def boom(*_: object) -> Verdict:
        raise ZeroDivisionError("checker bug")

    monkeypatch.setattr(type(suite.checker), "check", boom)
    evidence = tmp_path / "evidence"
    evidence.mkdir()
    verdict = decide_in(suite, sandbox, "N1", process(), evidence=evidence)
    assert (verdict.verdict, verdict.reasons) == ("ERROR", ["checker-crashed:ZeroDivisionError"])
    assert "ZeroDivisionError: checker bug" in (evidence / "checker-error.txt").read_text()
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out


def _with_hook(sandbox: Path, **changes: object) -> None:
    path = sandbox / "transcript.jsonl"
    lines = path.read_text().splitlines()
    hook = json.loads(lines[0])
    assert hook["subtype"] == "hook_response"
    hook.update(changes)
    lines[0] = json.dumps(hook)
    path.write_text("\n".join(lines) + "\n")


def test_a_required_hook_that_started_and_failed_is_an_error(suite: Suite, tmp_path: Path) -> None:
    sandbox = fabricated(suite, tmp_path, "N1", [])
    _with_hook(sandbox, exit_code=127, outcome="error", output="")
    verdict = decide_in(suite, sandbox, "N1", process())
    assert (verdict.verdict, verdict.reasons) == ("ERROR", ["hook-failed:SessionStart:127"])


def test_a_required_hook_that_never_started_stays_a_fail(suite: Suite, tmp_path: Path) -> None:
    sandbox = fabricated(suite, tmp_path, "N1", [])
    path = sandbox / "transcript.jsonl"
    path.write_text("\n".join(path.read_text().splitlines()[1:]) + "\n")
    verdict = decide_in(suite, sandbox, "N1", process())
    assert (verdict.verdict, verdict.reasons) == ("FAIL", ["hook-missing:SessionStart"])


def test_a_truncated_trace_is_an_error_before_any_hook_verdict(
    suite: Suite, tmp_path: Path
) -> None:
    sandbox = fabricated(suite, tmp_path, "N1", [])
    verdict = decide_in(
        suite, sandbox, "N1", process(), transcript=Transcript(lines=1, bad_lines=[1])
    )
    assert verdict.verdict == "ERROR"
    assert verdict.reasons[0].startswith("transcript-unparseable-lines:")


def test_a_bash_command_that_only_reads_the_real_vault_is_not_a_breach(
    suite: Suite, tmp_path: Path
) -> None:
    real = os.environ["EVALKIT_REAL_VAULT"]
    read = ToolUseBlock(name="Bash", input={"command": f"ls {real} && cat {real}/a.md | head"})
    sandbox = fabricated(suite, tmp_path, "N1", [read])
    verdict = decide_in(suite, sandbox, "N1", process())
    assert verdict.verdict == "PASS", verdict.reasons


@pytest.mark.parametrize(
    "command",
    [
        "echo hi > {real}/a.md",
        "cp /tmp/x.md {real}/",
        "mkdir -p {real}/new",
        "cat x | tee -a {real}/log.md",
        "sed -i s/a/b/ {real}/a.md",
        "rm -rf {real}/old",
        "python3 -c \"open('{real}/a.md', 'w').write('x')\"",
        "bash -c 'echo x > {real}/a.md'",
        "cp x.md '{real}'",
        "cd {real} && git init -q",
    ],
)
def test_a_bash_command_that_writes_into_the_real_vault_is_a_breach(
    suite: Suite, tmp_path: Path, command: str
) -> None:
    real = os.environ["EVALKIT_REAL_VAULT"]
    block = ToolUseBlock(name="Bash", input={"command": command.format(real=real)})
    sandbox = fabricated(suite, tmp_path, "N1", [block])
    verdict = decide_in(suite, sandbox, "N1", process())
    assert verdict.verdict == "FAIL"
    assert any(r.startswith("real-vault-breach:Bash") for r in verdict.reasons), verdict.reasons


def test_check_refuses_a_scenario_that_contradicts_the_sandbox(
    suite: Suite, tmp_path: Path
) -> None:
    from evalkit.errors import RefusedError
    from evalkit.run.sandbox_check import check_sandbox

    sandbox = fabricated(suite, tmp_path, "P1", [])
    with pytest.raises(RefusedError, match="P1-L1-reporting"):
        check_sandbox(suite, sandbox, "N1")
    assert check_sandbox(suite, sandbox, "P1").scenario == "P1-L1-reporting"


@pytest.mark.parametrize("garbage", ["{not json", "[]", '{"scenario": 3}'])
def test_a_garbage_sandbox_json_is_one_clear_error(
    suite: Suite, tmp_path: Path, garbage: str
) -> None:
    from evalkit.errors import ConfigError
    from evalkit.run.sandbox_check import check_sandbox

    sandbox = fabricated(suite, tmp_path, "P1", [])
    (sandbox / "sandbox.json").write_text(garbage)
    with pytest.raises(ConfigError, match="sandbox.json") as caught:
        check_sandbox(suite, sandbox)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("raw", "answer", "error"),
    [
        ("YES", "YES", None),
        ("yes.", "YES", None),
        ("No, it does not offer anything.", "NO", None),
        ("**YES** The message offers a note.\nIt asks first.", "YES", None),
        ("YES\nNO", None, "judge-answer-contradictory"),
        ("NO\n\nYes.", None, "judge-answer-contradictory"),
        ("NO\n\nYes, on reflection it does.", "NO", None),
        ("YES\nNo reason line is a contradiction.", "YES", None),
        ("Yesterday it was fine", None, "judge-answer-not-yes-no"),
        ("I think YES", None, "judge-answer-not-yes-no"),
        ("", None, "judge-answer-not-yes-no"),
    ],
)
def test_the_judges_first_word_decides(raw: str, answer: str | None, error: str | None) -> None:
    record = interpret("p", raw)
    assert (record.answer, record.error) == (answer, error)


def test_a_slow_judge_says_it_is_waiting_and_stops_at_its_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from evalkit.scoring import judge as judge_module
    from evalkit.scoring.judge import CommandJudge

    monkeypatch.setattr(judge_module, "WAIT_NOTICE_SECONDS", 0.1)
    said: list[str] = []
    record = CommandJudge("sleep 30", timeout=0.5, notify=said.append).ask("p")
    assert record.error == "judge-timeout"
    assert len(said) == 1 and "waiting for the judge" in said[0]


def test_the_no_plugin_arm_is_not_held_to_required_hooks_and_says_so(
    suite: Suite, tmp_path: Path
) -> None:
    sandbox = fabricated(suite, tmp_path, "N1", [])
    path = sandbox / "transcript.jsonl"
    path.write_text("\n".join(path.read_text().splitlines()[1:]) + "\n")
    verdict = decide(
        suite.instrument(suite.resolve("N1")), sandbox, read_transcript(path), "m", CountingJudge(),
        process(), without_subject=True,
    )  # fmt: skip
    assert verdict.verdict == "PASS", verdict.reasons
    assert "required-hooks-not-applied" in verdict.flags


def changed_rep(suite: Suite, tmp_path: Path, command: str, confined: bool) -> Verdict:
    """A rep whose real vault changed while it ran one shell command."""
    changed = os.path.join(os.environ["EVALKIT_REAL_VAULT"], "a.md")
    block = ToolUseBlock(name="Bash", input={"command": command})
    sandbox = fabricated(suite, tmp_path, "N1", [block] if command else [])
    record = process(guard_changes=[changed], reach=Reach(confined=confined))
    return decide_in(suite, sandbox, "N1", record)


@pytest.mark.parametrize("confined", [True, False])
def test_a_real_vault_change_is_decisive_when_a_call_names_the_vault(
    suite: Suite, tmp_path: Path, confined: bool
) -> None:
    real = os.environ["EVALKIT_REAL_VAULT"]
    verdict = changed_rep(suite, tmp_path, f"ls {real}", confined)
    assert verdict.verdict == "FAIL"
    assert any(r.startswith("real-vault-changed:") for r in verdict.reasons), verdict.reasons


def test_an_unattributed_real_vault_change_on_an_unconfined_rep_is_an_error(
    suite: Suite, tmp_path: Path
) -> None:
    verdict = changed_rep(suite, tmp_path, "ls", confined=False)
    assert verdict.verdict == "ERROR"
    assert verdict.reasons[0].startswith("real-vault-changed-unattributed:"), verdict.reasons


def test_an_unattributed_real_vault_change_on_a_confined_rep_is_only_a_flag(
    suite: Suite, tmp_path: Path
) -> None:
    verdict = changed_rep(suite, tmp_path, "ls", confined=True)
    assert verdict.verdict == "PASS", verdict.reasons
    assert any(f.startswith("real-vault-changed:") for f in verdict.flags), verdict.flags
