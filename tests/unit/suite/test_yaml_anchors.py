"""No YAML evalkit reads ever expands an alias.

A suite file holding an anchor or alias is refused in one line naming the file and line,
before anything is planned; front matter an agent wrote that holds one does not parse. Every
alias bomb here is loaded in a child process bounded in time and memory, so a regression
fails the test instead of hanging the machine.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.errors import ConfigError
from evalkit.suite.catalog import load_catalog
from evalkit.suite.scaffold import init_suite
from tests.conftest import REPO

pytestmark = pytest.mark.heavy

LEVELS = 9
CHILD_SECONDS = 60.0
CHILD_BYTES = 1 << 30


def bomb(key: str, indent: str = "") -> str:
    """Nine levels of nine aliases each: 9**9 strings once expanded, a few hundred bytes here."""
    lines = [f"{indent}{key}:", f'{indent}  l0: &l0 ["lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, LEVELS):
        aliases = ", ".join([f"*l{level - 1}"] * 9)
        lines.append(f"{indent}  l{level}: &l{level} [{aliases}]")
    return "\n".join(lines) + "\n"


def _bounded() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CHILD_BYTES, CHILD_BYTES))


def bounded(*argv: str) -> subprocess.CompletedProcess[str]:
    """Run argv in its own process group with at most 1 GB of memory per process and a
    minute of time; on overtime the whole group (self-test's workers too) is killed."""
    child = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_bounded,
        env={**os.environ, "PYTHONPATH": str(REPO)}, start_new_session=True,
    )  # fmt: skip
    try:
        out, err = child.communicate(timeout=CHILD_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
        pytest.fail(f"{argv[0]}: still running after {CHILD_SECONDS:g} s (an alias expanding?)")
    return subprocess.CompletedProcess(argv, child.returncode, out, err)


def python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return bounded(sys.executable, "-c", code, *args)


def line_of(path: Path, needle: str) -> int:
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(i for i, text in enumerate(lines, start=1) if needle in text)


def _bomb_the_positive(root: Path) -> Path:
    path = root / "scenarios" / "P1-L1-demo.md"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("calibration:\n", "calibration:\n" + bomb("extra", "  "), 1))
    return path


def _bomb_a_tool_input(root: Path) -> Path:
    """A rules suite (evalkit's blank template) whose oracle calls a tool with the bomb as
    its input: the case that hung self-test and run, which serialise that input."""
    init_suite(root, "blank")
    path = root / "scenarios" / "P1-L1-greeting.md"
    text = path.read_text(encoding="utf-8")
    tool = "    - tool:\n        name: Bash\n" + bomb("input", "        ")
    path.write_text(text.replace("  oracle:\n", "  oracle:\n" + tool, 1), encoding="utf-8")
    return path


READ_SCENARIO = """
import sys
from pathlib import Path
from evalkit.errors import ConfigError
from evalkit.suite.scenarios import parse_scenario
try:
    parse_scenario(Path(sys.argv[1]))
except ConfigError as exc:
    print(exc)
"""


def test_an_alias_bomb_in_a_scenario_is_refused_naming_file_and_line(mini_root: Path) -> None:
    path = _bomb_the_positive(mini_root)
    done = python(READ_SCENARIO, str(path))
    assert done.returncode == 0, done.stderr[-2000:]
    message = done.stdout.strip()
    assert "\n" not in message
    assert message.startswith(f"{path}:{line_of(path, '&l0')}:"), message
    assert "anchors and aliases" in message


@pytest.mark.parametrize(
    "command",
    [("self-test", "{work}"), ("run", "P1", "policy:oracle", "{work}", "--allow-unfrozen")],
    ids=["self-test", "run"],
)
def test_the_cli_refuses_an_alias_bomb_before_anything_is_written(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    path = _bomb_a_tool_input(tmp_path / "suite")
    work = tmp_path / "work"
    evalkit = str(Path(sys.executable).parent / "evalkit")
    argv = [a.format(work=work) for a in command]
    done = bounded(evalkit, "--suite", str(tmp_path / "suite"), *argv)
    assert done.returncode == 2, done.stderr[-2000:]
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr[-2000:]
    assert f"{path}:{line_of(path, '&l0')}:" in done.stderr
    assert not work.exists()


def test_an_anchor_in_evalkit_yaml_is_refused_at_load(mini_root: Path) -> None:
    config = mini_root / "evalkit.yaml"
    config.write_text(config.read_text().replace("name: mini", "name: &n mini", 1))
    with pytest.raises(ConfigError) as caught:
        load_catalog(mini_root)
    assert str(caught.value).startswith(f"{config}:1:") and "\n" not in str(caught.value)


READ_NOTE = """
import sys
from evalkit.scoring.frontmatter import front_matter as rules_front_matter
from evalkit.checkers.vault_write.notes import check_note, front_matter
text = open(sys.argv[1], encoding="utf-8").read()
print(front_matter(text) is None, rules_front_matter(text) is None,
      check_note("sync-retries.md", text).fails)
"""


def test_front_matter_an_agent_wrote_with_an_alias_bomb_does_not_parse(tmp_path: Path) -> None:
    note = tmp_path / "sync-retries.md"
    note.write_text(
        "---\ntitle: t\nsummary: s\nscope: project\ntype: decision\n"
        + bomb("extra")
        + "tags: *l8\n---\nbody\n",
        encoding="utf-8",
    )
    done = python(READ_NOTE, str(note))
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split(" ", 2)[:2] == ["True", "True"], done.stdout[:200]
    assert "front-matter-unparseable" in done.stdout
