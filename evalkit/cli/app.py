"""The Typer app, its global options, and the one boundary that turns errors into exit codes.

Importing this module (and every `cmd_*` module) stays cheap, so `--help` and `list` start
quickly: the library, rich and the suite load inside the command that uses them. Help and
usage errors are Click's plain text: Typer's rich help imports rich and a Markdown renderer,
which took `evalkit --help` from about 0.2 s to over 0.3 s.
"""

from __future__ import annotations

import difflib
import errno
import functools
import inspect
import os
import sys
import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import typer
import typer.core

from evalkit.errors import EvalkitError

if TYPE_CHECKING:
    from rich.console import Console
    from typer._click import Context, HelpFormatter  # typer's vendored Click

    from evalkit.suite.catalog import Catalog
    from evalkit.suite.config import Suite

    out: Console
    err: Console

SECTIONS: dict[str, tuple[str, ...]] = {
    "The loop: write a suite, run it, tune its wording": (
        "init", "list", "run", "self-test", "tune",
    ),
    "Results: read, compare and publish a results folder": (
        "report", "compare", "gate", "verify", "export", "import", "results",
    ),
    "The instrument: trust the measurement itself": ("calibrate", "aa", "suite"),
    "Scale-out and CLI versions: many runs, machines and releases": (
        "grid", "merge", "bisect", "watch", "cli",
    ),
    "Debugging: one rep by hand, and what it needs": ("sandbox", "check", "doctor"),
}  # fmt: skip
"""Where `evalkit --help` lists each command, by what a user is doing; a command missing here
is listed under "Other" rather than hidden (tests/unit/cli/test_help.py holds the table full)."""


MOVED: dict[str, str] = {}
"""A moved command's old name -> its new spelling under `evalkit` (`freeze` -> `suite freeze`),
filled by `moved_command`."""


class SectionedGroup(typer.core.TyperGroup):
    """Click's plain help with the commands listed in SECTIONS' groups and order."""

    def resolve_command(self, ctx: Context, args: list[str]) -> Any:
        """An unknown name is offered the shown commands and the new spellings of the moved
        ones, never an old name `--help` hides."""
        try:
            return self._click_resolve_command(ctx, args)
        except _USAGE_ERROR as exc:
            shown = [n for n, cmd in self.commands.items() if not cmd.hidden]
            spelled = {name: name for name in shown} | MOVED
            near = difflib.get_close_matches(args[0], list(spelled)) if args else []
            if near:
                offered = ", ".join(dict.fromkeys(repr(spelled[n]) for n in near))
                exc.message = f"{exc.message.rstrip('.')}. Did you mean {offered}?"
            raise

    def format_commands(self, ctx: Context, formatter: HelpFormatter) -> None:
        visible = {name: cmd for name, cmd in self.commands.items() if not cmd.hidden}
        placed = {name for names in SECTIONS.values() for name in names}
        groups = [*SECTIONS.items(), ("Other", tuple(sorted(set(visible) - placed)))]
        width = max(map(len, visible), default=0)
        limit = formatter.width - 6 - width
        formatter.write_paragraph()
        for title, names in groups:
            shown = [n for n in names if n in visible]
            rows = [(n.ljust(width), visible[n].get_short_help_str(limit)) for n in shown]
            if rows:
                formatter.write_text(f"{title}:")
                formatter.indent()
                formatter.write_dl(rows)
                formatter.dedent()


app = typer.Typer(
    name="evalkit",
    help="Held-out evals of what a coding agent does unprompted; COMMAND --help: more.",
    cls=SectionedGroup,
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)


class _OrderedGroup(typer.core.TyperGroup):
    """A group whose `--help` lists its commands in the order `order` gives."""

    order: tuple[str, ...] = ()

    def list_commands(self, ctx: Context) -> list[str]:
        names = super().list_commands(ctx)
        return sorted(names, key=lambda n: self.order.index(n) if n in self.order else 99)


def _group(name: str, order: tuple[str, ...], short_help: str, help_text: str) -> typer.Typer:
    """A command group of `evalkit`, listed in SECTIONS like a command."""
    cls = type(f"{name.title()}Group", (_OrderedGroup,), {"order": order})
    group = typer.Typer(
        name=name, help=help_text, cls=cls, no_args_is_help=True, add_completion=False,
        rich_markup_mode=None,
    )  # fmt: skip
    app.add_typer(group, name=name, short_help=short_help)
    return group


suite_app = _group(
    "suite",
    ("freeze", "contaminate", "baseline", "split-reserve", "build"),
    "Freeze, contaminate, baseline, split-reserve or build the suite.",
    "The suite's own records: its frozen hashes, which sets wording was tuned against and the "
    "baseline (all three in evalkit.lock), its reserve split and its built fixture files.",
)
results_app = _group(
    "results",
    ("rescore", "migrate"),
    "Bring an older results folder up to date: rescore or migrate.",
    "A results folder an older evalkit wrote, brought up to date in place: its rows scored "
    "again with the current scoring code, or its files rewritten with the current columns.",
)


_CONSOLES_MADE = threading.Lock()


def _console(stderr: bool) -> Console:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def _made(name: str) -> Console:
    with _CONSOLES_MADE:
        if name not in globals():
            globals()[name] = _console(stderr=name == "err")
    console: Console = globals()[name]
    return console


