"""From a finished (or stopped) agent process to a verdict: shared by run and verify.

Keeping this one function is what lets verify re-derive a row from its evidence:
the same inputs go through the same decision.
"""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import TYPE_CHECKING

from evalkit.models import SCHEMA_VERSION, Model, Transcript, Verdict
from evalkit.scoring.checker import CheckInput
from evalkit.scoring.judge import FixedJudge, Judge
from evalkit.scoring.rules import error_verdict
from evalkit.scoring.score import score

if TYPE_CHECKING:
    from evalkit.suite.config import Suite
    from evalkit.suite.scenarios import ScenarioFile


class ProcessRecord(Model):
    """How the agent process ended, kept as evidence (process.json)."""

    schema_version: int = SCHEMA_VERSION
    exit_code: int | None
    stopped: str | None = None
    timeout: float
    seconds: float = 0.0
    guarded_env: dict[str, str] = {}
    """Where the checker's guarded real-world paths pointed during the run."""


def decide(
    suite: Suite,
    scenario: ScenarioFile,
    sandbox: Path,
    transcript: Transcript,
    model: str,
    judge: Judge,
    process: ProcessRecord,
) -> Verdict:
    inp = CheckInput(suite, scenario, sandbox, transcript, model, FixedJudge(""))
    if process.stopped == "timeout":
        return error_verdict(inp, f"timeout:{process.timeout:g}s")
    if process.stopped == "interrupted":
        return error_verdict(inp, "interrupted")
    try:
        verdict = score(suite, scenario, sandbox, transcript, model, judge)
    except Exception as exc:  # a checker bug must cost the row its score, never the row
        traceback.print_exc()
        return error_verdict(inp, f"checker-crashed:{type(exc).__name__}")
    if process.exit_code not in (0, None) and verdict.verdict != "ERROR":
        verdict = error_verdict(inp, f"cli-exit:{process.exit_code}")
        verdict.judge = None
    return verdict
