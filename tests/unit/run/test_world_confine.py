"""A confined agent lives in its world: the world's user and host, HOME a lived-in
/home/<user>, the project at its world path, and nothing in its environment naming the
harness."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from evalkit.models import WorldConfig
from evalkit.run.backends.confine import confine, unavailable
from evalkit.run.world import lay_out_home, rep_places

pytestmark = pytest.mark.heavy

needs_bwrap = pytest.mark.skipif(unavailable() is not None, reason="no confinement here")

LOOK = """#!/bin/sh
echo "pwd $(pwd)"; echo "uid $(id -u)"; echo "host $(hostname)"; echo "home $HOME"
env | cut -d= -f1 | sed 's/^/var /'
echo note > "$HOME/Notes/seen.md"
git config user.name | sed 's/^/author /'
"""


@needs_bwrap
def test_the_agent_runs_as_the_world_user_at_the_world_project_with_a_plain_environment(
    tmp_path: Path,
) -> None:
    world = WorldConfig(project="~/src/reportgen", stores={"vault": "~/Notes"})
    sandbox, scratch = tmp_path / "sandbox", tmp_path
    for name in ("project", "vault"):
        (sandbox / name).mkdir(parents=True)
    (scratch / "claude-config").mkdir()
    cli = tmp_path / "tools" / "claude"
    cli.parent.mkdir()
    cli.write_text(LOOK)
    cli.chmod(0o755)
    places = rep_places(world, sandbox, ["project", "vault"], scratch / "claude-config",
                        scratch / "home", [], {})  # fmt: skip
    lay_out_home(world, scratch / "home")
    env = {"PATH": os.environ["PATH"], "EVALKIT_REAL_VAULT": "/x", "IS_SANDBOX": "1",
           "CLAUDE_CONFIG_DIR": str(scratch / "claude-config")}  # fmt: skip
    own = [sandbox / "project", sandbox / "vault", scratch / "claude-config"]
    wrapped = confine([str(cli)], env, sandbox / "project", own, scratch / "home", cli, [],
                      places=places)  # fmt: skip
    try:
        done = subprocess.run(wrapped.command, env=wrapped.env, capture_output=True, text=True,
                              pass_fds=wrapped.pass_fds,
                              timeout=60, check=False)  # fmt: skip
    finally:
        wrapped.stop()
    seen = set(done.stdout.splitlines())
    assert {"pwd /home/alex/src/reportgen", "uid 1000", "host alex-laptop"} <= seen, done.stderr
    assert "home /home/alex" in seen and "author Alex Morgan" in seen
    names = {line[4:] for line in seen if line.startswith("var ")}
    assert not {n for n in names if n.startswith("EVALKIT_")}
    assert not names & {"IS_SANDBOX", "CLAUDE_CONFIG_DIR"}
    assert (sandbox / "vault" / "seen.md").is_file()
    assert "/home/alex/src/reportgen" in wrapped.reach.writable
    assert not any(str(tmp_path) in arg for arg in wrapped.reach.writable)


def test_each_agent_s_plugin_copies_appear_in_its_own_data_folder(tmp_path: Path) -> None:
    world = WorldConfig(project="~/src/reportgen")
    copies = [tmp_path / "plugins" / "0-os-vault"]
    seen = {}
    for agent in ("claude", "codex", "gemini"):
        places = rep_places(world, tmp_path / "sandbox", ["project"], tmp_path / "config",
                            tmp_path / "home", copies, {}, "~/.x", agent)  # fmt: skip
        seen[agent] = [there for _, there, role in places.binds if role == "plugin"]
    assert seen == {agent: [f"/home/alex/.local/share/{agent}/plugins/os-vault"]
                    for agent in ("claude", "codex", "gemini")}  # fmt: skip
