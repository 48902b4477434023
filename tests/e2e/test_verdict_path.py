"""Through the real command: a CLI that fails names its exit code, and a breach is said at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import Kit

pytestmark = pytest.mark.e2e


def test_a_cli_that_exits_1_at_once_names_its_exit_code(kit: Kit) -> None:
    work = kit.base / "work"
    env = {**kit.env, "EVALKIT_CLAUDE": "/bin/false"}
    done = kit.run("run", "N1", "policy:oracle", str(work), env=env)
    assert done.returncode == 0, done.why()
    (row,) = kit.tsv(work)
    assert row["verdict"] == "ERROR"
    assert row["reasons"].split(";")[:2] == ["cli-exit:1", "transcript-empty"], row


def test_a_breach_is_said_on_stderr_and_counted_by_report(kit: Kit) -> None:
    work = kit.base / "work"
    done = kit.run("run", "N1", "policy:breach", str(work))
    assert done.returncode == 0, done.why()
    assert "REAL-VAULT BREACH" in done.stderr, done.why()
    (row,) = kit.tsv(work)
    assert row["verdict"] == "FAIL" and "real-vault-breach:Write:" in row["reasons"], row
    # confined, the write never reaches the real vault: the attempt alone makes the breach
    assert "real-vault-changed:" not in row["reasons"], row
    assert not any(kit.real_vault.iterdir()), "the breach landed in the real vault"
    (line,) = kit.manifest(work)
    assert (work / line["evidence"] / "guard.json").is_file()
    report = kit.run("report", str(work), "--format", "json")
    assert '"breaches": 1' in report.stdout, report.why()
    verify = kit.run("verify", str(work))
    assert "ok" in verify.stdout and "MISMATCH" not in verify.stdout, verify.why()


def test_nothing_is_written_to_a_real_vault_by_watching_it(kit: Kit, tmp_path: Path) -> None:
    note = kit.real_vault / "mine.md"
    note.write_text("my own note\n")
    before = note.stat().st_mtime_ns
    done = kit.run("run", "N1", "policy:oracle", str(kit.base / "work"))
    assert done.returncode == 0, done.why()
    assert note.read_text() == "my own note\n" and note.stat().st_mtime_ns == before
    (row,) = kit.tsv(kit.base / "work")
    assert row["verdict"] == "PASS" and "real-vault" not in row["reasons"], row
