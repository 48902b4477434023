"""Execute-only copies of the programs a rep's CLI runs as, bound over them in its sandbox.

The kernel lets a process read or write another's memory through `/proc/<pid>/mem` (and
open its files through `/proc/<pid>/fd`) when both run as the same user and the target is
"dumpable". Inside a rep every process runs as the one world user, so the agent's tool
calls could rewrite what its CLI is about to write to evalkit. A process started from a file
its user may not read is not dumpable (`execve` clears the flag), and the sandbox drops
every capability that would override that. So each native executable the CLI runs from (its
own file, or the interpreter a script CLI names, and the native programs in its install
folder) is copied once, with mode 0111, and the copy is bound over the original inside the
sandbox: the same path, the same bytes, nothing the agent can read or attach to.

The copies are kept per source file (its device, inode, size and change time) under
/var/tmp (else the temporary folder), in a folder only this user may enter; one is made by
copying to a temporary name and renaming, so concurrent runs share it, and a copy whose
source is gone or changed is removed when a new one is made.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import time
from functools import lru_cache
from pathlib import Path

ELF = b"\x7fELF"
MODE = 0o111
SOURCE = ".source"
FRESH_SECONDS = 600


def _native(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(4) == ELF
    except OSError:
        return False


def _interpreter(script: Path, path: str) -> Path | None:
    """The program a `#!` line starts (through `env`, looked up on `path`), resolved."""
    try:
        with script.open("rb") as handle:
            line = handle.readline(256)
    except OSError:
        return None
    if not line.startswith(b"#!"):
        return None
    words = line[2:].decode("utf-8", "replace").split()
    if not words:
        return None
    if Path(words[0]).name == "env":
        words = [w for w in words[1:] if not w.startswith("-")]
        found = shutil.which(words[0], path=path) if words else None
        return Path(found).resolve() if found else None
    return Path(words[0]).resolve()


@lru_cache(maxsize=16)
def _install_natives(install: Path) -> tuple[Path, ...]:
    """The native executables in a CLI's npm install folder (a vendored binary a launcher
    starts, its helpers), shared libraries left out; none for a CLI that is no npm install
    (one in a system folder is its own file alone, never the folder's every program)."""
    if not (install / "node_modules").is_dir():
        return ()
    found = []
    for folder, _, names in os.walk(install):
        for name in names:
            file = Path(folder) / name
            try:
                st = file.lstat()
            except OSError:
                continue
            library = ".so" in name
            if stat.S_ISREG(st.st_mode) and st.st_mode & 0o111 and not library and _native(file):
                found.append(file)
    return tuple(sorted(found))


def started_as(cli: Path, path: str) -> tuple[Path, list[str]] | None:
    """(the native program the CLI's process starts as, the words its argv begins with in
    place of the CLI's own path): the CLI itself, or the interpreter its `#!` line names with
    no option (as `env` starts it); None for any other start, which a launcher cannot make
    from a copy without changing what the CLI is given."""
    real = cli.resolve()
    if _native(real):
        return real, [str(real)]
    try:
        with real.open("rb") as handle:
            words = handle.readline(256)[2:].decode("utf-8", "replace").split()
    except OSError:
        return None
    named = words[1:] if words and Path(words[0]).name == "env" else words
    interpreter = _interpreter(real, path)
    if len(named) != 1 or interpreter is None or not _native(interpreter):
        return None
    return interpreter, [named[0], str(real)]


def programs(cli: Path, install: Path, path: str) -> list[Path]:
    """Every native executable a rep's CLI process tree runs from."""
    real = cli.resolve()
    chosen = [real] if _native(real) else []
    interpreter = None if chosen else _interpreter(real, path)
    if interpreter is not None and _native(interpreter):
        chosen.append(interpreter)
    return sorted({*chosen, *_install_natives(install)})


def _store() -> Path:
    """This user's folder of copies, refused when it is a link or another user's."""
    shared = Path("/var/tmp")  # one machine-wide place, whatever TMPDIR a run is given
    base = shared if os.access(shared, os.W_OK | os.X_OK) else Path(tempfile.gettempdir())
    here = base / f".x-{os.getuid()}"
    here.mkdir(mode=0o700, exist_ok=True)
    st = here.lstat()
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise OSError(f"{here} is not a private folder of this user")
    return here


def _key(program: Path) -> str:
    st = program.stat()
    return f"{st.st_dev:x}-{st.st_ino:x}-{st.st_size:x}-{st.st_ctime_ns:x}"


def _prune(store: Path) -> None:
    """Remove the copies whose source is gone or has changed since (an upgraded CLI)."""
    for folder in store.iterdir():
        try:
            if time.time() - folder.lstat().st_mtime < FRESH_SECONDS:
                continue  # another run may be making it now
            source = Path((folder / SOURCE).read_text(encoding="utf-8"))
            stale = _key(source) != folder.name
        except (OSError, ValueError):
            stale = True
        if stale:
            shutil.rmtree(folder, ignore_errors=True)


def copy_of(program: Path) -> Path:
    """The execute-only copy of `program`, made once (the stale ones removed then)."""
    key = _key(program)
    store = _store()
    folder = store / key
    copy = folder / program.name
    if copy.is_file() and copy.stat().st_size == program.stat().st_size:
        return copy
    _prune(store)
    folder.mkdir(mode=0o700, exist_ok=True)
    (folder / SOURCE).write_text(str(program), encoding="utf-8")
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=".part-")
    try:
        with os.fdopen(fd, "wb") as out, program.open("rb") as source:
            shutil.copyfileobj(source, out, 1 << 20)
        os.chmod(temporary, MODE)
        os.replace(temporary, copy)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return copy


def binds(cli: Path, install: Path, path: str) -> list[tuple[str, str]]:
    """(copy, program) for each program the CLI runs from, to bind read-only over it."""
    return [(str(copy_of(p)), str(p)) for p in programs(cli, install, path)]
