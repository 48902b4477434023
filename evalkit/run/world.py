"""The world a rep's agent lives in, as evalkit builds it: the project's git history as a
person made it, dated from the grid's start, and (with `confine.py`) the user, home and
places the rep's folders appear at."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from evalkit.models import WorldConfig
from evalkit.records.gitutil import Author

COMMIT_HOUR = 16
COMMIT_SPACING_MINUTES = 23


def world_start() -> str:
    """The day a grid starts, in the world: every sandbox of the grid dates its history from
    it, so two reps of one grid find the same commits (recorded in the plan)."""
    return datetime.now(UTC).date().isoformat()


def history_commits(
    world: WorldConfig, start: str | None = None
) -> list[tuple[str, list[str], Author]]:
    """The world's history as (message, paths, author) for `commit_history`, oldest first:
    each commit on the afternoon of its day before the start, minutes apart, all by the
    world's user."""
    day = date.fromisoformat(start or world_start())
    commits = []
    for index, commit in enumerate(world.history):
        when = datetime(day.year, day.month, day.day, COMMIT_HOUR, tzinfo=UTC)
        when -= timedelta(days=commit.days_before + 1)
        when += timedelta(minutes=COMMIT_SPACING_MINUTES * index)
        author = Author(world.full_name, world.email, when.isoformat(timespec="seconds"))
        commits.append((commit.message, list(commit.paths), author))
    return commits
