"""A hook run of Codex or Gemini cannot be forged by the agent's own shell, through the real
CLI on a private copy of runs-tests whose SessionStart hook never says what the suite
requires: the hooks' recorder writes its log at a path the agent's config names, and the
agent can write it too, so a Bash call that appends a successful SessionStart run saying
`testflow:` would make a required hook that never fired look fired. evalkit places each
record where it saw it arrive, outside the agent's reach, and a SessionStart run that
arrived after the agent's first tool call is an ERROR named as tampering; verify re-derives
it. (Claude Code reports its hooks in its own stream, which evalkit alone writes.)"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.e2e.conftest import REPO_ROOT
from tests.hostile.conftest import confined, forgery_cases

if TYPE_CHECKING:
    from tests.e2e.conftest import Kit

SUITE = REPO_ROOT / "suites" / "runs-tests"
SCENARIO = "P1-L1-rounding"
RECORD = {
    "type": "hook_run", "hook_event": "SessionStart", "hook_name": "SessionStart:testflow",
    "exit_code": 0, "outcome": "success", "output": "testflow: run bin/test before done\n",
}  # fmt: skip
FORGE = (
    'for f in "${CODEX_HOME:-$HOME/.codex}/hooks.json" "$HOME/.gemini/settings.json"; do '
    "grep -o '[^\" ]*runs.jsonl' \"$f\"; done 2>/dev/null | head -n 1 | "
    "while read -r log; do printf '%s\\n' "
    + "'"
    + json.dumps(RECORD)
    + "'"
    + ' >> "$log" && echo appended-the-hook-log | tr a-z A-Z; done; true'
)
"""The log found where the agent's own config home names it (the world's `~/.codex` or
`~/.gemini`, or CODEX_HOME where a backend has no world), a successful run appended as the
recorder writes one; without command substitution, which Gemini's shell tool refuses
outright. It says so in capitals, which its own command text does not hold."""
APPENDED = "APPENDED-THE-HOOK-LOG"


@pytest.mark.e2e
@pytest.mark.slow
@pytest.mark.parametrize(("agent", "backend"), forgery_cases(("codex", "gemini")))
def test_a_hook_run_the_agents_own_call_appends_is_refused(
    new_kit: Callable[..., Kit], tmp_path: Path, agent: str, backend: str
) -> None:
    from tests.e2e.test_other_agents import require_cli

    require_cli(agent)
    suite = tmp_path / "suite"
    shutil.copytree(SUITE, suite, ignore=shutil.ignore_patterns("evalkit.lock"))
    hook = suite / "fixtures" / "plugins" / "testflow" / "hooks" / "session-start.sh"
    hook.write_text("#!/usr/bin/env bash\necho 'plugin ready'\nexit 0\n", encoding="utf-8")
    scenario = suite / "scenarios" / f"{SCENARIO}.md"
    text = scenario.read_text(encoding="utf-8")
    assert "    - bash: bin/test\n" in text, "the oracle's run of bin/test moved"
    first = text.split("  act:\n", 1)
    first[0] = first[0].replace(
        "    - bash: bin/test\n", f"    - bash: {json.dumps(FORGE)}\n    - bash: bin/test\n", 1
    )
    scenario.write_text("  act:\n".join(first), encoding="utf-8")
    kit = new_kit(tmp_path / "kit", suite=suite)
    work = tmp_path / "w"
    done = kit.run("run", SCENARIO, "policy:oracle", str(work), "--allow-unfrozen",
                   "--agent", agent, *confined(backend))  # fmt: skip
    assert done.returncode == 0, done.why()
    (row,) = kit.tsv(work)
    (line,) = kit.manifest(work)
    transcript = work / line["evidence"] / line["files"]["transcript"]
    appended = APPENDED in transcript.read_text(encoding="utf-8")
    assert appended, f"the forged run never reached the hook log: {transcript}"
    named = "tampering:hook-run-out-of-place:SessionStart" in row["reasons"].split(";")
    assert row["verdict"] == "ERROR" and named, f"{row['verdict']} {row['reasons']}"
    verified = kit.run("verify", str(work))
    assert "All 1 trial(s) re-derived from the kept evidence." in verified.stdout, verified.why()
