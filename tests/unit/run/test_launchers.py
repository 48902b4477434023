"""A python3 that is a launcher is asked once what it starts; the cases start that directly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from evalkit.run.backends.launchers import direct_folder

ASK = ["-c", "import sys; print(sys.executable)"]


def on_path(tmp_path: Path, script: str) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").write_text(script)
    (bin_dir / "python3").chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}


def test_a_launcher_is_asked_once_and_its_interpreter_started_directly(tmp_path: Path) -> None:
    launched = tmp_path / "launched"
    env = on_path(tmp_path, f'#!/bin/sh\necho >> "{launched}"\nexec "{sys.executable}" "$@"\n')
    first = direct_folder(tmp_path / "direct", env, tmp_path)
    assert first is not None
    for _ in range(2):
        done = subprocess.run(
            ["python3", *ASK],
            env={**env, "PATH": f"{first}{os.pathsep}{env['PATH']}"},
            capture_output=True,
            text=True,
            check=True,
        )
        assert done.stdout.strip() == sys.executable
    assert launched.read_text().count("\n") == 1


def test_a_python3_that_is_the_interpreter_itself_is_left_alone(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    os.symlink(os.path.realpath(sys.executable), bin_dir / "python3")
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    assert direct_folder(tmp_path / "direct", env, tmp_path) is None


def test_a_launcher_that_does_not_say_what_it_starts_is_left_alone(tmp_path: Path) -> None:
    env = on_path(tmp_path, "#!/bin/sh\necho 'not a path'\n")
    assert direct_folder(tmp_path / "direct", env, tmp_path) is None
