"""The scan of a request body names where a marker came from, and blames the world for
nothing it did not put there: the CLI's own text, the subject's, the call's own words, the
Task, a view the row declares partial."""

from __future__ import annotations

from typing import Any

from evalkit.scoring.world.leaks import Exempt, Scan
from evalkit.scoring.world.markers import Markers

MARKERS = Markers(["P1-L1-reporting"])


def _body(system: str = "", results: list[str] = (), reminder: str = "", task: str = "Do it.",
          call: str = "ls") -> dict[str, Any]:  # fmt: skip
    user: list[dict[str, Any]] = [{"type": "text", "text": task}]
    if reminder:
        wrapped = f"<system-reminder>\n{reminder}\n</system-reminder>"
        user.insert(0, {"type": "text", "text": wrapped})
    messages: list[dict[str, Any]] = [{"role": "user", "content": user}]
    for i, text in enumerate(results):
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": call}}]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{i}", "content": text}]})
    return {"system": [{"type": "text", "text": system}], "tools": [], "messages": messages}


def test_each_channel_is_named() -> None:
    body = _body(
        system="You are a helpful agent.\n<env>\nWorking directory: /tmp/sandbox/x\n</env>",
        results=["EVALKIT_RUN=1"],
        reminder="SessionStart:startup hook success: vault for P1 ready",
    )
    assert Scan(MARKERS).request(body) == [
        "marker:env-context:sandbox", "marker:hook-output:P1", "marker:tool-result:EVALKIT",
    ]  # fmt: skip


def test_a_plain_world_gives_nothing_away() -> None:
    body = _body(system="<env>\nWorking directory: /home/alex/src/app\n</env>",
                 results=["a test file\nthe test environment variable"])  # fmt: skip
    assert Scan(MARKERS).request(body) == []


def test_the_task_and_the_models_own_turns_are_never_read() -> None:
    assert Scan(MARKERS).request(_body(task="Fix the fixture in P1.")) == []


def test_a_result_is_not_blamed_for_a_word_its_own_call_named() -> None:
    body = _body(results=["ls: cannot access '/evalkit-x': No such file"], call="ls /evalkit-x")
    assert Scan(MARKERS).request(body) == []


def test_the_clis_own_lines_and_the_subjects_text_are_exempt() -> None:
    cli_line = "Commands run in a sandbox by default."
    skill = "description: Save what outlives the task; never the scenario scratch."
    exempt = Exempt.of(MARKERS, [cli_line], [f"---\n{skill}\n---\n"])
    body = _body(system=f"{cli_line}\n- vault: Save what outlives the task; never the "
                 "scenario scratch.")  # fmt: skip
    assert Scan(MARKERS, exempt).request(body) == []
    assert Scan(MARKERS).request(body) != []


def test_a_mount_source_is_left_to_the_rows_declaration_only_when_declared() -> None:
    line = "90 72 254:0 /tmp/evalkit-x/home /home/alex rw,relatime - ext4 /dev/vda rw"
    body = _body(results=[line])
    assert Scan(MARKERS, partial=("mountinfo",)).request(body) == []
    assert Scan(MARKERS).request(body) == ["marker:tool-result:evalkit"]
