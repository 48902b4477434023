"""The default judge is the real CLI in a throwaway config dir: shown against the scripted model."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from evalkit.models import Script
from evalkit.reference.scripted_server import ScriptedServer
from evalkit.scoring.judge import ClaudeJudge, build_prompt, prompt_hash

if TYPE_CHECKING:
    from conftest import Kit


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("said", "answer"), [("YES, it offers to save the note.", "YES"), ("NO", "NO")]
)
def test_the_cli_judge_reads_the_first_word(
    claude_cli: str, monkeypatch: pytest.MonkeyPatch, said: str, answer: str
) -> None:
    prompt = build_prompt("Answer YES or NO.", "Shall I save this to your vault?")
    with ScriptedServer(Script(final_text=said)) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "evalkit-scripted")
        record = ClaudeJudge(Path(claude_cli), "evalkit-judge", timeout=60).ask(prompt)
        sent = [r for r in server.requests if not r.side]
    assert (record.answer, record.error) == (answer, None)
    assert record.prompt_sha256 == prompt_hash(prompt)
    assert sent, "the judge never reached the model"


@pytest.mark.e2e
def test_a_judge_whose_model_fails_is_an_error_not_an_answer(
    claude_cli: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ScriptedServer(Script(final_text="YES"), fault="500") as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "evalkit-scripted")
        monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "0")
        record = ClaudeJudge(Path(claude_cli), "evalkit-judge", timeout=60).ask("x")
    assert record.answer is None and record.error is not None


@pytest.mark.e2e
def test_grids_judged_by_a_command_and_by_the_cli_are_refused_by_compare_naming_judge(
    kit: Kit,
) -> None:
    """One positive rep a real model's stand-in answers without writing, so the checker asks
    the judge; one grid with EVALKIT_JUDGE_CMD set, one without (the pinned CLI judges)."""
    works = {"command": kit.base / "by-command", "cli": kit.base / "by-cli"}
    with ScriptedServer(Script(final_text="NO")) as server:
        kit.extra_env.update(
            ANTHROPIC_BASE_URL=server.base_url, ANTHROPIC_API_KEY="sk-ant-test-not-a-key"
        )
        for name, work in works.items():
            if name == "command":
                kit.extra_env["EVALKIT_JUDGE_CMD"] = "echo NO"
            else:
                kit.extra_env.pop("EVALKIT_JUDGE_CMD")
            done = kit.run(
                "grid", str(work), "--models", "sonnet", "--scenarios", "P1", "--reps", "1",
                "--skip-preflight", timeout=300,
            )  # fmt: skip
            assert done.returncode == 0, done.why()
    judged = {}
    for name, work in works.items():
        [row] = kit.tsv(work)
        assert row["reasons"].startswith("A-fail:no-topic-note-and-no-offer"), row["reasons"]
        [line] = kit.manifest(work)
        judged[name] = line["declarations"]["judge"]
    assert judged["command"].startswith("command:sha256:") and judged["cli"] == "claude:haiku"
    done = kit.run("compare", str(works["command"]), str(works["cli"]))
    assert done.returncode == 2, done.why()
    assert "A and B differ in judge" in done.stderr, done.why()
