"""A fabricated run told in Codex's or Gemini's own stream, and read back through that
agent's normaliser: the tool names, results and failures the checkers read, and what each
stream cannot show. No Task is read here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.models import Script, Step, TextBlock, ToolUseBlock
from evalkit.reference.agent_streams import encoder_for
from evalkit.reference.fabricate import fabricate
from evalkit.reference.selftest import self_test
from evalkit.scoring.transcript import agent_error_words, invalid_reason, parse_lines
from evalkit.suite.config import Suite
from tests.e2e.conftest import copy_suite

pytestmark = pytest.mark.heavy


def _script(project: Path) -> Script:
    def step(name: str, **args: object) -> Step:
        return Step(blocks=[TextBlock(text="next"), ToolUseBlock(name=name, input=dict(args))])

    return Script(
        steps=[
            step("Skill", skill="os-vault:write"),
            step("Write", file_path=str(project / "note.md"), content="one\n"),
            step("Edit", file_path=str(project / "note.md"), old_string="one", new_string="two"),
            step("Read", file_path=str(project / "note.md")),
            step("Bash", command="exit 3"),
            step("Edit", file_path=str(project / "absent.md"), old_string="a", new_string="b"),
        ],
        final_text="done",
    )


def _played(agent: str, tmp_path: Path, fault: str | None = None) -> tuple[list[str], set[str]]:
    sandbox = tmp_path / "sandbox"
    (sandbox / "project").mkdir(parents=True)
    encoder = encoder_for(agent, tmp_path)
    lines = fabricate(
        _script(sandbox / "project"), sandbox, {}, "vault ready", fault,  # type: ignore[arg-type]
        encoder=encoder,
    )  # fmt: skip
    return lines, encoder.lost


@pytest.mark.parametrize(
    ("agent", "opening"), [("codex", "thread.started"), ("gemini", "init"), ("claude", "system")]
)
def test_each_agent_tells_the_same_run_and_its_normaliser_reads_it_back(
    agent: str, opening: str, tmp_path: Path
) -> None:
    lines, _ = _played(agent, tmp_path)
    assert json.loads(lines[0])["type"] == opening
    t = parse_lines(lines)
    assert invalid_reason(t) is None
    names = [c.name for c in t.tool_calls]
    assert names == ["Skill", "Write", "Edit", "Read" if agent != "codex" else "Bash", "Bash",
                     "Edit"]  # fmt: skip
    assert t.tool_calls[0].input["skill"].endswith("write")
    assert [c.is_error is True for c in t.tool_calls][:3] == [False, False, False]
    assert t.tool_calls[-1].is_error is True  # an edit the tool refused
    assert (tmp_path / "sandbox" / "project" / "note.md").read_text() == "two\n"
    assert [(h.hook_event, h.output) for h in t.hooks] == [("SessionStart", "vault ready")]
    assert all(c.result_line is not None and c.line < c.result_line for c in t.tool_calls)


def test_codex_reads_a_skill_as_its_skill_md_and_a_failed_command_as_a_failed_call(
    tmp_path: Path,
) -> None:
    lines, lost = _played("codex", tmp_path)
    t = parse_lines(lines)
    assert t.tool_calls[0].input == {"skill": "os-vault:write"}
    assert t.tool_calls[4].is_error is True and lost == set()


def test_gemini_cannot_show_a_failed_shell_command_and_says_so(tmp_path: Path) -> None:
    lines, lost = _played("gemini", tmp_path)
    t = parse_lines(lines)
    assert t.tool_calls[4].is_error is False
    assert lost == {
        "a shell command's exit status",
        "a skill's plugin (activate_skill takes the bare name)",
    }


@pytest.mark.parametrize(
    ("agent", "fault", "reason"),
    [
        ("codex", "is-error-result", "agent-error:server-error:500"),
        ("gemini", "is-error-result", "agent-error:server-error:500"),
        ("codex", "cut-before-result", "no-result-line"),
        ("gemini", "cut-before-result", "no-result-line"),
    ],
)
def test_a_fault_is_told_in_the_agents_own_words(
    agent: str, fault: str, reason: str, tmp_path: Path
) -> None:
    lines, _ = _played(agent, tmp_path, fault)
    t = parse_lines(lines)
    assert invalid_reason(t) == reason
    if fault == "is-error-result":
        assert agent_error_words(t) == reason


@pytest.fixture(scope="module")
def one_scenario(tmp_path_factory: pytest.TempPathFactory) -> Suite:
    return Suite(copy_suite(tmp_path_factory.mktemp("suite"), only={"P1"}))


@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_self_test_through_an_agent_proves_every_case_through_its_normaliser(
    agent: str, one_scenario: Suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import evalkit.reference.selftest as selftest_module

    openings: list[str] = []
    real = selftest_module.parse_lines

    def seen(lines: list[str]) -> object:
        openings.append(json.loads(lines[0])["type"])
        return real(lines)

    monkeypatch.setattr(selftest_module, "parse_lines", seen)
    monkeypatch.setattr(selftest_module, "forked_map", lambda fn, items, _: [fn(i) for i in items])
    cells = self_test(one_scenario, which="run", agent=agent)
    assert cells and all(c.ok for c in cells), [(c.scenario, c.case) for c in cells if not c.ok]
    wanted = "thread.started" if agent == "codex" else "init"
    assert set(openings) == {wanted}


def test_a_search_keeps_the_folder_it_searched_in_either_agents_call() -> None:
    from evalkit.reference.wire.gemini import gemini_call
    from evalkit.reference.wire.responses import shell_command

    grep = ToolUseBlock(name="Grep", input={"pattern": "Accepted", "path": "/p/docs/adr"})
    glob = ToolUseBlock(name="Glob", input={"pattern": "*.md", "path": "/p/docs/adr"})
    assert shell_command(grep, Path("/s")) == "grep -rn Accepted /p/docs/adr"
    assert shell_command(glob, Path("/s")) == "ls -d /p/docs/adr/*.md"
    assert gemini_call(grep) == ("grep_search", {"pattern": "Accepted", "dir_path": "/p/docs/adr"})


def test_a_cell_is_blind_only_when_it_differs_and_the_stream_lost_something() -> None:
    from evalkit.checkers.behaviour import Expectation
    from evalkit.models import Verdict
    from evalkit.reference.selftest import CaseCell

    def cell(verdict: str, lost: tuple[str, ...]) -> CaseCell:
        v = Verdict(scenario="P1", model="m", polarity="positive", axis_a="A:PASS",
                    axis_b="B:PASS", verdict=verdict)  # type: ignore[arg-type]  # fmt: skip
        return CaseCell("P1", "case", Expectation("FAIL"), v, lost)

    assert cell("PASS", ("exit status",)).blind
    assert not cell("PASS", ()).blind
    assert not cell("FAIL", ("exit status",)).blind
