"""A git failure is one line a user can read, not git's whole complaint."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.errors import EvalkitError
from evalkit.records.kept.gitutil import GitError, git


def test_a_git_failure_is_one_line_naming_the_command_and_its_first_complaint(
    tmp_path: Path,
) -> None:
    git(tmp_path, "init", "-q")
    with pytest.raises(GitError) as caught:
        git(tmp_path, "apply", "--binary", "-", input=b"diff --git a/x b/x\nnot a patch\n")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"git apply failed in {tmp_path} (exit ")
    assert isinstance(caught.value, EvalkitError) and caught.value.exit_code == 2
