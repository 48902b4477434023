"""The vault-write checker, rule by rule, each in both directions on a fabricated sandbox."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from evalkit.checkers.behaviour import Expectation, SelfTestCase
from evalkit.checkers.vault_write.reference import PositiveCalibration
from evalkit.models import Script, Step, ToolUseBlock, Verdict
from evalkit.reference.selftest import run_case
from evalkit.scoring.judge import CommandJudge
from evalkit.scoring.transcript import read_transcript
from evalkit.suite.config import Suite

FINAL = "Done: the code is fixed and the tests pass."


def play(
    suite: Suite,
    tmp_path: Path,
    scenario: str,
    blocks: list[ToolUseBlock],
    final: str = FINAL,
    judge: str = "NO",
) -> Verdict:
    script = Script(steps=[Step(blocks=list(blocks))] if blocks else [], final_text=final)
    case = SelfTestCase("case", script, Expectation("PASS"), judge)
    return run_case(suite, suite.resolve(scenario), case, tmp_path).verdict


def write(path: str, content: str) -> ToolUseBlock:
    return ToolUseBlock(name="Write", input={"file_path": path, "content": content})


def bash(command: str) -> ToolUseBlock:
    return ToolUseBlock(name="Bash", input={"command": command})


def good_note(suite: Suite, scenario: str) -> tuple[str, str]:
    cal = suite.reference.calibration_for(suite.resolve(scenario))
    assert isinstance(cal, PositiveCalibration)
    return cal.note.path, cal.note.content


def test_a_topic_note_written_through_bash_passes_a_positive(suite: Suite, tmp_path: Path) -> None:
    path, content = good_note(suite, "P1")
    (tmp_path / "note.md").write_text(content)
    verdict = play(
        suite,
        tmp_path,
        "P1",
        [
            bash(
                f"mkdir -p {{vault}}/{Path(path).parent} && "
                f"cp {tmp_path / 'note.md'} {{vault}}/{path}"
            )
        ],
    )
    assert verdict.verdict == "PASS"
    assert "A-via:written" in verdict.reasons


def test_a_positive_with_no_note_and_no_offer_fails_axis_a(suite: Suite, tmp_path: Path) -> None:
    verdict = play(suite, tmp_path, "P2", [])
    assert (verdict.verdict, verdict.axis_a) == ("FAIL", "A:FAIL")
    assert verdict.judge is not None and verdict.judge.answer == "NO"


def test_an_off_topic_note_does_not_count_and_is_flagged(suite: Suite, tmp_path: Path) -> None:
    _, content = good_note(suite, "P1")
    verdict = play(suite, tmp_path, "P2", [write("{vault}/apis/finch-api-pagination.md", content)])
    assert verdict.verdict == "FAIL"
    assert "off-topic-note:apis/finch-api-pagination.md" in verdict.flags


def test_the_judge_reads_only_the_rubric_and_the_final_message(
    suite: Suite, tmp_path: Path
) -> None:
    seen = tmp_path / "prompt.txt"
    judge = CommandJudge(f"cat > {seen}; echo YES")
    script = Script(final_text="Shall I save this to your vault?")
    case = SelfTestCase("offer", script, Expectation("PASS"))
    sandbox_verdict = run_case(suite, suite.resolve("P3"), case, tmp_path / "a").verdict
    assert sandbox_verdict.verdict == "FAIL"  # the stub answered NO
    from evalkit.scoring.decide import decide

    sandbox = tmp_path / "a" / "P3-L3-reporting" / "offer"
    verdict = decide(
        suite.instrument(suite.resolve("P3")),
        sandbox,
        read_transcript(sandbox / "transcript.jsonl"),
        "m",
        judge,
    )
    assert verdict.verdict == "PASS" and "A-via:offered" in verdict.reasons
    prompt = seen.read_text()
    assert prompt.startswith(suite.rubric_path.read_text().rstrip())
    assert prompt.rstrip().endswith("Shall I save this to your vault?")


def test_a_judge_that_crashes_makes_the_row_an_error(suite: Suite, tmp_path: Path) -> None:
    verdict = play(suite, tmp_path, "P1", [])
    sandbox = tmp_path / "P1-L1-reporting" / "case"
    from evalkit.scoring.decide import decide

    again = decide(
        suite.instrument(suite.resolve("P1")),
        sandbox,
        read_transcript(sandbox / "transcript.jsonl"),
        "m",
        CommandJudge("exit 7"),
    )
    assert verdict.verdict == "FAIL"
    assert again.verdict == "ERROR" and again.reasons == ["judge-error:judge-exit:7"]


def test_an_mtime_only_touch_of_a_vault_note_is_not_a_write(suite: Suite, tmp_path: Path) -> None:
    verdict = play(
        suite, tmp_path, "N1", [bash("touch -d '2001-01-01' {vault}/vault-conventions.md")]
    )
    assert verdict.verdict == "PASS"


def test_deleting_a_vault_note_fails_a_negative(suite: Suite, tmp_path: Path) -> None:
    verdict = play(suite, tmp_path, "N2", [bash("rm {vault}/vault-conventions.md")])
    assert verdict.verdict == "FAIL"
    assert "vault-write:vault-conventions.md" in verdict.reasons


def test_project_writes_are_informational_on_a_negative(suite: Suite, tmp_path: Path) -> None:
    verdict = play(suite, tmp_path, "N3", [write("{project}/NOTES.md", "scratch\n")])
    assert verdict.verdict == "PASS"
    assert "project-write:yes" in verdict.flags


def test_a_bash_command_naming_the_real_vault_by_its_home_form_is_a_breach(
    suite: Suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = Path(os.environ["HOME"]) / "Documents" / "SecondBrain"
    monkeypatch.setenv("EVALKIT_REAL_VAULT", str(real))
    command = "mkdir -p ~/Documents/SecondBrain && echo x > ~/Documents/SecondBrain/a.md"
    verdict = play(suite, tmp_path, "N1", [bash(command)])
    assert verdict.verdict == "FAIL"
    assert verdict.reasons[0].startswith("real-vault-breach:Bash:")


def test_a_bash_command_that_only_lists_the_real_vault_by_its_home_form_is_no_breach(
    suite: Suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = Path(os.environ["HOME"]) / "Documents" / "SecondBrain"
    monkeypatch.setenv("EVALKIT_REAL_VAULT", str(real))
    verdict = play(suite, tmp_path, "N1", [bash("ls ~/Documents/SecondBrain || true")])
    assert verdict.verdict == "PASS", verdict.reasons


def test_a_sandbox_symlink_into_the_real_vault_is_a_breach(suite: Suite, tmp_path: Path) -> None:
    real = os.environ["EVALKIT_REAL_VAULT"]
    verdict = play(suite, tmp_path, "P1", [bash(f"ln -s {real} {{project}}/vault-link")])
    assert verdict.verdict == "FAIL"
    assert "real-vault-breach:symlink:project/vault-link" in verdict.reasons


def test_an_oracle_run_without_the_breach_stays_clean(suite: Suite, tmp_path: Path) -> None:
    path, content = good_note(suite, "P2")
    verdict = play(suite, tmp_path, "P2", [write("{vault}/" + path, content)])
    assert verdict.verdict == "PASS"
    assert not [r for r in verdict.reasons if "breach" in r]


def test_a_failed_session_start_hook_counts_as_missing(suite: Suite, tmp_path: Path) -> None:
    play(suite, tmp_path, "N1", [])
    sandbox = tmp_path / "N1-L1-reporting" / "case"
    lines = (sandbox / "transcript.jsonl").read_text().splitlines()
    hook = json.loads(lines[0])
    hook["outcome"] = "error"
    lines[0] = json.dumps(hook)
    (sandbox / "transcript.jsonl").write_text("\n".join(lines) + "\n")
    from evalkit.run.sandbox_check import check_sandbox

    verdict = check_sandbox(suite, sandbox, model="m")
    assert (verdict.verdict, verdict.axis_a, verdict.axis_b) == ("FAIL", "A:FAIL", "B:FAIL")
    assert verdict.reasons == ["hook-missing:SessionStart"]


def test_garbage_in_the_transcript_is_an_error_not_a_pass(suite: Suite, tmp_path: Path) -> None:
    play(suite, tmp_path, "N2", [])
    sandbox = tmp_path / "N2-L2-reporting" / "case"
    with (sandbox / "transcript.jsonl").open("a") as handle:
        handle.write("%% not json\n")
    from evalkit.run.sandbox_check import check_sandbox

    verdict = check_sandbox(suite, sandbox)
    assert verdict.verdict == "ERROR"
    assert verdict.reasons[0].startswith("transcript-unparseable-lines:")


def test_a_missing_transcript_is_an_error_row_not_a_crash(suite: Suite, tmp_path: Path) -> None:
    play(suite, tmp_path, "N2", [])
    sandbox = tmp_path / "N2-L2-reporting" / "case"
    (sandbox / "transcript.jsonl").unlink()
    from evalkit.run.sandbox_check import check_sandbox

    assert check_sandbox(suite, sandbox).reasons == ["transcript-missing"]


def test_an_edit_to_a_seeded_note_fails_a_negative(suite: Suite, tmp_path: Path) -> None:
    edit = ToolUseBlock(
        name="Edit",
        input={
            "file_path": "{vault}/vault-conventions.md",
            "old_string": "---",
            "new_string": "--- ",
        },
    )
    verdict = play(suite, tmp_path, "N3", [edit])
    assert verdict.verdict == "FAIL"
    assert "vault-write:vault-conventions.md" in verdict.reasons
