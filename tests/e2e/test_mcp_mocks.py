"""A plugin eval folder's fixed MCP mock, served through the real CLI: the scripted model
calls the mock's tool and the kept transcript shows the mock's fixed answer as the result."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.unit.suite.test_plugin_evals import case_yaml, plugin

if TYPE_CHECKING:
    from conftest import Kit

pytestmark = pytest.mark.e2e

MARKER = "ticket-4-state-b91e2c"
CASE = """schema_version: '1.0'
name: looks-up
execution:
  prompt: What state is ticket 4 in? Check the tracker before you answer.
  max_turns: 4
graders:
- name: looked-up
  type: tool_used
  tool: mcp__tickets__lookup
"""


def tool_results(transcript: Path) -> list[str]:
    """The text of every tool result the CLI reported."""
    texts = []
    for line in transcript.read_text().splitlines():
        event = json.loads(line)
        message = event.get("message") if isinstance(event, dict) else None
        for block in message.get("content", []) if isinstance(message, dict) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                content = block.get("content")
                parts = content if isinstance(content, list) else [{"text": content}]
                texts += [str(p.get("text")) for p in parts if isinstance(p, dict)]
    return texts


def test_the_scripted_model_calls_the_mock_and_gets_its_fixed_answer(
    new_kit: Callable[..., Kit], tmp_path: Path
) -> None:
    root = plugin(tmp_path)
    case_yaml(root / "evals", "looks-up", CASE)
    (root / "evals" / "mocks" / "tickets").mkdir(parents=True)
    (root / "evals" / "mocks" / "tickets" / "lookup.md").write_text(f"{MARKER}: open\n")
    kit = new_kit(tmp_path, suite=root)
    work = tmp_path / "w"
    done = kit.run("run", "looks-up", "policy:oracle", str(work), "--allow-unfrozen", timeout=300)
    assert done.returncode == 0, done.why()
    assert [r["verdict"] for r in kit.tsv(work)] == ["PASS"]
    (transcript,) = work.glob("evidence/*/*/*/rep-1/transcript.jsonl")
    assert any(text == f"{MARKER}: open" for text in tool_results(transcript))
