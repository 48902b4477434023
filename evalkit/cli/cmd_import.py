"""`evalkit import`: another tool's eval log read into a results folder labelled imported, or
another tool's test set read into a suite's scenarios labelled open."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evalkit.cli.app import app, group_command, state

if TYPE_CHECKING:
    from evalkit.suite.skill_creator import Imported

import_app = typer.Typer(
    name="import",
    help="Read another tool's eval log into a results folder, labelled imported: `report` and "
    "`compare` read it, nothing re-derives it, so it is never PUBLISHABLE and `gate` refuses it. "
    "Or read another tool's test set into a suite's run set, labelled open (author-written).",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)
app.add_typer(import_app, name="import", short_help="Read another tool's eval log or test set.")


@group_command(import_app, "inspect", short_help="Read an Inspect AI .eval log as results.")
def import_inspect(
    log: Annotated[Path, typer.Argument(metavar="LOG", help="the Inspect AI log (.eval)")],
    polarity_key: Annotated[
        str,
        typer.Option(
            "--polarity-key",
            metavar="KEY",
            help="the sample metadata key holding each sample's polarity: positive or negative",
        ),
    ],
    out: Annotated[
        Path,
        typer.Option("--out", metavar="FOLDER", help="the results folder to write; must be new"),
    ],
) -> None:
    """One row per sample: its id the scenario, its epoch the rep, PASS or FAIL from its
    `verdict` score (or its only score), ERROR when it errored; its polarity from the metadata
    key KEY (a sample lacking it, or the suite stating another, is refused). One log is one
    model's. The folder is read-only, holds no evidence and is labelled imported.

    Example: `evalkit import inspect logs/run.eval --polarity-key polarity --out results/inspect`
    """
    import sys

    from evalkit.exports.inspect_import import import_inspect_log

    done = import_inspect_log(state.suite(), log, polarity_key, out)
    errors = f", {done.errors} ERROR" if done.errors else ""
    print(
        f"wrote {out}: {done.rows} row(s) of {done.model} over {done.scenarios} scenario(s)"
        f"{errors}; imported, never PUBLISHABLE",
        file=sys.stderr,
    )


@group_command(
    import_app, "skill-creator", short_help="Read a skill-creator trigger set as scenarios."
)
def import_skill_creator(
    evals: Annotated[
        Path, typer.Argument(metavar="EVALS.json", help="the trigger set (query, should_trigger)")
    ],
    fixture: Annotated[
        str,
        typer.Option(
            "--fixture",
            metavar="FILE",
            help="the fixture file every scenario's premise names (suite-relative)",
        ),
    ],
    marker: Annotated[
        str | None,
        typer.Option(help="a string of FILE the premise shows (default: its first line)"),
    ] = None,
    skill: Annotated[
        str | None,
        typer.Option(
            metavar="PLUGIN:SKILL", help="the skill the queries are about (default: the only one)"
        ),
    ] = None,
    share: Annotated[
        float, typer.Option(help="the reserve's share `suite split-reserve` will take")
    ] = 0.3,
    reps: Annotated[int, typer.Option(min=1, help="the reps the size rule is worked out for")] = 2,
    margin: Annotated[
        float, typer.Option(help="the margin the size rule is worked out for, as tune's")
    ] = 0.1,
) -> None:
    """One scenario of the run set per query of a skill-creator trigger set (the JSON list
    of {"query", "should_trigger"} its review page exports): should_trigger true a positive
    that must fire the skill, false a negative that must not. The query is the scenario's
    Task; its id (P-… or N-…) is the query's digest, so importing the set again adds only
    what is new. The suite's sets are labelled open and author-written. Refused, with nothing
    written, on a frozen suite or a suite with a ladder, on a malformed set, and when a class
    is too small for `suite split-reserve --share` to leave, in both the run set and the
    reserve, the scenarios `tune`'s tests need at --reps and --margin. Prints ids and
    counts, never a query.

    Example: `evalkit import skill-creator eval_set.json --fixture fixtures/project/README.md`
    """
    import sys

    from evalkit.compare.gate import ALPHA
    from evalkit.suite.skill_creator import ImportOptions, SizeRule, import_trigger_set
    from evalkit.tune.decide import needed_scenarios

    said = f"--reps {reps}, --margin {margin:g}, alpha {ALPHA:g}, Holm over 2 tests"
    rule = SizeRule(needed_scenarios(1, ALPHA, reps, margin), said)
    options = ImportOptions(rule=rule, share=share, skill=skill, marker=marker)
    done = import_trigger_set(state.suite_arg, evals, fixture, options)
    for line in _said(evals, done, share):
        print(line, file=sys.stderr)


def _said(evals: Path, done: Imported, share: float) -> list[str]:
    """What an import says: counts and ids, never a query."""
    lines = [
        f"{evals.name}: {done.positives} should trigger, {done.negatives} should not "
        f"({done.skill}); {len(done.added)} scenario(s) added to the run set, "
        f"{len(done.present)} held already; labelled open (author-written)"
    ]
    if done.added:
        lines.append(f"added: {', '.join(done.added)}")
    return [*lines, f"next: `evalkit suite split-reserve --share {share:g}`"]
