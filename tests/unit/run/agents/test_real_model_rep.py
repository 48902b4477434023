"""A real Codex or Gemini model's rep, prepared up to the moment its CLI would start (no
network here, so no real call): the user's key reaches the rep's environment and nothing
else of the caller's, the confinement's one door lets that agent's API host through and
no other, and the rep's declarations name the key without its value."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalkit.run.backends.egress import ConnectProxy
from evalkit.run.context import RunContext
from evalkit.run.rep import prepare_rep
from evalkit.suite.config import Suite

pytestmark = pytest.mark.heavy

KEY = "sk-test-0123456789abcdefghij"


@pytest.mark.parametrize(
    ("agent", "model", "variable", "host"),
    [
        ("codex", "gpt-5", "CODEX_API_KEY", ("api.openai.com", 443)),
        ("gemini", "gemini-2.5-pro", "GEMINI_API_KEY", ("generativelanguage.googleapis.com", 443)),
    ],
)
def test_the_rep_gets_the_key_and_a_door_to_its_api_host_only(
    agent: str, model: str, variable: str, host: tuple[str, int], suite: Suite, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    monkeypatch.setenv(variable, KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-not-for-this-agent-000")
    monkeypatch.setenv("EVALKIT_SCRATCH", str(tmp_path / "scratch"))
    work = tmp_path / "w"
    ctx = RunContext(suite=suite, workdir=work, results=work / "results.tsv", run_id="r1",
                     agent=agent)  # fmt: skip
    prepared = prepare_rep(ctx, suite.resolve("P1"), model, 1)
    try:
        env = prepared.env
        assert env[variable] == KEY
        assert not any(k.startswith("ANTHROPIC_") for k in env)
        assert env["HTTPS_PROXY"].startswith("http://127.0.0.1:")
        door = prepared.confined.door if prepared.confined is not None else None
        assert isinstance(door, ConnectProxy) and door.allowed == {host}
        assert prepared.command[-2:] == ["--model", model]
        declared = json.dumps(prepared.run)
        assert KEY not in declared
        assert prepared.run["isolation_env"][variable] == "<set>"
        assert prepared.run["agent"] == agent
    finally:
        prepared.discard()
