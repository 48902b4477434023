"""Scoring one rep's sandbox and transcript through the suite's checker."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from evalkit.models import Transcript, Verdict
from evalkit.scoring.checker import CheckInput

if TYPE_CHECKING:
    from evalkit.scoring.judge import Judge
    from evalkit.suite.config import Suite
    from evalkit.suite.scenarios import ScenarioFile


def score(
    suite: Suite,
    scenario: ScenarioFile,
    sandbox: Path,
    transcript: Transcript,
    model: str,
    judge: Judge,
) -> Verdict:
    return suite.checker.check(CheckInput(suite, scenario, sandbox, transcript, model, judge))
