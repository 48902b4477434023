"""`verify` holds a rep's declared capabilities to the rest of its record: a limit its CLI
took shows the option in its flags, a case's tool list is never missing, and a stop at a
turn cap needs a cap evalkit held."""

from __future__ import annotations

from evalkit.records.verify.capabilities import capability_problems
from evalkit.scoring.decide import ProcessRecord

CLI_CAP = {"max_turns": {"value": 1, "by": "cli", "flag": "--max-turns"}}
EVALKIT_CAP = {"max_turns": {"value": 1, "by": "evalkit", "how": "turn-cap: stream"}}


def test_a_record_that_agrees_with_itself_has_no_problem() -> None:
    decl = {"cli_flags": ["-p", "--max-turns", "1"], "capabilities": CLI_CAP}
    assert capability_problems(decl, None, None) == []
    stopped = ProcessRecord(exit_code=None, stopped="max-turns", timeout=60)
    assert capability_problems({"cli_flags": [], "capabilities": EVALKIT_CAP}, None, stopped) == []
    assert capability_problems({"cli_flags": []}, ["Read"], stopped) == []  # an older bundle


def test_a_limit_recorded_but_not_applied_is_a_mismatch() -> None:
    mismatch = "capabilities-do-not-match:max_turns"
    assert capability_problems({"cli_flags": ["-p"], "capabilities": CLI_CAP}, None, None) == [
        mismatch
    ]
    stopped = ProcessRecord(exit_code=None, stopped="max-turns", timeout=60)
    assert capability_problems({"cli_flags": [], "capabilities": {}}, None, stopped) == [mismatch]
    assert capability_problems({"cli_flags": [], "capabilities": {}}, ["Read"], None) == [
        "capabilities-do-not-match:tools"
    ]
