"""The default judge is the real CLI in a throwaway config dir: shown against the scripted model."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.models import Script
from evalkit.reference.scripted_server import ScriptedServer
from evalkit.scoring.judge import ClaudeJudge, build_prompt, prompt_hash


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
