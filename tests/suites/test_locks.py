"""All three shipped suites are frozen, and their locks still match their files."""

from __future__ import annotations

import pytest

from evalkit.suite.config import load_suite
from evalkit.suite.lock import drift, read_lock, set_label
from tests.conftest import REPO


@pytest.mark.parametrize(
    "root",
    [
        REPO,
        REPO / "suites" / "adr-discrimination",
        REPO / "suites" / "adr-eval-b",
        REPO / "suites" / "runs-tests",
        REPO / "suites" / "plugin-evals-example",
    ],
    ids=["vault-write", "adr-discrimination", "adr-eval-b", "runs-tests", "plugin-evals-example"],
)
def test_the_shipped_lock_matches_the_suite(root: object) -> None:
    suite = load_suite(root)  # type: ignore[arg-type]
    lock = read_lock(suite)
    assert lock is not None, "the suite ships without evalkit.lock: run `evalkit suite freeze`"
    assert drift(suite, lock) == [], "files changed since the lock: refreeze deliberately"
    assert (set_label(lock, "run"), set_label(lock, "reserve")) == ("measurement", "held")
