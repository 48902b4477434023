"""The gate's verdict for people and CI systems: Markdown, JUnit cases and annotations.

Ids, counts, rates, reason tokens and paths only; nothing an agent wrote is ever shown.
"""

from __future__ import annotations

from evalkit.ci import junit
from evalkit.ci.github import error_annotation
from evalkit.compare.gate import Test, Verdict

SHOWN = ("regression", "not-within-margin", "not-better")


def _p(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def test_row(test: Test) -> tuple[str, ...]:
    mean = "-" if test.mean_difference is None else f"{test.mean_difference:+.3f}"
    level = "-" if test.level is None else f"{test.level:.4g}"
    return (
        test.name,
        str(test.scenarios),
        mean,
        _p(test.p_value),
        level,
        f"{test.floor:.3g}",
        test.decision,
        ", ".join(test.against_b) or "-",
    )


TEST_COLUMNS = ("test", "G", "mean B-A", "p", "Holm level", "floor", "decision", "against B")


def settings_line(verdict: Verdict) -> str:
    s = verdict.settings
    decides = (
        f"superiority by more than {s.min_delta.value:g} ({s.min_delta.source})"
        if s.superiority
        else f"margin {s.margin.value:g} ({s.margin.source})"
    )
    return (
        f"alpha {s.alpha.value:g} ({s.alpha.source}), {decides}, max ERROR share "
        f"{s.max_errors.value:g} ({s.max_errors.source}); "
        f"{verdict.tests_in_family} test(s); {s.method}"
        + ("; confinement backends allowed to differ (--allow-backends)" if s.allow_backends
           else "")
    )  # fmt: skip


def error_lines_text(verdict: Verdict) -> list[str]:
    """What the ERROR rows could change, one short line per test that holds any, and the
    arms' ERROR shares tested against each other; none when no row is an ERROR."""
    found = []
    for test in verdict.tests:
        if not test.at_error_bounds:
            continue
        low, high = (sum(p.bounds[i] for p in test.pairs) / len(test.pairs) for i in (0, 1))
        against, for_b = test.at_error_bounds
        found.append(
            f"ERROR rows could move {test.measure} {test.model_b} B-A to "
            f"[{low:+.3f}, {high:+.3f}]: {against} .. {for_b}"
        )
    if verdict.error_rates_p is not None:
        found.append(f"ERROR shares A vs B: Fisher exact p = {verdict.error_rates_p:.3g}")
    return found


def to_markdown(verdict: Verdict) -> str:
    out = [f"## evalkit gate: {verdict.suite}: exit {verdict.exit_code} ({verdict.status})", ""]
    out += [f"- A: {verdict.a}", f"- B: {verdict.b}", f"- {settings_line(verdict)}", ""]
    out += [verdict.line, ""]
    shown = error_lines_text(verdict)
    out += [*(f"- {x}" for x in shown), ""] if shown else []

    def line(cells: tuple[str, ...]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    out += [line(TEST_COLUMNS), "|" + "---|" * len(TEST_COLUMNS)]
    out += [line(test_row(t)) for t in verdict.tests]
    if verdict.bars:
        out += ["", line(("expected bar", "bar", "observed", "verdict")), "|---|---|---|---|"]
        out += [line((b.cell, b.bar, f"{b.k}/{b.n}", b.verdict)) for b in verdict.bars]
    return "\n".join(out) + "\n"


def error_lines(verdict: Verdict) -> list[str]:
    """One `::error` per scenario that moved against B inside a test that decided against B."""
    found = []
    for test in verdict.tests:
        if test.decision not in SHOWN:
            continue
        for pair in test.pairs:
            if pair.difference < 0:
                found.append(
                    error_annotation(
                        pair.path,
                        f"evalkit gate: {test.measure} {pair.scenario}",
                        f"{pair.scenario}: {test.measure} A {pair.a.k}/{pair.a.n}, "
                        f"B {pair.b.k}/{pair.b.n} (d = {pair.difference:+.3f}); {test.decision}",
                    )
                )
    return found


def _props(verdict: Verdict) -> dict[str, str]:
    s = verdict.settings
    return {
        "suite": verdict.suite,
        "a": verdict.a,
        "b": verdict.b,
        "exit_code": str(verdict.exit_code),
        "status": verdict.status,
        "reasons": " ".join(verdict.reasons),
        "method": s.method,
        "alpha": f"{s.alpha.value:g}",
        "alpha_source": s.alpha.source,
        "margin": f"{s.margin.value:g}",
        "margin_source": s.margin.source,
        "max_errors": f"{s.max_errors.value:g}",
        "max_errors_source": s.max_errors.source,
        "superiority": str(s.superiority).lower(),
        "min_delta": f"{s.min_delta.value:g}",
        "min_delta_source": s.min_delta.source,
        "error_rates_p": _p(verdict.error_rates_p),
        "fail_on_bars": str(s.fail_on_bars).lower(),
        "tests_in_family": str(verdict.tests_in_family),
    }


def junit_suites(verdict: Verdict) -> list[junit.Suite]:
    s = verdict.settings
    props = _props(verdict)
    cases = [
        junit.Case("gate.trust", f"{c.token} {c.side}", "error", c.detail, f"untrusted:{c.token}")
        for c in verdict.causes
    ]
    untrusted = "; ".join(f"untrusted:{c.token}:{c.side}" for c in verdict.causes)
    for test in verdict.tests:
        case = junit.Case("gate.decision", f"{test.name} G={test.scenarios}")
        if untrusted:
            case.outcome, case.message, case.kind = "error", untrusted, "untrusted"
        elif test.decision in SHOWN:
            case.outcome, case.kind = "failure", test.decision
            case.message = (
                f"p = {_p(test.p_value)} at Holm level {_p(test.level)}; against B: "
                f"{', '.join(test.against_b) or 'none'}"
            )
        elif test.decision == "underpowered":
            case.outcome = "skipped"
            case.message = (
                f"underpowered: G = {test.scenarios}, floor {test.floor:.3g}, "
                f"{test.needed} scenarios needed"
            )
        cases.append(case)
        for pair in test.pairs:
            item = junit.Case(f"gate.scenario.{test.measure}", f"{pair.scenario} ({test.name})")
            counts = (
                f"A {pair.a.k}/{pair.a.n} ({pair.a.errors} ERROR), B {pair.b.k}/{pair.b.n} "
                f"({pair.b.errors} ERROR), d = {pair.difference:+.3f}; {pair.path}"
            )
            if pair.a.errors or pair.b.errors:
                item.outcome, item.message, item.kind = "error", counts, "error-rows"
            elif pair.difference < 0 and test.decision in SHOWN:
                item.outcome, item.message, item.kind = "failure", counts, test.decision
            cases.append(item)
    for bar in verdict.bars:
        item = junit.Case("gate.bar", bar.cell)
        if bar.verdict == "miss" and s.fail_on_bars:
            item.outcome, item.kind = "failure", "bar-missed"
            item.message = f"bar-missed:{bar.cell}: {bar.k}/{bar.n} against {bar.bar}"
        cases.append(item)
    return [junit.Suite(f"evalkit gate {verdict.suite}", cases, props)]


def refused_suites(suite: str, why: str) -> list[junit.Suite]:
    """A refused gate (bad input, no baseline, a side that cannot be read) as JUnit, so that a
    CI job reading the file sees the exit-2 cause rather than no file."""
    case = junit.Case("gate.trust", "refused", "error", why, "untrusted:refused")
    props = {
        "suite": suite,
        "exit_code": "2",
        "status": "untrusted",
        "reasons": "untrusted:refused",
    }
    return [junit.Suite(f"evalkit gate {suite}", [case], props)]


def refused_markdown(suite: str, why: str) -> str:
    return f"## evalkit gate: {suite}: exit 2 (refused)\n\n{why}\n"


# --------------------------------------------------------------------------- 80 columns

COMPACT_TEST_COLUMNS = ("test", "G", "B-A", "p", "Holm level", "floor", "decision")
"""The default terminal table: the scenarios that moved against B are listed below it, one
line a test, since a list of ids has no width a column could hold at 80."""


def compact_test_row(test: Test) -> list[str]:
    return list(test_row(test)[:-1])


def against_lines(verdict: Verdict) -> list[str]:
    return [f"{t.name}: against B: {', '.join(t.against_b)}" for t in verdict.tests if t.against_b]


def _scenarios(tests: list[Test]) -> str:
    sizes = sorted({t.scenarios for t in tests})
    if not sizes:
        return "no scenario both sides ran"
    counted = str(sizes[0]) if len(sizes) == 1 else f"{sizes[0]} to {sizes[-1]}"
    return f"{counted} scenario(s) a test"


def headline(verdict: Verdict) -> str:
    """One sentence a person can act on, said before any table: better, worse, holds or
    cannot tell; why; and how many scenarios it rests on."""
    tests, rests = verdict.tests, _scenarios(verdict.tests)
    if verdict.status == "untrusted":
        causes = ", ".join(sorted({f"{c.token} ({c.side})" for c in verdict.causes}))
        return f"CANNOT BE TRUSTED (exit 2): {causes}; the tests below decide nothing."
    if verdict.status == "underpowered":
        short = [t for t in tests if t.decision == "underpowered"]
        needed = max((t.needed for t in short), default=0)
        return (
            f"CANNOT TELL (exit 3): {len(short)} of {len(tests)} test(s) rest on too few "
            f"scenarios to show a change ({rests}; {needed} needed). Add scenarios, not reps."
        )
    against = [t.name for t in tests if t.decision in SHOWN]
    if verdict.status == "regression":
        what = ", ".join(against) or "an expected bar"
        return f"WORSE (exit 1): B is shown worse than A on {what}, resting on {rests}."
    if verdict.settings.superiority:
        return (
            f"BETTER (exit 0): B is shown better than A by more than "
            f"{verdict.settings.min_delta.value:g} on all {len(tests)} test(s), resting on "
            f"{rests}."
        )
    return f"HOLDS (exit 0): no regression shown on {len(tests)} test(s), resting on {rests}."
