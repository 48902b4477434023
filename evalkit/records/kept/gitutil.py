"""git, run with no user or system config so every sandbox starts byte-identical."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from evalkit.errors import EvalkitError, PrerequisiteError

_FIXED_DATE = "2026-01-01T00:00:00+00:00"


class GitError(EvalkitError):
    """A git command failed; the message is one line: the command, where, and git's first
    line of complaint."""


def git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_AUTHOR_NAME="evalkit",
        GIT_AUTHOR_EMAIL="evalkit@localhost",
        GIT_COMMITTER_NAME="evalkit",
        GIT_COMMITTER_EMAIL="evalkit@localhost",
        GIT_AUTHOR_DATE=_FIXED_DATE,
        GIT_COMMITTER_DATE=_FIXED_DATE,
    )
    return env


@dataclass(frozen=True)
class Author:
    """Who made a commit and when (ISO 8601 with an offset)."""

    name: str
    email: str
    date: str

    def env(self) -> dict[str, str]:
        return {
            "GIT_AUTHOR_NAME": self.name,
            "GIT_AUTHOR_EMAIL": self.email,
            "GIT_COMMITTER_NAME": self.name,
            "GIT_COMMITTER_EMAIL": self.email,
            "GIT_AUTHOR_DATE": self.date,
            "GIT_COMMITTER_DATE": self.date,
        }


def git(
    cwd: Path,
    *args: str,
    check: bool = True,
    input: bytes | None = None,
    index: Path | None = None,
    ceiling: Path | None = None,
    author: Author | None = None,
) -> bytes:
    """Run git in cwd; `ceiling` keeps it from looking for a repository at or above that
    folder, so a command meant to run outside any repository does; `author` commits as that
    person at that time."""
    env = git_env()
    if author is not None:
        env.update(author.env())
    if index is not None:
        env["GIT_INDEX_FILE"] = str(index)
    if ceiling is not None:
        env["GIT_CEILING_DIRECTORIES"] = str(ceiling.resolve())
    try:
        done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, input=input)
    except FileNotFoundError:
        raise PrerequisiteError("git is not installed; evalkit needs it for sandboxes") from None
    if check and done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        verb = next((a for a in args if not a.startswith("-")), "")
        raise GitError(
            f"git {verb} failed in {cwd} (exit {done.returncode}): "
            f"{said[0] if said else 'no message'}"
        )
    return done.stdout


def init_with_commit(folder: Path, message: str) -> None:
    """A repository of folder's files in one commit; no template, so no sample hooks."""
    git(folder, "init", "-q", "-b", "main", "--template=")
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "--allow-empty", "--no-verify", "-m", message)


def commit_history(folder: Path, commits: list[tuple[str, list[str], Author]]) -> None:
    """A repository of folder's files as a series of commits (message, the paths each adds,
    who and when), oldest first; the last takes every file no earlier one named. No template,
    so no sample hooks."""
    git(folder, "init", "-q", "-b", "main", "--template=")
    for index, (message, paths, author) in enumerate(commits):
        present = [p for p in paths if (folder / p).exists()]
        if index == len(commits) - 1 or not paths:
            git(folder, "add", "-A")
        elif present:
            git(folder, "add", "--", *present)
        git(folder, "commit", "-q", "--allow-empty", "--no-verify", "-m", message, author=author)


def pack_objects(folder: Path) -> None:
    """The repository's objects in one pack rather than a file and a folder each: a
    repository copied for rep after rep then costs a few files to create, not dozens."""
    git(folder, "repack", "-a", "-d", "-q", "-n")