def __getattr__(name: str) -> Console:
    """`out` and `err`, the rich consoles, made on first use: importing rich costs a command
    that prints plain text (`list`) a noticeable part of its start-up."""
    if name in ("out", "err"):
        return _made(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Lines:
    """What a library call says, as a command shows it: lines on stdout, warnings on stderr
    (the `run` and `grid` views add their progress bars)."""

    def say(self, line: str) -> None:
        _made("out").print(line, markup=False)

    def warn(self, line: str) -> None:
        _made("err").print(line, markup=False)


F = TypeVar("F", bound=Callable[..., Any])
INTERNAL_ERROR = 70
"""Exit code of an unexpected exception (a bug), apart from 1 (FAIL), 2 (refused), 3 (ERROR)."""
INTERRUPTED = 130
BROKEN_PIPE = 141
"""As a shell reports a command its reader stopped early (128 + SIGPIPE)."""
PLACE_ERROR = 2
PLACE_ERRORS = frozenset({errno.ENOSPC, errno.EROFS, errno.EDQUOT, errno.EACCES, errno.EPERM})
"""Where evalkit was told to write cannot take it (a full or read-only disk, no permission):
the place's fault, said in one line, never an internal error."""
_CLICK_ERROR: type[Exception] = typer.BadParameter.__mro__[2]  # typer's vendored ClickException
_USAGE_ERROR: Any = typer.BadParameter.__mro__[1]  # typer's vendored UsageError


class State:
    suite_arg: str | None = None
    _suite: Suite | None = None

    def suite(self) -> Suite:
        if self._suite is None:
            from evalkit.suite.config import load_suite

            self._suite = load_suite(self.suite_arg)
        return self._suite

    def catalog(self) -> Catalog:
        """The suite's config and scenarios without its checker: enough to list them."""
        from evalkit.suite.catalog import load_catalog

        return self._suite or load_catalog(self.suite_arg)


state = State()


@app.callback()
def _root(
    suite: Annotated[
        str | None,
        typer.Option(
            "--suite",
            metavar="DIR",
            help="suite folder (default: EVALKIT_SUITE, or search upward)",
        ),
    ] = None,
) -> None:
    state.suite_arg = suite
    state._suite = None


def guarded_call(fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
    """fn(*args, **kw) with the command boundary: an EvalkitError prints as one line on
    stderr and exits with its code, Ctrl-C that no command caught as `interrupted` (130), and
    anything else as a one-line internal error (70). EVALKIT_DEBUG=1 prints the traceback."""
    try:
        return fn(*args, **kw)
    except EvalkitError as exc:
        if os.environ.get("EVALKIT_DEBUG"):
            traceback.print_exc()
        for line in str(exc).splitlines() or [type(exc).__name__]:
            print(f"evalkit: {line}", file=sys.stderr)
        raise typer.Exit(exc.exit_code) from None
    except KeyboardInterrupt:
        print("evalkit: interrupted", file=sys.stderr)
        raise typer.Exit(INTERRUPTED) from None
    except (typer.Exit, typer.Abort, _CLICK_ERROR, SystemExit):
        raise
    except BrokenPipeError:  # a reader that stopped early (`| head`): nothing more to say
        _quiet_stdout()
        raise typer.Exit(BROKEN_PIPE) from None
    except OSError as exc:
        if exc.errno not in PLACE_ERRORS:
            _internal(exc)
        _quiet_stdout()
        where = exc.filename if exc.filename is not None else "a write"
        print(f"evalkit: {where}: {exc.strerror}", file=sys.stderr)
        raise typer.Exit(PLACE_ERROR) from None
    except Exception as exc:  # a bug: one line, and the way to see more
        _internal(exc)


def _internal(exc: BaseException) -> NoReturn:
    if os.environ.get("EVALKIT_DEBUG"):
        traceback.print_exc()
    first = (str(exc).splitlines() or [""])[0][:200]
    print(
        f"evalkit: internal error: {type(exc).__name__}: {first} "
        "(set EVALKIT_DEBUG=1 for the traceback)",
        file=sys.stderr,
    )
    raise typer.Exit(INTERNAL_ERROR) from None


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush of what could not be
    written raises nothing more at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def command(*names: str, **kwargs: Any) -> Callable[[F], F]:
    """Register a command that runs inside `guarded_call`'s boundary."""
    return group_command(app, *names, **kwargs)


def group_command(group: typer.Typer, *names: str, **kwargs: Any) -> Callable[[F], F]:
    """Register a command of `group` (`evalkit import inspect`) inside the same boundary."""

    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def guarded(*args: Any, **kw: Any) -> Any:
            return guarded_call(fn, *args, **kw)

        group.command(*names, **kwargs)(guarded)
        return fn

    return wrap


MOVED_NOTICE = "evalkit: `evalkit {old}` is now `{new}`; the old name goes in the next release"


def moved_command(group: typer.Typer, name: str, **kwargs: Any) -> Callable[[F], F]:
    """Register `evalkit GROUP NAME`, and NAME where it was before, at the top: hidden from
    `--help`, it says the new spelling in one line on stderr, then does exactly what the new
    one does, with the same exit codes. The old name goes in the release after."""
    new = f"evalkit {group.info.name} {name}"
    MOVED[name] = new.removeprefix("evalkit ")

    def wrap(fn: F) -> F:
        group_command(group, name, **kwargs)(fn)

        @functools.wraps(fn)
        def old(*args: Any, **kw: Any) -> Any:
            print(MOVED_NOTICE.format(old=name, new=new), file=sys.stderr)
            return guarded_call(fn, *args, **kw)

        said = f"Moved: now `{new}`; this name works until the next release."
        app.command(name, hidden=True, help=f"{said}\n\n{inspect.getdoc(fn) or ''}")(old)
        return fn

    return wrap


def rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
