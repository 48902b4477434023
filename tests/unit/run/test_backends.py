"""The confinement seam: which backend a platform gets, what is refused in one line, and
the settings srt is handed for a rep (allow-list form, one door, the traps handled)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.errors import ConfigError
from evalkit.run.backends import backend, default_name
from evalkit.run.backends.srt import SandboxRuntime


def test_linux_defaults_to_bwrap_macos_to_srt_and_elsewhere_to_none() -> None:
    assert (default_name("linux"), default_name("darwin"), default_name("win32")) == (
        "bwrap", "srt", None)  # fmt: skip


def test_an_unknown_backend_is_refused_in_one_line() -> None:
    with pytest.raises(ConfigError, match="not one of bwrap, srt, docker, podman"):
        backend("chroot")


def test_srt_is_handed_the_allow_list_form_with_only_the_reps_door(tmp_path: Path) -> None:
    scratch, suite = tmp_path / "scratch", tmp_path / "suite"
    (scratch / "sandbox" / "project").mkdir(parents=True)
    suite.mkdir()
    env = {"PATH": "/usr/bin:/bin", "ANTHROPIC_BASE_URL": "http://127.0.0.1:4321",
           "NO_PROXY": "*", "IS_SANDBOX": "1"}  # fmt: skip
    cli = Path(__file__)
    project, home = scratch / "sandbox" / "project", scratch / "home"
    confined = SandboxRuntime().confine(
        [str(cli), "-p"], env, project, [scratch / "sandbox"], home, cli, [suite]
    )
    settings = json.loads((scratch / "srt-settings.json").read_text())
    files = settings["filesystem"]
    assert files["denyRead"] == ["/"]
    assert files["allowWrite"] == confined.reach.writable
    assert str(suite) not in files["allowRead"]
    assert settings["network"]["allowedDomains"] == ["127.0.0.1:4321"]
    assert list((scratch / "srt-launch").iterdir()) == []  # srt starts in an empty folder
    inner = confined.command[confined.command.index("--") + 1 :]
    assert ["-u", "NO_PROXY"] == inner[inner.index("NO_PROXY") - 1 : inner.index("NO_PROXY") + 1]
    assert "HTTP_PROXY" not in inner and "IS_SANDBOX=1" in inner  # the door's one variable kept
    assert "NO_PROXY" not in confined.env and "world:partial" not in json.dumps(settings)
    # this CLI is a script with no `#!` line: no launcher can start it closed, and it says so
    assert inner[-2:] == [str(cli.resolve()), "-p"]
    assert confined.reach.partial == [*SandboxRuntime.partial, "cli-memory"]
    assert confined.reach.aliases == {}  # one spelling of every folder on Linux
    confined.stop()


def test_srt_on_macos_names_the_private_spellings_of_its_system_folders() -> None:
    from evalkit.run.backends.srt import aliases

    assert aliases("darwin") == {
        "/private/var": "/var", "/private/tmp": "/tmp", "/private/etc": "/etc"
    }
    assert aliases("linux") == {}


def test_srt_declares_ownership_partial_only_where_its_agent_runs_as_root() -> None:
    from evalkit.run.backends.srt import visible

    seen = ("paths", "proxy", "hostname", "mountinfo", "processes")
    assert visible(root=False) == seen
    assert "ownership" in visible(root=True)
