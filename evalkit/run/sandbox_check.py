"""Scoring a sandbox someone kept or built by hand: the library behind `evalkit check`."""

from __future__ import annotations

from pathlib import Path

from evalkit.errors import RefusedError
from evalkit.models import Transcript, Verdict
from evalkit.run.judges import default_judge
from evalkit.run.sandbox import TRANSCRIPT, read_sandbox_json
from evalkit.scoring.checker import CheckInput
from evalkit.scoring.decide import decide
from evalkit.scoring.judge import Judge
from evalkit.scoring.transcript import read_transcript
from evalkit.scoring.validity import error_verdict
from evalkit.suite.config import Suite


def check_sandbox(
    suite: Suite,
    sandbox: Path,
    scenario_ref: str | None = None,
    model: str = "-",
    judge: Judge | None = None,
) -> Verdict:
    """Score a sandbox through the one decision. A missing or broken transcript is an ERROR
    verdict, never an exception; a scenario other than the sandbox's own is refused."""
    manifest = read_sandbox_json(sandbox)
    scenario = suite.resolve(scenario_ref or manifest.scenario)
    if scenario.id != manifest.scenario:
        raise RefusedError(
            f"{sandbox}: this sandbox was built for {manifest.scenario}, not {scenario.id}; "
            "scoring it as another scenario would record a wrong verdict"
        )
    path = sandbox / TRANSCRIPT
    instrument = suite.instrument(scenario)
    inp = CheckInput(instrument, sandbox, Transcript(), model, judge or default_judge(suite))
    if not path.is_file():
        return error_verdict(inp, "transcript-missing")
    return decide(instrument, sandbox, read_transcript(path), model, inp.judge, None, sandbox)
