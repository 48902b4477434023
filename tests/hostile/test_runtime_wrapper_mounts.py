"""A runtime wrapper in a user's bin/ never makes that folder, or the one above it, readable in
a rep: the sandbox mounts the real interpreter behind it, and nothing beside the wrapper."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from evalkit.run.backends.confine import confine, runtimes, unavailable

needs_bwrap = pytest.mark.skipif(unavailable() is not None, reason="no confinement here")


def _user_bin(tmp_path: Path, name: str) -> Path:
    """A user's home with bin/<name>, a wrapper that starts the system's interpreter, and a
    private file beside it."""
    real = shutil.which(name, path="/usr/bin:/bin")
    if real is None:
        pytest.skip(f"no system {name} here")
    home = tmp_path / "user"
    (home / "bin").mkdir(parents=True)
    wrapper = home / "bin" / name
    wrapper.write_text(f'#!/bin/sh\nexec {real} "$@"\n')
    wrapper.chmod(0o755)
    (home / "private.txt").write_text("not the rep's\n")
    return home


def _holds(mounted: str, path: Path) -> bool:
    folder = Path(mounted)
    return folder == path or folder in path.parents


@pytest.mark.parametrize("name", ["ruby", "node", "python3"])
def test_a_wrapper_in_a_user_bin_mounts_no_folder_holding_the_users_files(
    tmp_path: Path, name: str
) -> None:
    home = _user_bin(tmp_path, name)
    found = runtimes(f"{home / 'bin'}:/usr/bin:/bin")
    leaks = [m for m in found.mounted if _holds(m, home / "private.txt")]
    assert leaks == [], f"mounted above the wrapper: {leaks}"


@needs_bwrap
def test_inside_a_rep_the_users_folder_beside_the_wrapper_is_absent(tmp_path: Path) -> None:
    home = _user_bin(tmp_path, "node")
    own = tmp_path / "rep" / "project"
    own.mkdir(parents=True)
    cli = tmp_path / "tools" / "claude"
    cli.parent.mkdir()
    cli.write_text('#!/bin/sh\n[ -e "$1" ] && echo seen || echo absent\nnode -e "1"\necho $?\n')
    cli.chmod(0o755)
    env = {"PATH": f"{home / 'bin'}:/usr/bin:/bin"}
    wrapped = confine([str(cli), str(home / "private.txt")], env, own, [own],
                      tmp_path / "rep" / "home", cli, [])  # fmt: skip
    try:
        done = subprocess.run(wrapped.command, env=wrapped.env, capture_output=True, text=True,
                              pass_fds=wrapped.pass_fds,
                              timeout=60)  # fmt: skip
    finally:
        wrapped.stop()
    assert done.stdout.split() == ["absent", "0"], done.stderr[-400:]


def test_an_interpreter_outside_the_system_is_mounted_as_its_file_and_library_folders(
    tmp_path: Path,
) -> None:
    """The interpreter behind a version manager's shim: its file, its libraries, never its
    install's top folder, which holds its other tools too."""
    import sys

    real = Path(sys.executable).resolve()
    if str(real).startswith(("/usr/", "/bin/")):
        pytest.skip("this interpreter lives in a system folder")
    shims = tmp_path / "shims"
    shims.mkdir()
    (shims / "python3").write_text(f'#!/bin/sh\nexec "{real}" "$@"\n')
    (shims / "python3").chmod(0o755)
    found = runtimes(f"{shims}:/usr/bin:/bin")
    assert str(real) in found.mounted and str(real.parent / "python3") in found.mounted
    assert not any(_holds(m, real) and Path(m) != real for m in found.mounted)
    assert found.front == (str(real.parent),)


def test_doctor_names_each_runtime_file_a_rep_mounts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    from evalkit.run.prerequisites.doctor import check_runtimes

    real = Path(sys.executable).resolve()
    if str(real).startswith(("/usr/", "/bin/")):
        pytest.skip("this interpreter lives in a system folder")
    monkeypatch.setenv("PATH", f"{real.parent}:/usr/bin:/bin")
    check = check_runtimes()
    assert check.ok and check.name == "runtimes" and str(real) in check.detail
