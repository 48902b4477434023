"""Every test runs with a throwaway HOME, scratch and real-vault stand-in: nothing real."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from evalkit.suite.config import Suite

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _isolated(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate(tmp_path_factory, monkeypatch)


@pytest.fixture(autouse=True)
def _fresh_consoles() -> Iterator[None]:
    """The CLI's consoles read the terminal's width when first made: a test that sets COLUMNS
    gets its own, whatever ran before it on the same worker."""
    import evalkit.cli.app as app

    for name in ("out", "err"):
        vars(app).pop(name, None)
    yield
    for name in ("out", "err"):
        vars(app).pop(name, None)


def isolate(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """A throwaway HOME, scratch and real vault; no judge command or suite from outside. A
    session fixture calls it too, inside its own `pytest.MonkeyPatch.context()`."""
    base = tmp_path_factory.mktemp("isolation")
    for name in ("home", "scratch", "real-vault"):
        (base / name).mkdir()
    monkeypatch.setenv("HOME", str(base / "home"))
    monkeypatch.setenv("EVALKIT_SCRATCH", str(base / "scratch"))
    monkeypatch.setenv("EVALKIT_REAL_VAULT", str(base / "real-vault"))
    judges = (
        "EVALKIT_JUDGE_CMD",
        "OS_VAULT_EVAL_JUDGE_CMD",
        "ADR_EVAL_JUDGE_CMD",
        "ADR_EVAL_C_JUDGE_CMD",
    )
    for name in ("EVALKIT_SUITE", "EVALKIT_DEBUG", *judges):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def suite() -> Suite:
    return Suite(REPO)


@pytest.fixture
def mini_root(tmp_path: Path) -> Path:
    """A throwaway suite folder (see tests/minisuite.py), fresh for each test."""
    from tests.minisuite import write_suite

    return write_suite(tmp_path / "mini")


@pytest.fixture
def locked_folder(tmp_path: Path) -> Path:
    """A folder no file can be created in: read-only for a user; for root, which writes
    through any permission, sysfs, which refuses new files to everyone."""
    import os

    if os.geteuid() != 0:
        folder = tmp_path / "locked"
        folder.mkdir()
        folder.chmod(0o500)
        return folder
    probe = Path("/sys") / "evalkit-probe"
    try:
        probe.write_text("")
    except OSError:
        return Path("/sys")
    probe.unlink()
    pytest.skip("no folder here refuses root")
