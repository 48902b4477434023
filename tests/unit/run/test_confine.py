"""A confined command reaches its own folders, the system and its runtimes, and nothing else."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from evalkit.run.backends.confine import api_target, cli_install, confine, unavailable

needs_bwrap = pytest.mark.skipif(unavailable() is not None, reason="no confinement here")

PROBE = """#!/bin/sh
# a stand-in CLI: tries each path, says only whether it worked
for target in "$@"; do
  if ( echo x > "$target" ) 2>/dev/null; then echo "write-ok $target"
  else echo "write-no $target"; fi
  if [ -e "$target" ]; then echo "seen $target"; fi
done
"""


def _outside_tree(tmp_path: Path) -> dict[str, Path]:
    own = tmp_path / "rep" / "project"
    paths = {
        "own": own,
        "suite": tmp_path / "suite",
        "home": tmp_path / "home",
        "results": tmp_path / "results",
        "cli": tmp_path / "tools" / "bin",
    }
    for folder in paths.values():
        folder.mkdir(parents=True)
    (paths["suite"] / "scenario.md").write_text("instrument\n")
    cli = paths["cli"] / "claude"
    cli.write_text(PROBE)
    cli.chmod(0o755)
    return paths


def _lines(done: subprocess.CompletedProcess[str]) -> set[str]:
    return set(done.stdout.splitlines())


@needs_bwrap
def test_only_the_reps_own_folders_take_a_write_and_the_instrument_is_absent(
    tmp_path: Path,
) -> None:
    paths = _outside_tree(tmp_path)
    cli = paths["cli"] / "claude"
    targets = [
        paths["own"] / "mine.txt",
        paths["suite"] / "scenario.md",
        paths["results"] / "row.txt",
        paths["home"] / "x.txt",
        Path("/etc/evalkit-x"),
    ]
    hidden = [paths["suite"], paths["results"], paths["home"]]
    wrapped = confine([str(cli), *map(str, targets)], {"PATH": os.environ["PATH"]}, paths["own"],
                      [paths["own"]], tmp_path / "rep" / "home", cli, hidden)  # fmt: skip
    try:
        done = subprocess.run(wrapped.command, env=wrapped.env, capture_output=True, text=True,
                              pass_fds=wrapped.pass_fds,
                              timeout=60, check=False)  # fmt: skip
    finally:
        wrapped.stop()
    seen = _lines(done)
    assert f"write-ok {targets[0]}" in seen, done.stdout + done.stderr
    for target in targets[1:]:
        assert f"write-no {target}" in seen, f"{target} took a write"
    assert f"seen {paths['suite'] / 'scenario.md'}" not in seen, "the suite is visible"
    assert (paths["suite"] / "scenario.md").read_text() == "instrument\n"
    assert sorted(p.name for p in paths["home"].iterdir()) == []
    assert sorted(p.name for p in paths["results"].iterdir()) == []
    assert wrapped.reach.confined and str(paths["own"]) in wrapped.reach.writable


@needs_bwrap
def test_the_network_inside_is_loopback_only(tmp_path: Path) -> None:
    paths = _outside_tree(tmp_path)
    cli = paths["cli"] / "claude"
    cli.write_text("#!/bin/sh\ncat /proc/net/dev\n")
    wrapped = confine([str(cli)], {"PATH": os.environ["PATH"]}, paths["own"], [paths["own"]],
                      tmp_path / "rep" / "home", cli, [])  # fmt: skip
    try:
        done = subprocess.run(wrapped.command, env=wrapped.env, capture_output=True, text=True,
                              pass_fds=wrapped.pass_fds,
                              timeout=60, check=False)  # fmt: skip
    finally:
        wrapped.stop()
    interfaces = {line.split(":")[0].strip() for line in done.stdout.splitlines() if ":" in line}
    assert interfaces == {"lo"}, done.stdout + done.stderr


def test_without_bwrap_on_path_confinement_is_unavailable_and_says_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    why = unavailable()
    assert why is not None and "apt-get install bubblewrap" in why and "--unconfined" in why


def test_an_http_base_url_is_forwarded_and_https_is_not() -> None:
    inside = api_target({"ANTHROPIC_BASE_URL": "http://10.0.0.5:8080/gw"})
    assert inside == ("10.0.0.5", 8080, "http://127.0.0.1:8080/gw")
    assert api_target({"ANTHROPIC_BASE_URL": "https://api.example.com"}) is None
    assert api_target({}) is None


def test_the_cli_install_is_the_folder_above_its_topmost_node_modules(tmp_path: Path) -> None:
    real = tmp_path / "tools" / "node_modules" / "@a" / "cli" / "node_modules" / "x" / "claude"
    real.parent.mkdir(parents=True)
    real.write_text("")
    link = tmp_path / "bin-claude"
    link.symlink_to(real)
    assert cli_install(link) == tmp_path / "tools"


def test_doctor_fails_confinement_without_bwrap_and_names_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalkit.run.prerequisites.doctor import check_confinement

    monkeypatch.setenv("PATH", str(tmp_path))
    check = check_confinement()
    assert not check.ok and check.name == "confinement"
    assert "apt-get install bubblewrap" in check.fix


def test_on_macos_nothing_confines_a_rep_and_it_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    import evalkit.run.backends.confine as confine_module

    monkeypatch.setattr(confine_module.sys, "platform", "darwin")
    confine_module._unavailable.cache_clear()
    try:
        why = unavailable()
    finally:
        confine_module._unavailable.cache_clear()
    assert why is not None and "darwin" in why and "--unconfined" in why


def test_doctor_s_fix_where_nothing_confines_is_to_pass_unconfined(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import evalkit.run.backends.confine as confine_module
    from evalkit.run.prerequisites.doctor import check_confinement

    monkeypatch.setattr(confine_module.sys, "platform", "darwin")
    confine_module._unavailable.cache_clear()
    try:
        check = check_confinement()
    finally:
        confine_module._unavailable.cache_clear()
    assert not check.ok and check.fix.startswith("pass --unconfined"), check.fix
