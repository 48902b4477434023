"""Scoring one rep's sandbox and transcript: a run with no process record (a fabricated or
hand-kept one), through the one decision in `decide.py`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from evalkit.models import Transcript, Verdict
from evalkit.scoring.decide import decide

if TYPE_CHECKING:
    from evalkit.scoring.instrument import Instrument
    from evalkit.scoring.judge import Judge


def score(
    instrument: Instrument,
    sandbox: Path,
    transcript: Transcript,
    model: str,
    judge: Judge,
) -> Verdict:
    return decide(instrument, sandbox, transcript, model, judge)
