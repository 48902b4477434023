"""A suite's own `agents:` pin is the CLI version `run` and `grid` use without --cli,
installed through the version cache as --cli would be, and outside the lock's hash."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.errors import PrerequisiteError, RefusedError
from evalkit.pins import pinned
from evalkit.reference.scripted import POLICIES
from evalkit.run.commands import GridRequest, Limits, RunRequest, run_grid, run_reps
from evalkit.run.prerequisites.cli_versions import suite_pinned
from evalkit.suite.config import Suite
from evalkit.suite.lock import config_hash

OTHER = "2.1.300"


def _pinned_suite(root: Path, pins: str) -> Suite:
    config = root / "evalkit.yaml"
    config.write_text(config.read_text(encoding="utf-8") + pins, encoding="utf-8")
    return Suite(root)


@pytest.fixture
def no_npm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty version cache and no npm on PATH: an install is refused, never attempted."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("EVALKIT_CLI_CACHE", str(cache))
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    return cache


def test_a_suite_pin_other_than_evalkits_is_the_version_to_run(mini_root: Path) -> None:
    suite = _pinned_suite(mini_root, f'agents:\n  claude: "{OTHER}"\n')
    assert suite_pinned(suite, "claude") == [OTHER]


def test_a_suite_pin_equal_to_evalkits_asks_for_no_install(mini_root: Path) -> None:
    suite = _pinned_suite(mini_root, f'agents:\n  claude: "{pinned("claude")}"\n')
    assert suite_pinned(suite, "claude") == []


def test_a_suite_pin_an_agent_cannot_install_is_refused_in_one_line(mini_root: Path) -> None:
    suite = _pinned_suite(mini_root, 'agents:\n  codex: "0.1.0"\n')
    with pytest.raises(RefusedError, match="agents.codex") as refused:
        suite_pinned(suite, "codex")
    assert "\n" not in str(refused.value)


def test_a_grid_without_cli_installs_the_suite_pin_before_planning(
    mini_root: Path, tmp_path: Path, no_npm: Path
) -> None:
    suite = _pinned_suite(mini_root, f'agents:\n  claude: "{OTHER}"\n')
    work = tmp_path / "w"
    request = GridRequest(suite=suite, models=["policy:oracle"], workdir=work,
                          limits=Limits(allow_unfrozen=True, scripted=POLICIES))  # fmt: skip
    with pytest.raises(PrerequisiteError, match=f"--cli {OTHER}: not installed in {no_npm}"):
        run_grid(request)
    assert not (work / "plans.jsonl").exists()


def test_a_run_without_cli_installs_the_suite_pin_before_planning(
    mini_root: Path, tmp_path: Path, no_npm: Path
) -> None:
    suite = _pinned_suite(mini_root, f'agents:\n  claude: "{OTHER}"\n')
    work = tmp_path / "w"
    request = RunRequest(suite=suite, scenario="P1", model="policy:oracle", workdir=work,
                         limits=Limits(allow_unfrozen=True, scripted=POLICIES))  # fmt: skip
    with pytest.raises(PrerequisiteError, match=f"--cli {OTHER}"):
        run_reps(request)
    assert not (work / "plans.jsonl").exists()


def test_a_grid_of_several_agents_refuses_a_suite_pin_it_would_not_run(
    mini_root: Path, tmp_path: Path
) -> None:
    suite = _pinned_suite(mini_root, f'agents:\n  claude: "{OTHER}"\n')
    request = GridRequest(
        suite=suite, models=["policy:oracle"], workdir=tmp_path / "w",
        agents=["claude", "codex"], limits=Limits(allow_unfrozen=True),
    )  # fmt: skip
    with pytest.raises(RefusedError, match=f"claude {OTHER}"):
        run_grid(request)


def test_a_suite_pin_does_not_drift_the_lock(mini_root: Path) -> None:
    before = config_hash(Suite(mini_root))
    after = config_hash(_pinned_suite(mini_root, f'agents:\n  claude: "{OTHER}"\n'))
    assert before == after
