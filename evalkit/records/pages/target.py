"""Where a file a user names for evalkit to write may go: `report --html`'s page, `compare
--html`'s, and every `--junit` (report, verify, gate). One rule for all: never over (or
inside) anything evalkit reads (the results folder's records and the suite's files), never
over a file or folder that is not one of its own of that kind, never a FIFO, device or other
file that is not regular, and a path that cannot be written is one line. A page inside the
results folder is allowed (`make demo` puts one there): nothing evalkit reads from the
folder, nor its verification key, looks at it."""

from __future__ import annotations

import re
from pathlib import Path

from evalkit import __version__
from evalkit.errors import ConfigError, RefusedError
from evalkit.outpaths import check_new_file
from evalkit.records.folder.workdir import Workdir
from evalkit.suite.config import SET_FOLDERS, Suite
from evalkit.suite.lock import lock_path
from evalkit.suite.subject import SUBJECTS

GENERATOR = f'<meta name="generator" content="evalkit {__version__}">'
"""Every page carries it in its head, so a later `--html` knows the file is evalkit's."""
_MARKER = b'<meta name="generator" content="evalkit'
_BEFORE_MARKER = (
    b'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
    b'<meta name="viewport" content="width=device-width, initial-scale=1">'
    b"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
)
"""How a page began before it carried the marker."""
_HEAD = 4096
PAGE_FILES: dict[str, tuple[re.Pattern[str], bytes]] = {
    "evidence": (re.compile(r"rep-\d+\.js"), b"evalkitEvidence("),
    "reps": (re.compile(r"reps-\d+\.js"), b"evalkitReps("),
}
"""The kinds of script a page loads from its folder: one rep's evidence, one cell's reps."""


def is_evalkit_page(path: Path) -> bool:
    with path.open("rb") as fh:
        head = fh.read(_HEAD)
    if _MARKER in head:
        return True
    return head.startswith(_BEFORE_MARKER) and b"<title>evalkit report: " in head


def is_evalkit_evidence_folder(path: Path) -> bool:
    """A folder holding nothing but the scripts a page loads (or nothing)."""
    for entry in path.iterdir():
        if entry.is_symlink() or not entry.is_file():
            return False
        start = _page_file_start(entry.name)
        if start is None:
            return False
        with entry.open("rb") as fh:
            if fh.read(len(start)) != start:
                return False
    return True


def _page_file_start(name: str) -> bytes | None:
    for pattern, start in PAGE_FILES.values():
        if pattern.fullmatch(name):
            return start
    return None


def read_paths(suite: Suite, workdir: Path) -> dict[Path, str]:
    """Everything evalkit reads from the results folder and the suite, resolved, with what it
    is. Paths, not files: a page must not become a file evalkit would read later either."""
    records = Workdir(workdir)
    found: dict[Path, str] = {}

    def add(path: Path, what: str) -> None:
        found.setdefault(path.resolve(), what)

    plans = records.read_plans().items if records.plans.is_file() else []
    lines = records.read_evidence_index().items if records.has_evidence_index() else []
    for results in records.results_files(plans, lines):
        add(results, "a results file")
    add(records.plans, "the folder's plans")
    add(records.evidence_index, "the folder's manifest")
    add(records.verification, "the folder's verification record")
    add(records.grid_lock, "the folder's grid lock")
    add(records.evidence, "the folder's evidence")
    add(records.root / SUBJECTS, "the folder's kept subjects")
    add(suite.config_path, "the suite's config")
    add(lock_path(suite), "the suite's lock")
    for name in SET_FOLDERS.values():
        add(suite.root / name, "the suite's scenarios")
    add(suite.rubric_path, "the suite's rubric")
    for folder in suite.fixture_dirs().values():
        add(folder, "a fixture of the suite")
    for folder in suite.plugin_dirs():
        add(folder, "a plugin of the suite")
    for entry in suite.config.subject or []:
        add(suite.root / entry, "the suite's subject")
    for variant in suite.config.variants.values():
        if variant.overlay:
            add(suite.root / variant.overlay, "a variant's overlay")
    return found


def _read_by_evalkit(path: Path, read: dict[Path, str], noun: str = "page") -> str | None:
    resolved = path.resolve()
    for candidate in (resolved, *resolved.parents):
        what = read.get(candidate)
        if what is not None:
            verb = "is" if candidate == resolved else "lies inside"
            return f"{path}: {verb} {what}, which evalkit reads; write the {noun} elsewhere"
    return None


def is_junit_file(path: Path) -> bool:
    """A JUnit XML file (evalkit's or another tool's), as a CI keeps from run to run."""
    with path.open("rb") as fh:
        head = fh.read(_HEAD).lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith((b"<?xml", b"<testsuite")) and b"<testsuite" in head


def check_target(
    suite: Suite, workdirs: list[Path], out: Path, kind: str = "page"
) -> dict[Path, str]:
    """Refuse OUT, a file of `kind` (page or junit) a user named, before anything is built
    or written (see the module's docstring); what evalkit reads, for the caller's next
    check."""
    read: dict[Path, str] = {}
    for workdir in workdirs:
        for path, what in read_paths(suite, workdir).items():
            read.setdefault(path, what)
    noun, ours = ("JUnit file", is_junit_file) if kind == "junit" else ("page", is_evalkit_page)
    problem = _read_by_evalkit(out, read, noun)
    if problem:
        raise RefusedError(problem)
    check_new_file(out)
    if out.is_symlink() and not out.exists():
        raise ConfigError(f"{out}: a link to nothing; give the path of a file")
    if out.exists() and not out.is_file():
        raise RefusedError(f"{out}: exists and is not a regular file; refusing to write there")
    try:
        foreign = out.exists() and not ours(out)
    except OSError as exc:
        raise ConfigError(f"{out}: cannot be read to see whose it is: {exc.strerror}") from None
    if foreign:
        article = "a" if kind == "junit" else "an evalkit"
        raise RefusedError(f"{out}: exists and is not {article} {noun}; refusing to overwrite it")
    return read


def check_page(suite: Suite, workdir: Path, out: Path, evidence: bool = True) -> None:
    """Refuse OUT as a page's path, and the evidence folder beside it too unless the
    evidence is sure to go inline."""
    read = check_target(suite, [workdir], out)
    if evidence:
        check_evidence_folder(suite, workdir, evidence_folder(out), read)


def evidence_folder(out: Path) -> Path:
    """The folder beside the page that holds its evidence when it is too large to inline."""
    return out.with_name(out.name + ".files")


def check_evidence_folder(
    suite: Suite, workdir: Path, folder: Path, read: dict[Path, str] | None = None
) -> None:
    problem = _read_by_evalkit(folder, read if read is not None else read_paths(suite, workdir))
    if problem:
        raise RefusedError(problem)
    if not (folder.exists() or folder.is_symlink()):
        return
    try:
        ours = folder.is_dir() and not folder.is_symlink() and is_evalkit_evidence_folder(folder)
    except OSError as exc:
        raise ConfigError(f"{folder}: cannot be read to see whose it is: {exc.strerror}") from None
    if not ours:
        raise RefusedError(
            f"{folder}: exists and is not the evidence folder of an evalkit page; "
            "refusing to replace it"
        )
