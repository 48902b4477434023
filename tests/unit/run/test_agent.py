"""The agent's prompt reaches it on stdin, never on its command line or in its environment."""

from __future__ import annotations

import sys
from pathlib import Path

from evalkit.run.agent import run_agent
from evalkit.run.agents.claude import agent_command

ECHO_INPUT = "import sys; sys.stdout.buffer.write(sys.stdin.buffer.read())"


def test_the_prompt_is_written_to_stdin_as_is_and_stdin_is_closed(tmp_path: Path) -> None:
    out, err = tmp_path / "out", tmp_path / "err"
    prompt = b"first line\nsecond line, no newline after"
    done = run_agent([sys.executable, "-c", ECHO_INPUT], tmp_path, {}, out, err, 30, None, prompt)
    assert done.exit_code == 0 and done.stopped is None
    assert out.read_bytes() == prompt


def test_no_prompt_means_an_empty_closed_stdin(tmp_path: Path) -> None:
    out, err = tmp_path / "out", tmp_path / "err"
    done = run_agent([sys.executable, "-c", ECHO_INPUT], tmp_path, {}, out, err, 30)
    assert done.exit_code == 0 and out.read_bytes() == b""


def test_the_cli_command_line_has_no_place_for_a_prompt(tmp_path: Path) -> None:
    command = agent_command(tmp_path / "claude", "sonnet", [tmp_path / "plugin"])
    after_p = command[command.index("-p") + 1]
    assert after_p.startswith("--")
