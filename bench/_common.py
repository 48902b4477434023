"""What every benchmark shares: the repository, the evalkit command, and a throwaway world."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EVALKIT = Path(sys.executable).parent / "evalkit"


def isolate(base: Path) -> None:
    """This process and every child: a throwaway HOME, scratch, real-vault stand-in and TMPDIR."""
    for name in ("home", "scratch", "real-vault", "tmp"):
        (base / name).mkdir(parents=True, exist_ok=True)
    os.environ.update(
        HOME=str(base / "home"),
        EVALKIT_SCRATCH=str(base / "scratch"),
        EVALKIT_REAL_VAULT=str(base / "real-vault"),
        TMPDIR=str(base / "tmp"),
    )
    for key in [k for k in os.environ if k.startswith(("ANTHROPIC_", "EVALKIT_SUITE"))]:
        del os.environ[key]
    tempfile.tempdir = None
