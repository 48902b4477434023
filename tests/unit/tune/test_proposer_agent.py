"""`--proposer AGENT:MODEL`: what is refused before any rep, the default, and what it costs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.errors import ConfigError
from evalkit.suite.config import Suite
from evalkit.suite.lock import freeze
from evalkit.tune.plan import TuneRequest, plan_tune, proposer_of
from evalkit.tune.proposer_agent import ProposerAgent, read_back
from tests.tuning_suite import write_tuning_suite

PHRASE = "policy:phrase:outlives+the+task"
PROPOSE = "claude:policy:propose:description=Keep+what+outlives+the+task."


@pytest.fixture
def tuning(tmp_path: Path) -> Suite:
    root = write_tuning_suite(tmp_path / "suite")
    freeze(Suite(root))
    return Suite(root)


def request(suite: Suite, tmp_path: Path, **given: object) -> TuneRequest:
    return TuneRequest(suite, tmp_path / "work", [PHRASE], reps=2, margin=0.3,
                       **given)  # type: ignore[arg-type]  # fmt: skip


def test_a_proposer_is_its_agent_and_model_split_at_the_first_colon() -> None:
    assert ProposerAgent.parse(PROPOSE) == ProposerAgent(
        "claude", "policy:propose:description=Keep+what+outlives+the+task."
    )
    assert ProposerAgent.parse("claude:sonnet").scripted is False


@pytest.mark.parametrize("given", ["sonnet", ":sonnet", "claude:"])
def test_a_proposer_without_agent_and_model_is_refused_in_one_line(given: str) -> None:
    with pytest.raises(ConfigError, match="expected AGENT:MODEL"):
        ProposerAgent.parse(given)


def test_an_unknown_agent_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(ConfigError, match="claude"):
        ProposerAgent.parse("nosuchagent:sonnet")


def test_the_default_proposer_is_the_suites_agent_with_the_judges_model(
    tuning: Suite, tmp_path: Path
) -> None:
    assert proposer_of(request(tuning, tmp_path)) == ProposerAgent("claude", "haiku")
    assert proposer_of(request(tuning, tmp_path, proposer_cmd="true")) is None


def test_the_default_proposer_is_a_real_model_so_it_needs_a_cap(tuning: Suite, tmp_path: Path
                                                               ) -> None:  # fmt: skip
    with pytest.raises(ConfigError, match=r"the proposer claude:haiku\) needs a hard cap"):
        plan_tune(request(tuning, tmp_path))
    planned = plan_tune(request(tuning, tmp_path, budget_reps=400, dry_run=True))
    assert planned.proposer == "claude:haiku"


def test_a_real_proposer_with_no_credential_is_refused_before_any_rep(
    tuning: Suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalkit.errors import PrerequisiteError
    from evalkit.run.prerequisites.credentials import credential_variables

    for name in credential_variables("claude"):
        monkeypatch.delenv(name, raising=False)
    refused = "--proposer claude:sonnet: no credential reaches the claude CLI"
    with pytest.raises(PrerequisiteError, match=refused):
        plan_tune(request(tuning, tmp_path, proposer="claude:sonnet", budget_reps=400))
    assert not (tmp_path / "work").exists()


def test_both_proposers_at_once_are_refused(tuning: Suite, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="one proposer"):
        plan_tune(request(tuning, tmp_path, proposer=PROPOSE, proposer_cmd="true"))


@pytest.mark.parametrize(("given", "words"), [
    ("claude:policy:oracle", "a scripted proposer is policy:propose:<plan>"),
    ("claude:policy:propose:description", "expected policy:propose:ROUND"),
])  # fmt: skip
def test_a_scripted_proposer_that_cannot_play_is_refused_before_any_rep(
    tuning: Suite, tmp_path: Path, given: str, words: str
) -> None:
    with pytest.raises(ConfigError, match=words):
        plan_tune(request(tuning, tmp_path, proposer=given))
    assert not (tmp_path / "work").exists()


def test_a_scripted_proposer_with_no_skill_to_edit_is_refused(tuning: Suite, tmp_path: Path
                                                              ) -> None:  # fmt: skip
    given = request(tuning, tmp_path, proposer=PROPOSE,
                    paths=["fixtures/plugins/notes/.claude-plugin"])  # fmt: skip
    with pytest.raises(ConfigError, match="no SKILL.md under fixtures/plugins/notes/.claude"):
        plan_tune(given)


@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_a_scripted_proposer_plays_through_every_agent(tuning: Suite, tmp_path: Path,
                                                       agent: str) -> None:  # fmt: skip
    given = f"{agent}:policy:propose:description=x"
    assert plan_tune(request(tuning, tmp_path, proposer=given)).proposer == given


def test_a_proposer_agent_costs_one_rep_a_round_in_the_worst_case(tuning: Suite, tmp_path: Path
                                                                  ) -> None:  # fmt: skip
    by_command = plan_tune(request(tuning, tmp_path, proposer_cmd="true", rounds=3))
    by_agent = plan_tune(request(tuning, tmp_path, proposer=PROPOSE, rounds=3))
    assert by_agent.worst_reps == by_command.worst_reps + 3
    assert any("(proposer, inner loop and run set)" in x for x in by_agent.lines())
    assert any(f"the proposer ({PROPOSE})" in x for x in by_agent.lines())


def stream(tmp_path: Path, *events: dict[str, object]) -> Path:
    out = tmp_path / "transcript.jsonl"
    out.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return out


RESULT = {"type": "result", "subtype": "success", "is_error": False, "num_turns": 3,
          "duration_ms": 900, "total_cost_usd": 0.042, "result": "Changed it.", "usage": {}}


def test_a_real_proposers_cost_is_its_clis_report(tmp_path: Path) -> None:
    out = stream(tmp_path, RESULT)
    assert read_back(out, tmp_path / "stderr.txt", None, 0, None) == ("", 0.042)


def test_a_proposer_that_ends_without_its_result_failed(tmp_path: Path) -> None:
    out = stream(tmp_path, {"type": "system", "subtype": "init"})
    why, cost = read_back(out, tmp_path / "stderr.txt", None, 1, None)
    assert why == "the proposer's CLI exited 1 without a result" and cost == 0.0
    assert "stopped: timeout" in read_back(stream(tmp_path, RESULT), tmp_path / "e", "timeout",
                                            None, None)[0]  # fmt: skip


def test_a_proposer_whose_cli_ends_in_an_error_is_named_by_it(tmp_path: Path) -> None:
    failed = {**RESULT, "is_error": True, "result": "API Error: Couldn't connect"}
    why, _ = read_back(stream(tmp_path, failed), tmp_path / "e", None, 1, None)
    assert why == "the proposer's CLI exited 1 with an error: API Error: Couldn't connect"


def test_an_interrupted_proposer_stops_the_tune(tmp_path: Path) -> None:
    with pytest.raises(KeyboardInterrupt):
        read_back(stream(tmp_path, RESULT), tmp_path / "e", "interrupted", None, None)
