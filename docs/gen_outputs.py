"""Regenerate the outputs the guide's walk-through pages show, by running their commands.

Each ```bash block of a walk-through page is a step. The pages run in order, each starting
in the same new empty folder, on the scripted model (`policy:*`), each block in bash with
`set -euo pipefail` from the folder the previous block ended in. The ```text block right
after a step holds its output (stdout and stderr as written; none for a silent step); this
script rewrites those blocks, so no output on a page is pasted by hand.
`tests/e2e/test_guide_pages.py` runs the same steps and fails on any that does not exit 0.

    .venv/bin/python docs/gen_outputs.py            # rewrite the pages' outputs
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

DOCS = Path(__file__).resolve().parent
REPO = DOCS.parent
PAGES = ("quickstart.md", "wording-loop.md", "tune.md")
STEP = re.compile(r"^```bash\n(?P<command>.*?)^```\n(?:\n```text\n(?P<output>.*?)^```\n)?",
                  re.MULTILINE | re.DOTALL)  # fmt: skip
SHOWN_ROOT = "~/guide"


@dataclass
class Step:
    page: str
    command: str
    output: str
    returncode: int


def commands(page: str) -> list[str]:
    text = (DOCS / page).read_text(encoding="utf-8")
    return [m.group("command") for m in STEP.finditer(text)]


def environment(base: Path, claude: str) -> dict[str, str]:
    """A clean environment under `base`: its own home, scratch and temp folders, no key."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EVALKIT_", "ANTHROPIC_"))}
    for name in ("home", "scratch", "tmp"):
        (base / name).mkdir(exist_ok=True)
    env.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        HOME=str(base / "home"),
        EVALKIT_SCRATCH=str(base / "scratch"),
        EVALKIT_CLAUDE=claude,
        TMPDIR=str(base / "tmp"),
        COLUMNS="100",
        NO_COLOR="1",
        TERM="dumb",
    )
    return env


def run_steps(base: Path, claude: str, timeout: float = 600) -> list[Step]:
    """Every step of every page in order, in `base/guide`; stops at the first that fails."""
    work = base / "guide"
    work.mkdir()
    env = environment(base, claude)
    where = base / "cwd"
    done: list[Step] = []
    for page in PAGES:
        where.write_text(str(work))  # each page starts in the same folder
        for command in commands(page):
            script = f'set -euo pipefail\ncd "$(cat {where})"\n{command}\npwd > {where}\n'
            ran = subprocess.run(["bash", "-c", script], env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True, timeout=timeout)  # fmt: skip
            shown = ran.stdout.replace(str(work), SHOWN_ROOT).replace(str(base), "~")
            done.append(Step(page, command, shown, ran.returncode))
            if ran.returncode != 0:
                return done
    return done


def rewrite(page: str, outputs: list[str]) -> None:
    path = DOCS / page
    text = path.read_text(encoding="utf-8")
    given = iter(outputs)

    def fill(match: re.Match[str]) -> str:
        output = next(given).rstrip("\n")
        step = f"```bash\n{match.group('command')}```\n"
        return f"{step}\n```text\n{output}\n```\n" if output else step

    path.write_text(STEP.sub(fill, text), encoding="utf-8")


def default_claude() -> str:
    return os.environ.get("EVALKIT_CLAUDE", str(REPO / ".tools/claude/node_modules/.bin/claude"))


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="evalkit-guide-") as tmp:
        steps = run_steps(Path(tmp), default_claude())
    failed = [s for s in steps if s.returncode != 0]
    if failed:
        step = failed[0]
        print(f"{step.page}: a step exited {step.returncode}:\n{step.command}", file=sys.stderr)
        return 1
    for page in PAGES:
        rewrite(page, [s.output for s in steps if s.page == page])
        print(f"rewrote {page}: {sum(1 for s in steps if s.page == page)} output(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
