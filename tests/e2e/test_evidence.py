"""Evidence end to end: `evalkit verify` re-derives real runs, names every tampered trial, and
no secret-shaped value survives into what is kept.

All runs use a private copy of the suite, so a fixture can be edited without touching the
repository's own.
"""

from __future__ import annotations

import re
import secrets
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from conftest import Done, Kit

pytestmark = pytest.mark.e2e

MODELS = ("policy:oracle", "policy:offer-only")
SCENARIOS = "P1,N1"


class Recorded:
    """One real grid into a workdir, and helpers to tamper with fresh copies of it."""

    def __init__(self, kit: Kit, work: Path) -> None:
        self.kit = kit
        self.work = work
        self.lines: list[dict[str, Any]] = kit.manifest(work)
        self.copies = 0

    def line(self, scenario: str, model: str) -> dict[str, Any]:
        (found,) = [
            x
            for x in self.lines
            if x["scenario"].startswith(scenario + "-") and x["model"] == model
        ]
        return found

    @staticmethod
    def name(line: dict[str, Any]) -> str:
        return f"{line['run_id']} {line['scenario']} {line['model']} rep-{line['rep']}"

    def copy(self) -> Path:
        self.copies += 1
        dest = self.kit.base / f"copy-{self.copies}"
        shutil.copytree(self.work, dest)
        return dest

    def evidence(self, work: Path, line: dict[str, Any], role: str) -> Path:
        return work / line["evidence"] / line["files"][role]

    def verify(self, work: Path, suite: Path | None = None) -> Done:
        if suite is None:
            return self.kit.run("verify", str(work))
        saved, self.kit.suite = self.kit.suite, suite
        try:
            return self.kit.run("verify", str(work))
        finally:
            self.kit.suite = saved


def mismatches(done: Done) -> list[str]:
    return [x.strip() for x in done.stdout.splitlines() if x.strip().startswith("MISMATCH")]


def assert_names(done: Done, name: str, problem: str) -> None:
    """verify failed, and a MISMATCH line names the trial (or cell) together with the problem."""
    assert done.returncode != 0, done.why()
    hits = [x for x in mismatches(done) if name in x and problem in x]
    assert hits, f"no MISMATCH line naming {name!r} with {problem!r}\n{done.why()}"
    assert "PUBLISHABLE" in done.stdout and "NOT PUBLISHABLE" in done.stdout, done.why()


