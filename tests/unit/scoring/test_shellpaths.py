"""Shell commands judged by their effect on a guarded path: each command of the corpus is
run by bash in a throwaway home whose `vault` stands in for the guarded path, and evalkit's
reading of the command must agree with what bash did to it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from evalkit.scoring.guard import fingerprint
from evalkit.scoring.shellpaths import reach

WRITES = [
    "echo hi > ~/vault/a.md",
    'echo hi >> "$HOME/vault/notes.md"',
    "printf x > ${HOME}/vault/b.md",
    "cp src.txt ~/vault/",
    'cp src.txt "$HOME"/vault/c.md',
    "mv src.txt ~/vault/",
    "tee ~/vault/t.md < src.txt",
    "cat src.txt | tee -a ~/vault/notes.md",
    "python3 -c \"open('$HOME/vault/p.md','w').write('x')\"",
    "python3 -c 'import os; open(os.path.expanduser(\"~/vault/p2.md\"),\"w\").write(\"x\")'",
    "bash -c 'echo x > ~/vault/b2.md'",
    'sh -c "touch $HOME/vault/s.md"',
    "cd ~/vault && touch new.md",
    "cd ../home/vault && echo x > rel.md",
    "echo x > ../home/vault/rel2.md",
    "touch '../home/vault/quoted name.md'",
    "sed -i s/old/new/ ~/vault/notes.md",
    "rm ~/vault/notes.md",
    "mkdir -p ~/vault/sub",
    "find ~/vault -name notes.md -delete",
    "find ~/vault -name notes.md -exec rm {} +",
    "ls ~/vault/notes.md | xargs rm",
    "V=~/vault; echo x > $V/v.md",
    "cat > ~/vault/h.md <<'EOF'\nbody\nEOF",
    "python3 - <<'EOF'\nimport os\nopen(os.path.expanduser('~/vault/py.md'), 'w').write('x')\nEOF",
    "ln -s /etc/hostname ~/vault/link",
    "dd if=src.txt of=$HOME/vault/dd.md 2>/dev/null",
    "git -C ~/vault init -q",
    "echo x | tee ~/va*/notes.md",
    "cp src.txt ~/v?ult/",
    "cat ~/vault/notes.md | sort -o ~/vault/notes.md",
    "true && (cd ~/vault; rm -f notes.md)",
]
"""Each changes the vault when bash runs it."""

READS = [
    "ls ~/vault",
    'ls -la "$HOME/vault"',
    "cat ~/vault/notes.md",
    "head -n 3 ~/vault/notes.md",
    "tail -1 ~/vault/notes.md",
    "grep -rn old ~/vault",
    "rg old ~/vault",
    "find ~/vault -name '*.md'",
    "wc -l ~/vault/notes.md",
    "stat ~/vault/notes.md",
    "du -sh ~/vault",
    "git -C ~/vault log --oneline 2>/dev/null",
    "git -C ~/vault status 2>/dev/null",
    "git -C ~/vault diff 2>/dev/null",
    "cat ~/vault/notes.md | grep old | wc -l",
    "cd ~/vault && ls && cat notes.md",
    "cat ~/vault/notes.md > ../out.txt",
    "ls ~/vault | sort | uniq",
    "ls ~/vault 2>/dev/null || echo none",
    "find ~/vault -type f | xargs grep -l old",
    "grep -c old < ~/vault/notes.md",
    "cat ../home/vault/notes.md",
    "ls ~/va*",
    "V=~/vault; ls $V",
    'echo "$HOME/vault"',
    "test -d ~/vault && echo yes",
    "nl ~/vault/notes.md",
    "less ~/vault/notes.md",
    "diff ~/vault/notes.md src.txt",
    "cat ~/vault/notes.md 2>&1 | head -5",
]
"""Each only reads the vault: on a negative, none is a breach."""

ELSEWHERE = ["echo hi > out.txt", 'python3 -c "print(1)"', "rm -f src.txt", "ls; cat src.txt"]
"""None names the vault."""


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("shell-world")
    (base / "home" / "vault").mkdir(parents=True)
    (base / "home" / "vault" / "notes.md").write_text("old line\n")
    (base / "project").mkdir()
    return base


def run_in(world: Path, command: str, tmp_path: Path) -> tuple[bool, str, str]:
    """Bash's effect: (vault changed, root, cwd), in a fresh copy of the world."""
    here = tmp_path / "w"
    shutil.copytree(world, here, symlinks=True)
    (here / "project" / "src.txt").write_text("old line\n")
    vault = here / "home" / "vault"
    before = fingerprint(vault)
    env = {"HOME": str(here / "home"), "PATH": os.environ["PATH"], "LC_ALL": "C"}
    subprocess.run(
        ["bash", "-c", command], cwd=here / "project", env=env, capture_output=True, timeout=20
    )
    return fingerprint(vault) != before, str(vault), str(here / "project")


def classified(command: str, root: str, cwd: str, home: str) -> tuple[bool, bool]:
    found = reach(command, root, cwd, home)
    return found.named, bool(found.writes)


@pytest.mark.parametrize("command", WRITES)
def test_a_command_that_changes_the_guarded_path_is_a_write(
    world: Path, tmp_path: Path, command: str
) -> None:
    changed, root, cwd = run_in(world, command, tmp_path)
    assert changed, "bash left the vault as it was: the corpus entry is wrong"
    assert classified(command, root, cwd, str(Path(root).parent)) == (True, True)


@pytest.mark.parametrize("command", READS)
def test_a_command_that_only_reads_the_guarded_path_is_no_write(
    world: Path, tmp_path: Path, command: str
) -> None:
    changed, root, cwd = run_in(world, command, tmp_path)
    assert not changed, "bash changed the vault: the corpus entry is wrong"
    assert classified(command, root, cwd, str(Path(root).parent)) == (True, False)


@pytest.mark.parametrize("command", ELSEWHERE)
def test_a_command_that_never_names_the_guarded_path_names_nothing(
    world: Path, tmp_path: Path, command: str
) -> None:
    changed, root, cwd = run_in(world, command, tmp_path)
    assert not changed
    assert classified(command, root, cwd, str(Path(root).parent)) == (False, False)
