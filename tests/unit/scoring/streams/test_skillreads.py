"""A skill's use read from what a shell command read: each command is run by bash over a
folder of skills, and a command counts as one skill's use exactly when what bash printed
is that SKILL.md's body."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

from evalkit.reference.wire.responses import SKILL_READS, skill_command
from evalkit.scoring.streams.skillreads import skill_read

BODY = "---\nname: write\ndescription: how to write a note\n---\nWrite notes with a summary.\n"
SKILL = "{skills}/demo:write/SKILL.md"
USE = [
    "cat {skill}",
    "cat -n {skill}",
    "sed -n '1,200p' {skill}",
    "sed -n 1,400p {skill}",
    "head -n 50 {skill}",
    "head -200 {skill}",
    "tail -n +1 {skill}",
    "nl -ba {skill}",
    "awk '{{print}}' {skill}",
    "awk 1 {skill}",
    "less {skill}",
    "more {skill}",
    "cat {skill} 2>/dev/null",
    "cat {skill} | head -n 100",
    "python3 -c \"print(open('{skill}').read())\"",
    "python3 -c \"import pathlib; print(pathlib.Path('{skill}').read_text())\"",
]
"""Each prints the one skill's body: that skill's use."""
NOT_USE = [
    "ls {skills}",
    "ls {skills}/demo:write",
    "find {skills} -name SKILL.md",
    "grep -l name {skills}/*/SKILL.md",
    "grep -rl description {skills}",
    "rg -l description {skills}",
    "rg --files {skills}",
    "wc -l {skills}/*/SKILL.md",
    "cat {skills}/*/SKILL.md | wc -l",
]
"""Each lists or searches across skills: no skill's body is read."""


@pytest.fixture(scope="module")
def skills(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("skills")
    for name in ("demo:write", "demo:review"):
        (root / name).mkdir()
        (root / name / "SKILL.md").write_text(BODY.replace("write", name.split(":")[1]))
    return root


def printed(command: str) -> str:
    done = subprocess.run(["bash", "-c", command], capture_output=True, timeout=20)
    return done.stdout.decode()


def the_body_in(output: str) -> bool:
    lines = [line.split("\t", 1)[-1] for line in output.splitlines()]
    return all(line in lines for line in BODY.splitlines())


@pytest.mark.parametrize("form", USE)
def test_a_command_that_prints_one_skills_body_is_its_use(skills: Path, form: str) -> None:
    command = form.format(skill=shlex.quote(SKILL.format(skills=skills)), skills=skills)
    assert the_body_in(printed(command)), "bash printed no body: the list is wrong"
    assert skill_read(command) == "demo:write"


@pytest.mark.parametrize("form", NOT_USE)
def test_listing_or_searching_across_skills_is_no_skills_use(skills: Path, form: str) -> None:
    command = form.format(skills=shlex.quote(str(skills)))
    assert not the_body_in(printed(command)), "bash printed a body: the list is wrong"
    assert skill_read(command) is None


def test_the_scripted_codex_model_plays_every_form_and_each_is_the_skills_use() -> None:
    forms = len(SKILL_READS) + 1
    commands = {skill_command("/home/x/skills/demo:write/SKILL.md", n) for n in range(forms)}
    assert len(commands) == forms
    assert {skill_read(c) for c in commands} == {"demo:write"}