@pytest.fixture(scope="module")
def recorded(
    new_kit: Callable[..., Kit],
    suite_copier: Callable[..., Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> Recorded:
    base = tmp_path_factory.mktemp("evidence")
    kit = new_kit(base / "kit", suite=suite_copier(base / "suite"))
    work = kit.base / "work"
    done = kit.run(
        "grid", str(work), "--scenarios", SCENARIOS, "--models", ",".join(MODELS), "--jobs", "4"
    )
    assert done.returncode == 0, done.why()
    assert len(kit.tsv(work)) == 4, done.why()
    return Recorded(kit, work)


def test_verify_re_derives_every_trial_and_says_publishable(recorded: Recorded) -> None:
    done = recorded.verify(recorded.work)
    assert done.returncode == 0, done.why()
    tail = done.stdout.strip().splitlines()[-2:]
    assert tail == ["All 4 trial(s) re-derived from the kept evidence.", "PUBLISHABLE"], tail
    for line in recorded.lines:
        assert f"ok        {recorded.name(line)}" in done.stdout, done.why()


def test_a_diff_that_changes_the_note_is_named(recorded: Recorded) -> None:
    work = recorded.copy()
    line = recorded.line("P1", "policy:oracle")
    diff = recorded.evidence(work, line, "vault_diff")
    text = diff.read_text()
    assert "\n+summary:" in text, "the oracle note has no summary line to change"
    diff.write_text(text.replace("\n+summary:", "\n+summarx:", 1))  # still applies
    assert_names(recorded.verify(work), recorded.name(line), "re-derived as")


def test_an_evidence_edit_that_leaves_the_verdict_alone_is_still_named(
    recorded: Recorded,
) -> None:
    work = recorded.copy()
    line = recorded.line("P1", "policy:oracle")
    diff = recorded.evidence(work, line, "vault_diff")
    text = diff.read_text()
    assert "\n+- " in text, "the oracle note has no list item to reword"
    diff.write_text(text.replace("\n+- ", "\n+- (reworded) ", 1))
    assert_names(recorded.verify(work), recorded.name(line), "evidence-edited:vault_diff")


def test_a_diff_that_no_longer_applies_is_named(recorded: Recorded) -> None:
    work = recorded.copy()
    line = recorded.line("P1", "policy:oracle")
    diff = recorded.evidence(work, line, "vault_diff")
    text, count = re.subn(r"(?m)^@@ -0,0 \+1,(\d+) @@", "@@ -0,0 +1,999 @@", diff.read_text())
    assert count == 1, "the oracle note's diff is not one new-file hunk"
    diff.write_text(text)
    assert_names(recorded.verify(work), recorded.name(line), "diff-does-not-apply")


def test_a_cut_transcript_is_named(recorded: Recorded) -> None:
    work = recorded.copy()
    line = recorded.line("N1", "policy:oracle")
    transcript = recorded.evidence(work, line, "transcript")
    lines = transcript.read_text().splitlines(keepends=True)
    transcript.write_text("".join(lines[:-1]))
    assert_names(recorded.verify(work), recorded.name(line), "re-derived as")


def test_a_flipped_tsv_verdict_is_named(recorded: Recorded) -> None:
    work = recorded.copy()
    line = recorded.line("N1", "policy:oracle")
    tsv = work / "results.tsv"
    out = []
    for row in tsv.read_text().splitlines(keepends=True):
        cells = row.split("\t")
        if cells[0] == line["scenario"] and cells[1] == line["model"]:
            assert cells[4] == "PASS"
            cells[4] = "FAIL"
        out.append("\t".join(cells))
    tsv.write_text("".join(out))
    assert_names(recorded.verify(work), recorded.name(line), "TSV row says FAIL")


def test_a_deleted_tsv_row_is_named(recorded: Recorded) -> None:
    work = recorded.copy()
    line = recorded.line("N1", "policy:offer-only")
    tsv = work / "results.tsv"
    rows = tsv.read_text().splitlines(keepends=True)
    kept = [r for r in rows if not r.startswith(f"{line['scenario']}\t{line['model']}\t")]
    assert len(kept) == len(rows) - 1
    tsv.write_text("".join(kept))
    done = recorded.verify(work)
    assert_names(done, recorded.name(line), "no TSV row")
    assert_names(done, "counts differ", "3 TSV row(s), 4 manifest line(s), 4 planned rep(s)")


def test_a_deleted_manifest_line_names_the_missing_cell(recorded: Recorded) -> None:
    work = recorded.copy()
    line = recorded.line("P1", "policy:offer-only")
    manifest = work / "manifest.jsonl"
    lines = manifest.read_text().splitlines(keepends=True)
    kept = [x for x in lines if f'"evidence":"{line["evidence"]}"' not in x]
    assert len(kept) == len(lines) - 1
    manifest.write_text("".join(kept))
    done = recorded.verify(work)
    cell = f"{line['run_id']} {line['scenario']} {line['model']}"
    assert_names(done, f"plan {cell}:", "1 rep(s) planned, 0 recorded")
    number = _row_number(work / "results.tsv", line)
    assert_names(done, f"results.tsv:{number}: row without evidence: {cell} {line['rep']}", "")


def _row_number(tsv: Path, line: dict[str, Any]) -> int:
    """The 1-based line of the row for this evidence line: rows come in the order reps end."""
    rows = tsv.read_text().splitlines()
    header = rows[0].split("\t")
    wanted = {"run_id": line["run_id"], "scenario": line["scenario"], "model": line["model"]}
    wanted["rep"] = str(line["rep"])
    for number, text in enumerate(rows[1:], start=2):
        cells = dict(zip(header, text.split("\t"), strict=False))
        if all(cells.get(k) == v for k, v in wanted.items()):
            return number
    raise AssertionError(f"no row for {wanted}")


@pytest.mark.parametrize("role", ["check", "process"])
def test_a_deleted_evidence_file_is_named(recorded: Recorded, role: str) -> None:
    work = recorded.copy()
    line = recorded.line("P1", "policy:offer-only")
    recorded.evidence(work, line, role).unlink()
    assert_names(recorded.verify(work), recorded.name(line), f"missing-evidence:{role}")


def test_a_changed_fixture_makes_every_trial_drift(recorded: Recorded) -> None:
    work = recorded.copy()
    suite = recorded.kit.base / "drifted-suite"
    shutil.copytree(recorded.kit.suite, suite)
    readme = suite / "fixtures" / "project" / "README.md"
    readme.write_text(readme.read_text() + "\nOne more line.\n")
    done = recorded.verify(work, suite=suite)
    for line in recorded.lines:
        assert_names(done, recorded.name(line), "fixture-drift:project")
    assert all("fixture-drift:project" in x for x in mismatches(done)), done.why()


# ------------------------------------------------------------------ secrets


def _token(
    n: int, alphabet: str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(n))


def test_planted_secrets_never_reach_the_kept_evidence(
    new_kit: Callable[..., Kit],
    suite_copier: Callable[..., Path],
    claude_cli: str,
    tmp_path: Path,
) -> None:
    api_key = "sk-ant-api03-" + _token(40)
    bearer = "tok" + _token(37)
    aws = "AKIA" + _token(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
    planted = {"api key": api_key, "bearer token": bearer, "aws key": aws}

    # the transcript: the oracle's final text (the scenario's calibration reply) carries them
    suite = suite_copier(tmp_path / "suite", only={"P1", "N1"})
    scenario = suite / "scenarios" / "P1-L1-reporting.md"
    text = scenario.read_text()
    assert "\n  reply: Fixed." in text, "P1's calibration reply moved"
    leak = f"Fixed. While debugging I used key {api_key} with header Bearer {bearer} and aws {aws}."
    text = text.replace("\n  reply: Fixed.", f"\n  reply: {leak}", 1)
    # the kept vault.diff: the note the agent writes carries one too
    assert "\n      # Finch API list pagination\n" in text, "P1's calibration note moved"
    text = text.replace(
        "\n      # Finch API list pagination\n",
        f"\n      # Finch API list pagination\n\n      token={api_key}\n",
        1,
    )
    scenario.write_text(text)

    # stderr: the CLI is started through a wrapper that prints them first
    wrapper = tmp_path / "claude-wrapper"
    wrapper.write_text(
        "#!/bin/sh\n"
        f"echo 'wrapper: ANTHROPIC_API_KEY={api_key}' >&2\n"
        f"echo 'wrapper: Authorization: Bearer {bearer}' >&2\n"
        f"echo 'wrapper: aws_access_key_id {aws}' >&2\n"
        f'exec "{Path(claude_cli).resolve()}" "$@"\n'
    )
    wrapper.chmod(0o755)
    kit = new_kit(tmp_path / "kit", suite=suite)
    kit.extra_env["EVALKIT_CLAUDE"] = str(wrapper)
    work = kit.base / "work"
    # unconfined: the wrapper execs a CLI outside every folder a confined rep is given
    done = kit.run("run", "P1", "policy:oracle", str(work), "--unconfined")
    assert done.returncode == 0, done.why()
    assert "PASS" in done.stdout, done.why()

    (line,) = kit.manifest(work)
    folder = work / line["evidence"]
    transcript = (folder / line["files"]["transcript"]).read_text()
    stderr = (folder / line["files"]["stderr"]).read_text()
    assert "[REDACTED]" in transcript, "the planted reply never reached the transcript"
    assert "wrapper:" in stderr and "[REDACTED]" in stderr, "the wrapper's stderr was not kept"

    found = []
    for path in sorted(p for p in work.rglob("*") if p.is_file()):
        data = path.read_bytes()
        found += [
            f"{what} in {path.relative_to(work)}"
            for what, v in planted.items()
            if v.encode() in data
        ]
    assert not found, f"secrets kept: {found}"
    assert not any(v in done.output for v in planted.values()), "evalkit printed a secret"

    verify = kit.run("verify", str(work))
    assert verify.returncode == 0, verify.why()


def test_a_run_without_a_lock_is_declared_unfrozen_and_never_publishable(
    new_kit: Callable[..., Kit], suite_copier: Callable[..., Path], tmp_path: Path
) -> None:
    suite = suite_copier(tmp_path / "suite")
    (suite / "evalkit.lock").unlink()
    kit = new_kit(tmp_path / "kit", suite=suite)
    work = kit.base / "work"
    done = kit.run("run", "P1", "policy:oracle", str(work))
    assert done.returncode == 0, done.why()
    assert [m["declarations"]["lock"] for m in kit.manifest(work)] == ["no-lock"]
    verified = kit.run("verify", str(work))
    assert "NOT PUBLISHABLE" in verified.stdout, verified.why()
    assert "without a frozen suite" in verified.output, verified.why()
