"""The adr-discrimination checker, rule by rule, each in both directions."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from evalkit.checkers import checker_class, names
from evalkit.checkers.adr_discrimination.scoring import (
    AdrOptions,
    Consultation,
    PositiveExpect,
    cited_ids,
    cites,
    record_rewritten,
)
from evalkit.checkers.behaviour import Expectation, SelfTestCase
from evalkit.models import JudgeRecord, Script, Step, ToolCall, ToolUseBlock, Verdict
from evalkit.reference.selftest import run_case
from evalkit.scoring.decide import decide
from evalkit.scoring.judge import CommandJudge, FixedJudge, Judge, UnavailableJudge
from evalkit.scoring.transcript import read_transcript
from evalkit.suite.config import Suite
from tests.conftest import REPO

pytestmark = pytest.mark.heavy

ROOT = REPO / "suites" / "adr-discrimination"
NEUTRAL = "Done: the change is in and the tests pass."


@pytest.fixture(autouse=True)
def _no_judge_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ADR_EVAL_JUDGE_CMD", raising=False)


@pytest.fixture(scope="module")
def adr_suite() -> Suite:
    return Suite(ROOT)


def call(name: str, **data: object) -> ToolCall:
    return ToolCall(id="t", name=name, input=dict(data))


def block(name: str, **data: object) -> ToolUseBlock:
    return ToolUseBlock(name=name, input=dict(data))


def play(
    suite: Suite,
    tmp_path: Path,
    scenario: str,
    blocks: list[ToolUseBlock],
    final: str = NEUTRAL,
    judge: str = "NO",
) -> Verdict:
    script = Script(steps=[Step(blocks=[b]) for b in blocks], final_text=final)
    case = SelfTestCase("case", script, Expectation("PASS"), judge)
    return run_case(suite, suite.resolve(scenario), case, tmp_path).verdict


def rescore(suite: Suite, tmp_path: Path, scenario: str, judge: Judge) -> Verdict:
    """Score the sandbox play() left behind again, with another judge."""
    sf = suite.resolve(scenario)
    sandbox = tmp_path / sf.id / "case"
    transcript = read_transcript(sandbox / "transcript.jsonl")
    return decide(suite.instrument(sf), sandbox, transcript, "m", judge)


class _Refuses(Judge):
    def ask(self, prompt: str) -> JudgeRecord:
        raise AssertionError("the judge must not be asked")


# --------------------------------------------------------------------------- pure rules


@pytest.mark.parametrize(
    "text",
    ["see 0002", "ADR-0002 says", "per ADR 0002.", "ADR 2 applies", "(ADR-2)", "adr #2",
     "docs/adr/0002-job-timeout.md", "ADRs 2 and 5"],
)  # fmt: skip
def test_citation_forms_that_count(text: str) -> None:
    assert cites(text, "0002")


@pytest.mark.parametrize(
    "text",
    ["10002 rows", "ADR 20", "ADR 2026-03-01", "0.0002 s", "02 of them", "2 minutes",
     "ADR-0003", "version 0002a"],
)  # fmt: skip
def test_citation_forms_that_do_not(text: str) -> None:
    assert not cites(text, "0002")


def test_cited_ids_reports_each_once() -> None:
    assert cited_ids("ADR 0002 and 0005, again ADR-2", ["0002", "0005", "0006"]) == [
        "0002",
        "0005",
    ]


def test_consultation_rules() -> None:
    rules = Consultation(AdrOptions())
    counted = [
        call("Skill", skill="os-adr:find", args="x"),
        call("Skill", skill="/os-adr:create"),
        call("Skill", skill="find"),
        call("SlashCommand", command="/os-adr:find timeout"),
        call("Bash", command="adr-find --root . timeout"),
        call("Bash", command="/opt/p/os-adr/bin/adr-new --title x"),
        call("Bash", command="python3 plugins/os-adr/bin/adr-init"),
        call("Bash", command="ls docs/adr/"),
        call("Read", file_path="/sandbox/project/docs/adr/0002-x.md"),
        call("Grep", pattern="retry", path="docs/adr"),
        call("Glob", pattern="adr/*.md", path="/sandbox/project/docs"),
        call("Write", file_path="docs/adr/0007-x.md", content="x"),
    ]
    for c in counted:
        assert rules.reasons([c]), c
    ignored = [
        call("Skill", skill="other:find"),
        call("Skill", skill="review"),
        call("Bash", command="grep -rn timeout taskq/"),
        call("Bash", command="cat docs/adr-archive/notes.md"),
        call("Bash", command="echo my-adr-finder"),
        call("Read", file_path="/sandbox/project/taskq/execution.py"),
        call("Glob", pattern="**/*.md"),
    ]
    for c in ignored:
        assert rules.reasons([c]) == [], c
    assert rules.reasons([counted[4]]) == ["A-via:tool:adr-find"]
    assert rules.reasons([counted[0], counted[0]]) == ["A-via:skill:os-adr:find"]


def test_a_consultation_the_tool_rejected_is_no_consultation() -> None:
    rules = Consultation(AdrOptions())
    rejected = [
        ToolCall(id="t", name="Skill", input={"skill": "os-adr:find"}, result="no", is_error=True),
        ToolCall(id="t", name="Bash", input={"command": "adr-find x"}, result="2", is_error=True),
        ToolCall(id="t", name="Read", input={"file_path": "docs/adr/0002-x.md"}, is_error=True),
    ]
    assert [rules.reasons([c]) for c in rejected] == [[], [], []]
    answered = ToolCall(
        id="t", name="Bash", input={"command": "adr-find x"}, result="0002", is_error=False
    )
    assert rules.reasons([answered]) == ["A-via:tool:adr-find"]


def test_expect_ids_coerce_and_validate() -> None:
    ok = PositiveExpect.model_validate(
        {"governing": [2], "distractors": ["0001"], "topic_patterns": ["x"]}
    )
    assert ok.governing == ["0002"]
    with pytest.raises(ValidationError, match="both governing and distractor"):
        PositiveExpect.model_validate(
            {"governing": ["0002"], "distractors": ["0002"], "topic_patterns": ["x"]}
        )
    with pytest.raises(ValidationError, match="does not compile"):
        PositiveExpect.model_validate({"governing": ["0002"], "topic_patterns": ["("]})
    with pytest.raises(ValidationError):
        PositiveExpect.model_validate({"governing": [], "topic_patterns": ["x"]})


def test_the_checker_is_registered_by_name() -> None:
    assert "adr-discrimination" in names()
    assert checker_class("adr-discrimination").version == "1"


# --------------------------------------------------------------------------- positives


def test_consulting_and_citing_the_governing_record_passes(
    adr_suite: Suite, tmp_path: Path
) -> None:
    verdict = play(adr_suite, tmp_path, "P2", [block("Skill", skill="os-adr:find")],
                   "Kept as is: ADR 0005 sends those jobs to review.")  # fmt: skip
    assert (verdict.axis_a, verdict.axis_b, verdict.verdict) == ("A:PASS", "B:PASS", "PASS")
    assert "B-via:cited-governing" in verdict.reasons
    assert rescore(adr_suite, tmp_path, "P2", _Refuses()).verdict == "PASS"


def test_any_governing_record_counts_for_p3(adr_suite: Suite, tmp_path: Path) -> None:
    for rid in ("0002", "0005", "0006"):
        verdict = play(adr_suite, tmp_path / rid, "P3", [block("Bash", command="adr-find retry")],
                       f"That runs into ADR {rid}.")  # fmt: skip
        assert verdict.verdict == "PASS", rid


def test_citing_only_a_distractor_fails_and_names_it(adr_suite: Suite, tmp_path: Path) -> None:
    verdict = play(adr_suite, tmp_path, "P2", [block("Skill", skill="os-adr:find")],
                   "Per ADR 0006 the drop is logged, so I made failed jobs go away.")  # fmt: skip
    assert (verdict.axis_b, verdict.verdict) == ("B:FAIL", "FAIL")
    assert "cited-distractor:0006" in verdict.reasons


def test_a_cited_record_outside_both_lists_falls_through_to_the_judge(
    adr_suite: Suite, tmp_path: Path
) -> None:
    verdict = play(adr_suite, tmp_path, "P1", [block("Skill", skill="os-adr:find")],
                   "ADR 0004 keeps the queue in SQLite, so nothing to do.")  # fmt: skip
    assert verdict.verdict == "FAIL" and "B-fail:no-record-citation-or-proposal" in verdict.reasons
    assert "cited:0004" in verdict.flags and verdict.judge is not None


def test_a_created_record_needs_the_topic(adr_suite: Suite, tmp_path: Path) -> None:
    cal = adr_suite.reference.calibration_for(adr_suite.resolve("P2"))
    on_topic = block("Write", file_path="{project}/" + cal.adr.path, content=cal.adr.text())
    verdict = play(adr_suite, tmp_path / "on", "P2", [on_topic])
    assert verdict.verdict == "PASS" and "B-via:created" in verdict.reasons
    p1 = adr_suite.reference.calibration_for(adr_suite.resolve("P1"))
    off_topic = block("Write", file_path="{project}/" + p1.adr.path, content=p1.adr.text())
    verdict = play(adr_suite, tmp_path / "off", "P2", [off_topic])
    assert verdict.verdict == "FAIL"
    assert f"off-topic-adr:{p1.adr.path}" in verdict.flags


def test_a_record_in_a_subfolder_or_without_a_number_is_not_created(
    adr_suite: Suite, tmp_path: Path
) -> None:
    cal = adr_suite.reference.calibration_for(adr_suite.resolve("P1"))
    blocks = [
        block("Write", file_path="{project}/docs/adr/drafts/0007-x.md", content=cal.adr.text()),
        block("Write", file_path="{project}/docs/adr/timeout-notes.md", content=cal.adr.text()),
    ]
    verdict = play(adr_suite, tmp_path, "P1", blocks)
    assert verdict.verdict == "FAIL" and "B-via:created" not in verdict.reasons
    assert "adr-dir-changed:docs/adr/drafts/0007-x.md" in verdict.flags


def test_the_judge_decides_a_bare_proposal(adr_suite: Suite, tmp_path: Path) -> None:
    proposal = "This changes a decided limit; shall I write an ADR to supersede the current one?"
    yes = play(adr_suite, tmp_path / "y", "P1", [block("Skill", skill="os-adr:find")], proposal,
               "YES")  # fmt: skip
    assert yes.verdict == "PASS" and "B-via:judge-proposed" in yes.reasons
    assert yes.judge is not None and yes.judge.answer == "YES"
    no = play(adr_suite, tmp_path / "n", "P1", [block("Skill", skill="os-adr:find")], proposal)
    assert no.verdict == "FAIL" and no.axis_b == "B:FAIL"
    broken = rescore(adr_suite, tmp_path / "n", "P1", UnavailableJudge("judge-unavailable"))
    assert broken.verdict == "ERROR" and broken.reasons == ["judge-error:judge-unavailable"]


def test_the_judge_sees_the_rubric_and_only_the_final_message(
    adr_suite: Suite, tmp_path: Path
) -> None:
    play(adr_suite, tmp_path, "P1", [block("Skill", skill="os-adr:find", args="SECRET-ARGS")],
         "Want me to record this as an ADR?")  # fmt: skip
    seen = tmp_path / "prompt.txt"
    verdict = rescore(adr_suite, tmp_path, "P1", CommandJudge(f"cat > {seen}; echo YES"))
    assert verdict.verdict == "PASS"
    prompt = seen.read_text()
    assert prompt.startswith(adr_suite.rubric_path.read_text().rstrip())
    assert "Want me to record this as an ADR?" in prompt and "SECRET-ARGS" not in prompt


@pytest.mark.parametrize(
    ("suite_name", "scenario"), [("adr-discrimination", "P1"), ("adr-eval-b", "R1")]
)
def test_a_failed_adr_find_is_no_consultation_in_either_adr_suite(
    suite_name: str, scenario: str, tmp_path: Path
) -> None:
    suite = Suite(REPO / "suites" / suite_name)
    governing = suite.reference.checker.expect_for(suite.resolve(scenario)).governing[0]
    failing = block("Bash", command="adr-find --root . --no-such-option timeout")
    verdict = play(suite, tmp_path, scenario, [failing], f"ADR {governing} settles this.")
    assert (verdict.axis_a, verdict.verdict) == ("A:FAIL", "FAIL")
    assert "A-fail:no-adr-consultation" in verdict.reasons


def test_no_consultation_fails_axis_a_even_with_a_citation(
    adr_suite: Suite, tmp_path: Path
) -> None:
    verdict = play(adr_suite, tmp_path, "P4", [block("Read", file_path="{project}/README.md")],
                   "ADR 0003 routes this through NotificationService.")  # fmt: skip
    assert (verdict.axis_a, verdict.axis_b, verdict.verdict) == ("A:FAIL", "B:PASS", "FAIL")


def test_a_missing_hook_fails_both_axes(adr_suite: Suite, tmp_path: Path) -> None:
    script = Script(steps=[Step(blocks=[block("Skill", skill="os-adr:find")])],
                    final_text="ADR 0002 applies.")  # fmt: skip
    case = SelfTestCase("case", script, Expectation("FAIL"), fault="no-hook")
    verdict = run_case(adr_suite, adr_suite.resolve("P1"), case, tmp_path).verdict
    assert (verdict.axis_a, verdict.axis_b, verdict.verdict) == ("A:FAIL", "B:FAIL", "FAIL")
    assert verdict.reasons == ["hook-missing:SessionStart"]


# --------------------------------------------------------------------------- negatives


def test_a_negative_passes_when_it_consults_cites_and_creates_nothing(
    adr_suite: Suite, tmp_path: Path
) -> None:
    verdict = play(adr_suite, tmp_path, "N1", [block("Skill", skill="os-adr:find")],
                   "That is ADR 0002's limit of three attempts.")  # fmt: skip
    assert (verdict.axis_a, verdict.axis_b, verdict.verdict) == ("A:yes", "B:PASS", "PASS")
    assert "cited-adr:yes" in verdict.flags and "cited:0002" in verdict.flags


def test_a_negative_without_consulting_is_a_no_and_still_passes(
    adr_suite: Suite, tmp_path: Path
) -> None:
    verdict = play(adr_suite, tmp_path, "N3", [], "Three tries of up to five minutes each.")
    assert (verdict.axis_a, verdict.verdict) == ("A:no", "PASS")
    assert "cited-adr:no" in verdict.flags


def test_a_negative_that_creates_a_record_fails(adr_suite: Suite, tmp_path: Path) -> None:
    cal = adr_suite.reference.calibration_for(adr_suite.resolve("N4"))
    write = block("Write", file_path="{project}/" + cal.adr.path, content=cal.adr.text())
    verdict = play(adr_suite, tmp_path, "N4", [write], cal.reply)
    assert (verdict.axis_b, verdict.verdict) == ("B:FAIL", "FAIL")
    assert verdict.reasons == [f"adr-created:{cal.adr.path}"]


def test_a_negative_that_edits_an_existing_file_is_flagged_not_failed(
    adr_suite: Suite, tmp_path: Path
) -> None:
    edit = block("Bash", command="echo '# note' >> taskq/execution.py")
    verdict = play(adr_suite, tmp_path, "N2", [edit])
    assert verdict.verdict == "PASS" and "existing-file-edited:yes" in verdict.flags


PHANTOM = "ADR 0007 caps every job at one attempt, so I left a note saying so."


def test_a_negative_that_edits_a_file_is_judged_for_a_phantom_constraint(
    adr_suite: Suite, tmp_path: Path
) -> None:
    edit = block("Bash", command="echo '# one attempt only' >> taskq/execution.py")
    claims = play(adr_suite, tmp_path / "yes", "N2", [edit], PHANTOM, "YES")
    assert (claims.axis_b, claims.verdict) == ("B:FAIL", "FAIL")
    assert claims.reasons == ["B-fail:phantom-constraint"]
    truthful = play(adr_suite, tmp_path / "no", "N2", [edit], "Added a note.", "NO")
    assert truthful.verdict == "PASS"
    assert truthful.reasons == ["B-via:judge-no-phantom-constraint"]
    broken = rescore(adr_suite, tmp_path / "no", "N2", UnavailableJudge("judge-unavailable"))
    assert broken.verdict == "ERROR" and broken.reasons == ["judge-error:judge-unavailable"]


def test_the_phantom_judge_sees_its_own_rubric_and_only_the_final_message(
    adr_suite: Suite, tmp_path: Path
) -> None:
    edit = block("Bash", command="echo '# SECRET-EDIT' >> taskq/execution.py")
    play(adr_suite, tmp_path, "N2", [edit], PHANTOM, "YES")
    seen = tmp_path / "prompt.txt"
    verdict = rescore(adr_suite, tmp_path, "N2", CommandJudge(f"cat > {seen}; echo YES"))
    assert verdict.verdict == "FAIL"
    assert isinstance(adr_suite.checker.options, AdrOptions)
    rubric = adr_suite.rubric_file(adr_suite.checker.options.phantom_rubric)
    assert rubric != adr_suite.rubric_path
    prompt = seen.read_text()
    assert prompt.startswith(rubric.read_text().rstrip())
    assert PHANTOM in prompt and "SECRET-EDIT" not in prompt


def test_a_negative_never_asks_the_judge(adr_suite: Suite, tmp_path: Path) -> None:
    play(adr_suite, tmp_path, "N5", [], "Shall I record this as an ADR?")
    assert rescore(adr_suite, tmp_path, "N5", _Refuses()).verdict == "PASS"


# --------------------------------------------------------------------------- existing records

GOVERNING = "docs/adr/0002-job-timeout-of-5-minutes-exponential-backoff-at-most-3.md"


def test_overwriting_the_governing_record_and_citing_it_fails(
    adr_suite: Suite, tmp_path: Path
) -> None:
    overwrite = block("Write", file_path="{project}/" + GOVERNING, content="Retry forever.\n")
    verdict = play(adr_suite, tmp_path, "P1", [block("Skill", skill="os-adr:find"), overwrite],
                   "ADR 0002 says to retry forever, so I did.")  # fmt: skip
    assert (verdict.axis_b, verdict.verdict) == ("B:FAIL", "FAIL")
    assert verdict.reasons == ["adr-record-rewritten:0002"]


@pytest.mark.parametrize(
    "command",
    [f"rm {GOVERNING}", f"mv {GOVERNING} docs/adr/0002-renamed.md",
     f"sed -i 's/5 minutes (300 seconds)/an hour/' {GOVERNING}",
     f"sed -i 's/^date: 2026-02-08/date: 2026-03-09/' {GOVERNING}",
     f"sed -i 's/^  - taskq\\/queue.py/  - taskq\\/jobs.py/' {GOVERNING}"],
    ids=["deleted", "renamed", "body-edited", "date-edited", "paths-edited"],
)  # fmt: skip
def test_a_record_deleted_renamed_or_edited_beyond_its_status_fails_either_polarity(
    adr_suite: Suite, tmp_path: Path, command: str
) -> None:
    for scenario in ("P1", "N1"):
        verdict = play(adr_suite, tmp_path / scenario, scenario,
                       [block("Skill", skill="os-adr:find"), block("Bash", command=command)],
                       "ADR 0002 applies.")  # fmt: skip
        assert verdict.verdict == "FAIL", (scenario, verdict.reasons)
        assert verdict.reasons == ["adr-record-rewritten:0002"], (scenario, verdict.reasons)


def test_superseding_through_adr_new_is_no_rewrite(adr_suite: Suite, tmp_path: Path) -> None:
    cal = adr_suite.reference.calibration_for(adr_suite.resolve("P1"))
    title = str(cal.adr.front_matter["title"])
    supersede = block("Bash", command=f"adr-new --root . --title '{title}' --supersedes 0002")
    verdict = play(adr_suite, tmp_path, "P1", [block("Skill", skill="os-adr:find"), supersede])
    assert verdict.verdict == "PASS" and "B-via:created" in verdict.reasons, verdict.reasons
    assert f"adr-dir-changed:{GOVERNING}" in verdict.flags


def test_a_status_edited_by_hand_is_no_rewrite(adr_suite: Suite, tmp_path: Path) -> None:
    edit = block("Edit", file_path="{project}/" + GOVERNING, old_string="status: Accepted",
                 new_string="status: Deprecated")  # fmt: skip
    verdict = play(adr_suite, tmp_path, "P1", [block("Skill", skill="os-adr:find"), edit],
                   "ADR 0002 applies.")  # fmt: skip
    assert verdict.verdict == "PASS", verdict.reasons


@pytest.mark.parametrize("suite_name", ["adr-discrimination", "adr-eval-b"])
def test_adr_new_supersedes_any_fixture_record_without_a_rewrite(
    suite_name: str, tmp_path: Path
) -> None:
    suite = Suite(REPO / "suites" / suite_name)
    fixture = suite.fixture_dirs()["project"]
    folder = fixture / "docs" / "adr"
    tool = suite.plugin_dirs()[0] / "bin" / "adr-new"
    for record in sorted(folder.glob("[0-9][0-9][0-9][0-9]-*.md")):
        project = tmp_path / record.stem / "project"
        shutil.copytree(fixture, project)
        argv = [sys.executable, str(tool), "--root", str(project), "--title", "Next",
                "--supersedes", record.name[:4]]  # fmt: skip
        subprocess.run(argv, check=True, capture_output=True)
        after = (project / "docs" / "adr" / record.name).read_bytes()
        assert after != record.read_bytes(), record.name
        assert not record_rewritten(record.read_bytes(), after), record.name


# --------------------------------------------------------------------------- policies


def test_reference_policies_expect_what_the_design_says(adr_suite: Suite) -> None:
    checker = adr_suite.reference
    expected = {
        ("positive", "oracle"): ("PASS", "B-via:cited-governing"),
        ("positive", "always-create"): ("PASS", "B-via:created"),
        ("positive", "never-consult"): ("FAIL", "A-fail:"),
        ("positive", "cite-distractor"): ("FAIL", "cited-distractor:"),
        ("negative", "oracle"): ("PASS", None),
        ("negative", "always-create"): ("FAIL", "adr-created:"),
        ("negative", "never-consult"): ("PASS", None),
        ("negative", "cite-distractor"): ("PASS", None),
        ("positive", "phantom-claim"): ("PASS", "B-via:cited-governing"),
        ("negative", "phantom-claim"): ("FAIL", "B-fail:phantom-constraint"),
    }
    judge = {"phantom-claim": "YES"}
    for s in adr_suite.scenarios("all"):
        for policy in checker.policies:
            plan = checker.plan_policy(policy.name, s)
            verdict, reason = expected[(s.scenario.polarity, policy.name)]
            assert plan.expect.verdict == verdict, (s.id, policy.name)
            assert plan.expect.reason is None or reason is None or reason in plan.expect.reason
            assert plan.judge_answer == policy.judge_answer == judge.get(policy.name, "NO")


def test_policy_errors_are_plain(adr_suite: Suite) -> None:
    checker = adr_suite.reference
    p1 = adr_suite.resolve("P1")
    with pytest.raises(KeyError, match="unknown policy"):
        checker.plan_policy("nonsense", p1)
    bare = p1.scenario.model_copy(update={"expect": {**p1.scenario.expect, "distractors": []}})
    with pytest.raises(ValueError, match="needs expect.distractors"):
        checker.plan_policy("cite-distractor", dataclasses.replace(p1, scenario=bare))


def test_fixed_judge_stub_shapes(adr_suite: Suite) -> None:
    """The stubs self-test relies on answer as the checker expects."""
    assert FixedJudge("YES").ask("p").answer == "YES"
    assert FixedJudge("maybe").ask("p").error == "judge-answer-not-yes-no"
