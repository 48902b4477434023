"""How srt starts a rep's CLI on Linux: through the launcher, from the CLI's execute-only
copy, with what the launcher cannot close declared, and nothing the agent can read of it
naming the measurement."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from evalkit.run.backends import closing, exec_only, seccomp, srt_start
from evalkit.run.backends.closing import status_says_closed
from evalkit.scoring.world.markers import Markers

needs_table = pytest.mark.skipif(
    seccomp.program() is None or srt_start._python() is None,
    reason="no system call table or no system python3 here",
)
SYSTEM_PYTHON = Path("/usr/bin/python3")
CLOSED = (
    "Uid:\t0\t0\t0\t0\nCapInh:\t0000000000000000\nCapPrm:\t0000000000000000\n"
    "CapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nCapAmb:\t0000000000000000\n"
    "NoNewPrivs:\t1\n"
)


def _native(at: Path) -> Path:
    at.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(SYSTEM_PYTHON.resolve(), at)
    return at


def test_the_launcher_the_agent_can_read_names_no_measurement() -> None:
    text = srt_start.script_text()
    assert Markers().find(text) == []
    assert '"""' not in text and "#" not in text.replace("#!", "")


def test_a_capability_left_anywhere_is_not_closed() -> None:
    assert status_says_closed(CLOSED)
    assert not status_says_closed(CLOSED.replace("CapBnd:\t0000000000000000", "CapBnd:\t1"))
    assert not status_says_closed(CLOSED.replace("CapEff:\t0000000000000000", "CapEff:\t4"))
    assert not status_says_closed(CLOSED.replace("NoNewPrivs:\t1", "NoNewPrivs:\t0"))
    other_uid = CLOSED.replace("Uid:\t0\t0", "Uid:\t1000\t1000")
    assert status_says_closed(other_uid.replace("CapBnd:\t0000000000000000", "CapBnd:\t1ff"))


@needs_table
def test_a_native_cli_starts_from_its_copy_through_the_launcher(tmp_path: Path) -> None:
    cli = _native(tmp_path / "tools" / "cli")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    start = srt_start.plan(cli, cli.parent, os.environ["PATH"], scratch)
    python, _, _, script, code, copy, *words = start.argv
    assert (python, words) == (srt_start._python(), [str(cli.resolve())])
    assert os.stat(copy).st_mode & 0o777 == exec_only.MODE and copy != str(cli.resolve())
    assert Path(code).read_bytes() == seccomp.program()
    assert Path(script).read_text() == srt_start.script_text()
    assert all(not os.stat(f).st_mode & 0o222 for f in (script, code))
    assert start.readable == [str(scratch / srt_start.FOLDER), copy] and start.closed


@needs_table
def test_a_plain_script_cli_starts_its_interpreter_from_its_copy(tmp_path: Path) -> None:
    cli = tmp_path / "tools" / "cli.py"
    cli.parent.mkdir()
    cli.write_text("#!/usr/bin/env python3\nprint('hi')\n")
    cli.chmod(0o755)
    path = f"{SYSTEM_PYTHON.parent}:/bin"
    start = srt_start.plan(cli, cli.parent, path, tmp_path)
    assert start.argv[-2:] == ["python3", str(cli.resolve())] and start.closed


@needs_table
def test_a_script_whose_first_line_gives_an_option_runs_unclosed_and_says_so(
    tmp_path: Path,
) -> None:
    cli = tmp_path / "cli.py"
    cli.write_text("#!/usr/bin/env -S python3 -u\nprint('hi')\n")
    start = srt_start.plan(cli, tmp_path, f"{SYSTEM_PYTHON.parent}:/bin", tmp_path)
    assert start.argv == [str(cli.resolve())] and not start.closed


@needs_table
def test_a_cli_whose_install_holds_another_native_program_leaves_its_memory_declared(
    tmp_path: Path,
) -> None:
    install = tmp_path / "install"
    cli = _native(install / "node_modules" / "cli" / "bin" / "cli")
    os.link(cli, install / "node_modules" / "cli" / "bin" / "same-file")
    addon = _native(install / "node_modules" / "pty" / "pty.node")
    assert srt_start.plan(cli, install, os.environ["PATH"], tmp_path).closed
    exec_only._install_natives.cache_clear()
    _native(install / "node_modules" / "cli" / "vendor" / "engine")
    assert addon.is_file() and not srt_start.plan(cli, install, os.environ["PATH"], tmp_path).closed
    exec_only._install_natives.cache_clear()


def _launched(tmp_path: Path, code: bytes, *command: str) -> subprocess.CompletedProcess[str]:
    script, calls = tmp_path / "start.py", tmp_path / "calls"
    script.write_text(srt_start.script_text())
    calls.write_bytes(code)
    return subprocess.run([str(SYSTEM_PYTHON), "-I", "-S", str(script), str(calls), *command],
                          capture_output=True, text=True, timeout=30, check=False)  # fmt: skip


@needs_table
def test_the_launcher_starts_its_program_with_no_capability_and_the_filter(
    tmp_path: Path,
) -> None:
    code = seccomp.program()
    assert code is not None
    look = "print(open('/proc/self/status').read())"
    done = _launched(tmp_path, code, str(SYSTEM_PYTHON), "shown-name", "-c", look)
    assert done.returncode == 0, done.stderr
    assert status_says_closed(done.stdout) and "Seccomp:\t2" in done.stdout


@needs_table
def test_a_launcher_that_cannot_load_the_filter_starts_nothing(tmp_path: Path) -> None:
    done = _launched(tmp_path, b"", str(SYSTEM_PYTHON), "python3", "-c", "print('started')")
    assert done.returncode == closing.REFUSED and "started" not in done.stdout
    assert done.stderr.startswith("cannot start:")
