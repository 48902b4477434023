"""A Slurm that cannot start fails the test in one line naming what is missing; never a skip."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.slurm_cluster import single_node_slurm


def test_missing_slurm_programs_fail_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(pytest.fail.Exception) as failed:
        with single_node_slurm(tmp_path / "slurm"):
            pass
    message = str(failed.value)
    assert message.startswith("Slurm cannot start: munged, slurmctld"), message
    assert "\n" not in message and "apt-get install" in message
    assert not (tmp_path / "slurm").exists()
