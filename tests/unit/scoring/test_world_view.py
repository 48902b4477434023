"""The world paths a transcript names are read as the rep's own folders, by role, wherever
the rep lies now; the agent's own spellings of its home count as that home."""

from __future__ import annotations

from pathlib import Path

from evalkit.models import InitEvent, ToolCall, Transcript, WorldView
from evalkit.scoring.world.places import to_rep

VIEW = WorldView(
    user="alex",
    home="/home/alex",
    roles={
        "home": "/home/alex",
        "config": "/home/alex/.claude",
        "project": "/home/alex/src/app",
        "store:vault": "/home/alex/Notes",
        "guarded:REAL": "/home/alex/Documents/Brain",
    },
)


def _mapped(sandbox: Path, **call: str) -> Transcript:
    name = call.pop("name")
    seen = Transcript(
        init=InitEvent(cwd="/home/alex/src/app"),
        tool_calls=[ToolCall(id="t", name=name, input=dict(call))],
    )
    return to_rep(seen, VIEW, sandbox, {"REAL": Path("/guarded/brain")})


def test_the_project_and_a_store_are_the_sandboxs_whatever_folder_holds_it(
    tmp_path: Path,
) -> None:
    for sandbox in (tmp_path / "run" / "sandbox", tmp_path / "replay" / "sandbox"):
        mapped = _mapped(sandbox, name="Write", file_path="/home/alex/Notes/a.md")
        assert mapped.init is not None and mapped.init.cwd == str(sandbox / "project")
        assert mapped.tool_calls[0].input["file_path"] == str(sandbox / "vault" / "a.md")


def test_a_shell_commands_tilde_and_home_spellings_are_the_worlds_home(tmp_path: Path) -> None:
    sandbox = tmp_path / "sandbox"
    command = "cat ~/Notes/a.md > $HOME/Documents/Brain/b.md; ls ${HOME}/src/app"
    mapped = _mapped(sandbox, name="Bash", command=command)
    assert mapped.tool_calls[0].input["command"] == (
        f"cat {sandbox}/vault/a.md > /guarded/brain/b.md; ls {sandbox}/project"
    )


def test_a_path_that_only_starts_like_a_world_folder_is_left_alone(tmp_path: Path) -> None:
    mapped = _mapped(tmp_path / "sandbox", name="Read", file_path="/home/alexandra/x")
    assert mapped.tool_calls[0].input["file_path"] == "/home/alexandra/x"


def test_the_home_outside_every_store_is_the_reps_home_beside_its_sandbox(
    tmp_path: Path,
) -> None:
    sandbox = tmp_path / "sandbox"
    mapped = _mapped(sandbox, name="Read", file_path="/home/alex/.bashrc")
    assert mapped.tool_calls[0].input["file_path"] == str(tmp_path / "home" / ".bashrc")


def _read(path: str) -> Transcript:
    return Transcript(tool_calls=[ToolCall(id="t", name="Read", input={"file_path": path})])


def test_an_agents_config_home_is_read_where_its_adapter_laid_it_out(tmp_path: Path) -> None:
    sandbox = tmp_path / "sandbox"
    codex = VIEW.model_copy(update={"roles": {**VIEW.roles, "config": "/home/alex/.codex"},
                                    "beside": {"config": "codex-home"}})  # fmt: skip
    mapped = to_rep(_read("/home/alex/.codex/AGENTS.md"), codex, sandbox, {})
    assert mapped.tool_calls[0].input["file_path"] == str(tmp_path / "codex-home" / "AGENTS.md")


def test_a_recorded_folder_that_leaves_the_scratch_folder_is_not_followed(tmp_path: Path) -> None:
    sandbox = tmp_path / "sandbox"
    for forged in ("../../etc", "/etc", ""):
        view = VIEW.model_copy(update={"beside": {"config": forged}})
        mapped = to_rep(_read("/home/alex/.claude/x"), view, sandbox, {})
        assert mapped.tool_calls[0].input["file_path"] == str(tmp_path / "claude-config" / "x")
