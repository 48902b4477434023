"""A sandbox folder's files as a git index, whatever the agent left there.

`git add` refuses a folder holding a repository of its own (`git init sub`, a submodule),
stops at a file it cannot read and hashes a file of any size; any of those would cost the
rep its row. So the index is built here from the folder's files as the fixture rule names
them (`scoring.fixturefiles.walk_files`): a regular file or a link is recorded as what it is;
anything else is left out by a stated rule, and each one left out is named in the header of
the folder's diff (text before its first `diff --git`, which `git apply` skips):

- a folder or file named `.git` below the top (a nested repository, a submodule): never part
  of a fixture, so never of a diff; its work files are recorded like any others;
- a FIFO, socket or device node: not content, and never opened;
- a file that cannot be opened;
- a file over `MAX_DIFF_FILE` bytes that differs from the fixture's.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.records.kept.gitutil import git
from evalkit.scoring.fixturefiles import skipped, walk_files

MAX_DIFF_FILE = 32 * 1024 * 1024
"""The largest file a kept diff carries (its text is about 1.25 times the file's size)."""
CHUNK = 1024 * 1024
KINDS = {stat.S_IFIFO: "fifo", stat.S_IFSOCK: "socket", stat.S_IFCHR: "device",
         stat.S_IFBLK: "device"}  # fmt: skip


@dataclass
class FolderIndex:
    """The `git update-index -z --index-info` input for a folder, and what was left out."""

    entries: list[bytes] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)

    def header(self) -> bytes:
        """One line per entry left out, for the head of the folder's diff."""
        return b"".join(f"# left out of this diff: {x}\n".encode() for x in self.left_out)


Baseline = dict[str, tuple[str, int]]
"""A fixture's files by relative path: (blob id, size)."""


def baseline_blobs(gitdir: Path, tree: str) -> Baseline:
    """Each file of a fixture's tree with its blob id and size."""
    listed = git(gitdir, f"--git-dir={gitdir}", "ls-tree", "-r", "-l", "-z", "--full-tree", tree)
    found: Baseline = {}
    for item in listed.split(b"\0"):
        if not item:
            continue
        meta, _, rel = item.partition(b"\t")
        parts = meta.split()
        size = int(parts[3]) if parts[3].isdigit() else 0
        found[os.fsdecode(rel)] = (parts[2].decode(), size)
    return found


def index_folder(folder: Path, gitdir: Path, baseline: Baseline) -> FolderIndex:
    """Every file of folder written into gitdir as a blob and listed for its index."""
    index = FolderIndex(left_out=[f"{_name(rel)} (a repository's own .git)"
                                  for rel in nested_git(folder)])  # fmt: skip
    for rel, path in walk_files(folder):
        try:
            info = os.lstat(path)
        except OSError:
            continue
        entry = _entry(rel, path, info, gitdir, baseline, index)
        if entry is not None:
            index.entries.append(entry)
    return index


def _entry(
    rel: str, path: str, info: os.stat_result, gitdir: Path, baseline: Baseline,
    index: FolderIndex,
) -> bytes | None:  # fmt: skip
    if stat.S_ISLNK(info.st_mode):
        return _line("120000", write_blob(gitdir, os.fsencode(os.readlink(path))), rel)
    if not stat.S_ISREG(info.st_mode):
        kind = KINDS.get(stat.S_IFMT(info.st_mode), "special file")
        index.left_out.append(f"{_name(rel)} (a {kind})")
        return None
    mode = "100755" if info.st_mode & stat.S_IXUSR else "100644"
    if info.st_size > MAX_DIFF_FILE:
        same = _unchanged_large(path, info.st_size, baseline.get(rel))
        if same is None:
            index.left_out.append(f"{_name(rel)} ({info.st_size} bytes, over {MAX_DIFF_FILE})")
            return None
        return _line(mode, same, rel)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(MAX_DIFF_FILE + 1)
    except OSError as exc:
        index.left_out.append(f"{_name(rel)} (unreadable: {type(exc).__name__})")
        return None
    return _line(mode, write_blob(gitdir, data), rel)


def _unchanged_large(path: str, size: int, before: tuple[str, int] | None) -> str | None:
    """The fixture's blob id when a file too large to carry is the fixture's own file."""
    if before is None or before[1] != size:
        return None
    digest = hashlib.sha1(f"blob {size}\0".encode())
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(CHUNK):
                digest.update(chunk)
    except OSError:
        return None
    return before[0] if digest.hexdigest() == before[0] else None


def _line(mode: str, blob: str, rel: str) -> bytes:
    return f"{mode} {blob}\t".encode() + os.fsencode(rel) + b"\0"


def _name(rel: str) -> str:
    """A path as one line of the header, whatever its characters (a newline cannot start a
    patch there)."""
    return json.dumps(rel, ensure_ascii=True)


def write_blob(gitdir: Path, data: bytes) -> str:
    """data as a loose object of gitdir (written beside and renamed, so two reps writing one
    object at once leave it whole); its id."""
    header = f"blob {len(data)}\0".encode()
    blob = hashlib.sha1(header + data).hexdigest()
    target = gitdir / "objects" / blob[:2] / blob[2:]
    if target.exists():
        return blob
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
    with os.fdopen(fd, "wb") as handle:
        handle.write(zlib.compress(header + data, 1))
    os.replace(temp, target)
    return blob


def nested_git(folder: Path) -> list[str]:
    """Every `.git` below folder's top, a folder or a file (a submodule's), by relative path;
    links are not followed, and nothing the fixture rule skips is entered."""
    found: list[str] = []
    for here, folders, files in os.walk(folder):
        rel = Path(here).relative_to(folder).as_posix()
        prefix = "" if rel == "." else rel + "/"
        if prefix:
            found += [prefix + n for n in [*folders, *files] if n == ".git"]
        folders[:] = [n for n in folders if not skipped(n) and not os.path.islink(Path(here, n))]
    return sorted(found)
