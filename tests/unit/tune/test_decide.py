"""A round's decision, from the gate's own tests: better on the failing polarity, within the
margin on the other, and every other outcome named."""

from __future__ import annotations

from evalkit.compare.gate import Pair, Setting, Settings, Tally, Verdict, decide
from evalkit.compare.gate import Test as GateTest
from evalkit.models import Polarity
from evalkit.tune.decide import decide_round, needed_scenarios

MODEL = "policy:phrase:keep"


def _test(polarity: Polarity, a: int, b: int, reps: int = 2, g: int = 6) -> GateTest:
    """G scenarios of one polarity, A passing `a` of `reps` reps each and B passing `b`."""
    pairs = [
        Pair(scenario=f"{polarity[0].upper()}{i}", path=f"scenarios/{i}.md", set="run",
             a=Tally(k=a, n=reps, errors=0), b=Tally(k=b, n=reps, errors=0),
             difference=(b - a) / reps)
        for i in range(1, g + 1)
    ]  # fmt: skip
    return GateTest(
        model_a=MODEL, model_b=MODEL, variants="suite->tune-1", polarity=polarity,
        measure="recall" if polarity == "positive" else "specificity", scenarios=g,
        mean_difference=(b - a) / reps, p_value=None, floor=1 / 2**g, needed=0,
        decision="underpowered", against_b=[p.scenario for p in pairs if p.difference < 0],
        pairs=pairs,
    )  # fmt: skip


def _verdict(tests: list[GateTest], margin: float = 0.3, status: str = "pass") -> Verdict:
    """The margin gate's verdict on these tests, decided as `gate --margin` decides them."""
    decide(tests, 0.05, margin)
    settings = Settings(alpha=Setting(value=0.05, source="default"),
                        margin=Setting(value=margin, source="--margin"),
                        max_errors=Setting(value=0.1, source="default"))  # fmt: skip
    return Verdict(
        suite="tuning", a="A", b="B", status=status, exit_code=0,  # type: ignore[arg-type]
        line="gate: cannot be trusted: A: not PUBLISHABLE", reasons=[], settings=settings,
        tests_in_family=len(tests), causes=[], tests=tests, bars=[],
    )  # fmt: skip


def test_a_wording_that_fixes_the_positives_and_keeps_the_negatives_is_accepted() -> None:
    found = decide_round(_verdict([_test("positive", 0, 2), _test("negative", 2, 2)]),
                         "positive", 0.0, 0.05)  # fmt: skip
    assert found.code == 0 and found.accepted
    assert found.delta == 1.0


def test_a_wording_that_also_fires_on_the_negatives_is_rejected_naming_them() -> None:
    found = decide_round(_verdict([_test("positive", 0, 2), _test("negative", 2, 0)]),
                         "positive", 0.0, 0.05)  # fmt: skip
    assert found.code == 1
    assert "negatives" in found.reason and "not shown within 0.3" in found.reason
    assert "N1" in found.reason


def test_a_wording_that_changes_nothing_is_rejected_as_not_better() -> None:
    found = decide_round(_verdict([_test("positive", 0, 0), _test("negative", 2, 2)]),
                         "positive", 0.0, 0.05)  # fmt: skip
    assert found.code == 1 and "not shown better" in found.reason


def test_three_scenarios_a_polarity_cannot_tell() -> None:
    found = decide_round(_verdict([_test("positive", 0, 2, g=3), _test("negative", 2, 2, g=3)]),
                         "positive", 0.0, 0.05)  # fmt: skip
    assert found.code == 3 and "cannot tell" in found.reason


def test_an_untrusted_comparison_is_never_accepted() -> None:
    tests = [_test("positive", 0, 2), _test("negative", 2, 2)]
    found = decide_round(_verdict(tests, status="untrusted"), "positive", 0.0, 0.05)
    assert found.code == 2 and "not PUBLISHABLE" in found.reason


def test_the_size_a_polarity_needs_comes_from_the_gate_tests_and_the_reps() -> None:
    assert needed_scenarios(1, 0.05, 2, 0.3) == 6  # Holm over two polarities: 1/2^6 < 0.025
    assert needed_scenarios(1, 0.05, 2, 0.1) > 6  # the margin test's own reach at 2 reps
    assert needed_scenarios(2, 0.05, 2, 0.3) == 7  # four tests in the family
    assert needed_scenarios(1, 0.05, 8, 0.1) < needed_scenarios(1, 0.05, 2, 0.1)
