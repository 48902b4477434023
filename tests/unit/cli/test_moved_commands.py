"""A command that moved under a group keeps its old name for one release: hidden from
`--help`, it says the new spelling in one line on stderr, then does exactly what the new
spelling does, files, output and exit code alike."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli.main import app
from tests.minisuite import write_suite

pytestmark = pytest.mark.heavy

runner = CliRunner()
MOVED = {
    "freeze": "suite",
    "contaminate": "suite",
    "baseline": "suite",
    "split-reserve": "suite",
    "build": "suite",
    "rescore": "results",
    "migrate": "results",
}
FROZEN = [["suite", "freeze"]]
CASES = [
    ("freeze", [], []),
    ("contaminate", FROZEN, ["--set", "run", "--note", "tuned the description"]),
    ("contaminate", [], ["--set", "run", "--note", "no lock yet"]),
    ("baseline", FROZEN, []),
    ("baseline", FROZEN, ["--clear", "--replace"]),
    ("split-reserve", [], ["--seed", "7"]),
    ("split-reserve", FROZEN, ["--seed", "7"]),
    ("build", [], ["--force"]),
    ("rescore", [], []),
    ("migrate", [], []),
]
Outcome = tuple[int, str, str, dict[str, str]]


def _tree(root: Path) -> dict[str, str]:
    """Every file under the suite with its text, the lock's record dates masked."""
    return {
        str(p.relative_to(root)): re.sub(r"date: '[^']*'", "date: <when>", p.read_text())
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _play(root: Path, setup: list[list[str]], args: list[str]) -> tuple[int, str, str]:
    for step in setup:
        assert runner.invoke(app, ["--suite", str(root), *step]).exit_code == 0, step
    done = runner.invoke(app, ["--suite", str(root), *args])
    return (
        done.exit_code,
        done.stdout.replace(str(root), "ROOT"),
        done.stderr.replace(str(root), "ROOT"),
    )


@pytest.mark.parametrize(
    ("old", "setup", "args"), CASES, ids=lambda v: v if isinstance(v, str) else None
)
def test_the_old_name_says_the_new_one_once_then_does_exactly_what_it_does(
    tmp_path: Path, old: str, setup: list[list[str]], args: list[str]
) -> None:
    then, now = write_suite(tmp_path / "old"), write_suite(tmp_path / "new")
    code, stdout, stderr = _play(then, setup, [old, *args])
    new_code, new_stdout, new_stderr = _play(now, setup, [MOVED[old], old, *args])
    notice, _, rest = stderr.partition("\n")
    assert notice == (
        f"evalkit: `evalkit {old}` is now `evalkit {MOVED[old]} {old}`; "
        "the old name goes in the next release"
    )
    # a usage error names the spelling that was typed, as Click's usage lines do
    typed = new_stderr.replace(f"evalkit {MOVED[old]} {old}", f"evalkit {old}")
    assert (code, stdout, rest) == (new_code, new_stdout, typed)
    assert _tree(then) == _tree(now)


def test_every_moved_name_is_played() -> None:
    assert {old for old, _, _ in CASES} == set(MOVED)


def test_the_new_spelling_says_nothing_of_the_move(tmp_path: Path) -> None:
    done = runner.invoke(app, ["--suite", str(write_suite(tmp_path / "s")), "suite", "freeze"])
    assert done.exit_code == 0 and "is now" not in done.stderr


@pytest.mark.parametrize("old", sorted(MOVED))
def test_the_old_name_is_hidden_from_help_and_its_own_help_names_the_new(old: str) -> None:
    listing = runner.invoke(app, ["--help"], env={"COLUMNS": "200"}).stdout
    assert not re.search(rf"^\s+{re.escape(old)}\s", listing, re.M)
    assert re.search(
        rf"^\s+{re.escape(old)}\s", runner.invoke(app, [MOVED[old], "--help"]).stdout, re.M
    )
    own = runner.invoke(app, [old, "--help"], env={"COLUMNS": "200"}).stdout
    assert f"now `evalkit {MOVED[old]} {old}`" in own


def test_the_hidden_names_are_exactly_the_moved_ones() -> None:
    import typer.main

    group = typer.main.get_command(app)
    hidden = {name for name, cmd in group.commands.items() if cmd.hidden}  # type: ignore[attr-defined]
    assert hidden == set(MOVED)


def test_the_guide_s_table_of_moves_is_the_one_the_cli_keeps() -> None:
    from tests.conftest import REPO

    text = (REPO / "docs" / "usage.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `evalkit ([\w-]+)` \| `evalkit ([\w-]+) \1` \|$", text, re.M)
    assert dict(rows) == MOVED


def test_a_misspelt_old_name_is_offered_its_new_spelling_never_the_hidden_one() -> None:
    done = runner.invoke(app, ["freez"])
    assert done.exit_code == 2
    assert "Did you mean 'suite freeze'?" in done.stderr and "'freeze'" not in done.stderr
