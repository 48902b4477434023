"""Codex `exec --json` streams, recorded from the real codex-cli 0.169.0 against evalkit's
scripted Responses server, read as the one transcript the checkers see."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.scoring.breaches import breach_calls
from evalkit.scoring.judge import final_message
from evalkit.scoring.streams.codex import inner_command, skill_read
from evalkit.scoring.transcript import agent_error_words, invalid_reason, parse_transcript

RECORDED = Path(__file__).parent / "codex"


def recorded(name: str):  # type: ignore[no-untyped-def]
    return parse_transcript((RECORDED / name).read_bytes())


def test_a_finished_turn_is_a_valid_measurement() -> None:
    t = recorded("exec-ok.jsonl")
    assert t.bad_lines == []
    assert invalid_reason(t) is None
    assert final_message(t) == "Done."
    assert t.result is not None and t.result.usage["output_tokens"] == 386


def test_each_tool_run_maps_onto_the_names_the_checkers_read() -> None:
    calls = recorded("exec-ok.jsonl").tool_calls
    assert [c.name for c in calls] == ["Skill", "Bash", "Write", "Edit", "Bash"]
    assert calls[0].input == {"skill": "demo:write"}
    assert calls[1].input["command"] == "cat /tmp/rec/rep/project/notes.md"
    assert calls[2].input["file_path"].endswith("/project/new.md")
    assert calls[3].input["file_path"].endswith("/project/notes.md")


def test_a_failed_command_is_a_failed_call() -> None:
    last = recorded("exec-ok.jsonl").tool_calls[-1]
    assert last.is_error is True and last.result is not None
    assert recorded("exec-ok.jsonl").tool_calls[1].is_error is False


def test_hook_runs_recorded_by_effect_are_hook_responses() -> None:
    hooks = recorded("exec-ok.jsonl").hooks
    assert [(h.subtype, h.hook_event, h.outcome, h.exit_code) for h in hooks] == [
        ("hook_response", "SessionStart", "success", 0)
    ]
    assert "demo plugin ready" in hooks[0].output


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("exec-500.jsonl", "agent-error:server-error:500"),
        ("exec-529.jsonl", "agent-error:overloaded"),
        ("exec-429.jsonl", "agent-error:rate-limited"),
        ("exec-cut.jsonl", "agent-error:connection-lost"),
    ],
)
def test_a_failed_turn_is_named_in_codexs_own_words(name: str, words: str) -> None:
    t = recorded(name)
    assert t.result is not None and t.result.is_error
    assert agent_error_words(t) == words
    assert invalid_reason(t) == words


def test_the_vault_write_oracle_run_writes_its_note() -> None:
    calls = recorded("vault-write-oracle.jsonl").tool_calls
    writes = [c.input["file_path"] for c in calls if c.name == "Write"]
    assert len(writes) == 1 and "/sandbox/vault/" in writes[0]


def test_the_shell_wrapper_is_taken_off_and_a_skill_read_is_known() -> None:
    assert inner_command("/bin/bash -lc 'cat a.md'") == "cat a.md"
    assert inner_command("odd 'quote") == "odd 'quote"
    assert skill_read("cat /x/skills/os-vault:write/SKILL.md") == "os-vault:write"
    assert skill_read("cat README.md") is None


def test_a_stream_of_odd_shapes_is_bad_lines_never_an_exception() -> None:
    t = parse_transcript(b'{"type":"thread.started"}\n{"type":"item.completed","item":[1]}\n')
    assert t.bad_lines == [2]


def test_apply_patchs_add_update_delete_and_move_are_writes_at_every_end() -> None:
    calls = recorded("exec-patches.jsonl").tool_calls
    changes = [(c.name, c.input.get("change")) for c in calls[:4]]
    assert changes == [("Write", "add"), ("Edit", "update"), ("Edit", "delete"), ("Edit", "move")]
    moved = calls[3].input
    assert moved["file_path"].endswith("/project/moved.md")
    assert moved["move_path"].endswith("/vault/moved.md")


def test_a_patch_that_moves_a_file_into_a_guarded_path_is_a_breach() -> None:
    calls = recorded("exec-patches.jsonl").tool_calls
    vault = Path("/tmp/rec/sandbox/vault")
    assert breach_calls(calls, vault, "/tmp/rec/sandbox/project") == [
        "Edit:/tmp/rec/sandbox/vault/moved.md"
    ]


def test_a_failed_shell_command_is_a_failed_call() -> None:
    last = recorded("exec-patches.jsonl").tool_calls[-1]
    assert (last.name, last.input["command"], last.is_error) == ("Bash", "false", True)


def test_every_form_of_reading_one_skills_body_is_its_use_and_listing_is_not() -> None:
    calls = recorded("exec-skill-reads.jsonl").tool_calls
    assert [c.input.get("skill") for c in calls[:9]] == ["demo:write"] * 9
    assert [c.name for c in calls[9:]] == ["Bash"] * 4
