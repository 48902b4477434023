"""`freeze` refuses a suite whose agent would read a word naming the measurement in what the
suite itself hands it: a Task, a fixture file (its name or its text), a commit message of the
world's history, a neighbour plugin's file. The Task is never quoted: only that one holds a
marker, and which word."""

from __future__ import annotations

from evalkit.errors import RefusedError
from evalkit.scoring.fixturefiles import iter_relative_files
from evalkit.scoring.world.markers import Markers
from evalkit.suite.config import Suite
from evalkit.suite.task import task_marker

MAX_TEXT_BYTES = 2_000_000


def suite_markers(suite: Suite) -> Markers:
    world = suite.config.world
    ids = [s.id for s in suite.scenarios("all")]
    return Markers(ids, world.markers, world.ordinary)


def marker_problems(suite: Suite) -> list[str]:
    """`marker:task:<scenario>:<word>`, `marker:fixture:<file>:<word>`,
    `marker:neighbour:<file>:<word>` and `marker:history:<n>:<word>` for each place a
    marker sits."""
    markers = suite_markers(suite)
    problems = []
    for scenario in suite.scenarios("all"):
        word = task_marker(scenario, markers.first)
        if word is not None:
            problems.append(f"marker:task:{scenario.id}:{word}")
    folders = [("fixture", name, f) for name, f in suite.fixture_dirs().items()]
    folders += [("neighbour", f.name, f) for f in suite.neighbours]
    for kind, name, folder in folders:
        for rel, path in iter_relative_files(folder):
            text = rel
            if path.is_file() and path.stat().st_size <= MAX_TEXT_BYTES:
                text += "\n" + path.read_bytes().decode("utf-8", "replace")
            word = markers.first(text)
            if word is not None:
                problems.append(f"marker:{kind}:{name}/{rel}:{word}")
    for index, commit in enumerate(suite.config.world.history, 1):
        word = markers.first(commit.message)
        if word is not None:
            problems.append(f"marker:history:{index}:{word}")
    return problems


def refuse_markers(suite: Suite) -> None:
    problems = marker_problems(suite)
    if problems:
        more = f" and {len(problems) - 5} more" if len(problems) > 5 else ""
        shown = ", ".join(problems[:5]) + more
        raise RefusedError(
            f"{suite.config_path}: not frozen: the agent would read a word that names the "
            f"measurement ({shown}); reword it, or name a word the project uses in its ordinary "
            "sense under world.ordinary"
        )
