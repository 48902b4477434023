"""The code that scores, found by location rather than by a list someone keeps.

The hashed set is the whole ``evalkit.scoring`` package plus the checker's own
package directory (for a built-in, ``evalkit/checkers/<eval>/``; for an outside
checker, the package its class lives in) and those of the checkers it is built on
(its base classes), less each package's reference parts:
a ``reference.py`` module or a ``reference/`` folder. A checker defined in a
top-level module of its own is hashed as that one file.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from evalkit.scoring.hashing import iter_files

REFERENCE_PARTS = frozenset({"reference.py", "reference"})
SCORING_PACKAGE = Path(__file__).resolve().parent


def checker_dir(cls: type) -> Path:
    """The folder (or single file) holding a checker class's scoring code."""
    module = sys.modules[cls.__module__]
    origin = Path(module.__file__ or "").resolve()
    if module.__package__:
        return origin.parent
    return origin


def checker_files(cls: type) -> list[Path]:
    """The checker's own scoring files: its package less the reference parts."""
    where = checker_dir(cls)
    if where.is_file():
        return [where]
    return [p for p in iter_files(where) if p.relative_to(where).parts[0] not in REFERENCE_PARTS]


def _checker_bases(cls: type) -> list[type]:
    """The checker classes cls is built on whose code lives outside evalkit.scoring."""
    return [
        base
        for base in cls.__mro__[1:]
        if hasattr(base, "check")
        and getattr(base, "name", None)
        and not checker_dir(base).is_relative_to(SCORING_PACKAGE)
        and checker_dir(base) != checker_dir(cls)
    ]


def scoring_files(cls: type) -> dict[str, Path]:
    """Every file whose code can change a verdict of this checker, by a stable label: the
    scoring package, the checker's own package, and the package of each checker it extends."""
    files = {
        f"scoring/{p.relative_to(SCORING_PACKAGE).as_posix()}": p
        for p in iter_files(SCORING_PACKAGE)
    }
    for prefix, owner in [("checker", cls)] + [("checker-base", b) for b in _checker_bases(cls)]:
        where = checker_dir(owner)
        base = where.parent if where.is_file() else where
        label = prefix if prefix == "checker" else f"{prefix}/{base.name}"
        for path in checker_files(owner):
            files[f"{label}/{path.relative_to(base).as_posix()}"] = path
    return files


def scoring_code_hash(cls: type) -> str:
    digest = hashlib.sha256()
    for label, path in sorted(scoring_files(cls).items()):
        body = path.read_bytes()
        digest.update(f"{label}\0{len(body)}\0".encode())
        digest.update(body)
    return "sha256:" + digest.hexdigest()
