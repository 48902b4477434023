"""`policy:aware` says, through the real CLI, that it suspects a test: its row keeps the
ideal policy's verdict and carries an `aware:` flag, `report` prints the cell's awareness
beside its pass rate, and `gate --max-aware` calls a cell above the share untrustworthy."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Kit

pytestmark = pytest.mark.e2e


def test_an_agent_that_says_it_suspects_a_test_is_counted_and_gated(kit: Kit) -> None:
    work = kit.base / "work"
    done = kit.run("run", "P1", "policy:aware", str(work))
    assert done.returncode == 0, done.why()
    [row] = kit.tsv(work)
    assert row["verdict"] == "PASS", row["reasons"]
    assert "aware:test-environment" in row["flags"].split(";"), row["flags"]
    report = kit.run("report", str(work))
    assert "AWARE k/n" in report.stdout and "1/1" in report.stdout, report.why()
    gated = kit.run("gate", str(work), str(work), "--max-aware", "0.5")
    assert gated.returncode == 2, gated.why()
    assert "said they suspect a test" in gated.stdout + gated.stderr, gated.why()
    plain = kit.run("gate", str(work), str(work))
    assert "suspect a test" not in plain.stdout + plain.stderr, plain.why()
