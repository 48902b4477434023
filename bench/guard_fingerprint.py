"""What watching a guarded real-world path costs per rep: a 10,000-note vault fingerprinted
before and after, with a few notes changed in between (only those are hashed).

Prints the seconds per rep (before + after + compare) beside the goal; not a test.

Usage: .venv/bin/python bench/guard_fingerprint.py [--notes 10000] [--reps 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from evalkit.scoring.guard import Watch

GOAL = 0.2


def make_vault(root: Path, notes: int) -> None:
    body = "---\ntitle: a note\ntags: [type/howto]\n---\n\n" + "A line of a note.\n" * 40
    for number in range(notes):
        folder = root / f"area-{number % 20:02d}" / f"topic-{number % 200:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"note-{number:05d}.md").write_text(body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-guard-") as tmp:
        root = Path(tmp) / "vault"
        make_vault(root, args.notes)
        wall, cpu = [], []
        for rep in range(args.reps):
            began, began_cpu = time.perf_counter(), time.process_time()
            watch = Watch([root])
            paused, paused_cpu = time.perf_counter(), time.process_time()
            for number in range(3):  # the rep itself: a few notes change
                (root / f"new-{rep}-{number}.md").write_text("written during the rep\n")
            resumed, resumed_cpu = time.perf_counter(), time.process_time()
            record = watch.finish()
            ended, ended_cpu = time.perf_counter(), time.process_time()
            wall.append((paused - began) + (ended - resumed))
            cpu.append((paused_cpu - began_cpu) + (ended_cpu - resumed_cpu))
            assert len(record.changes()) == 3, record.changes()
        print(f"vault of {args.notes} notes, {args.reps} reps")
        print(
            f"fingerprint before + after + compare, per rep: wall median "
            f"{statistics.median(wall):.3f} s (min {min(wall):.3f}), CPU median "
            f"{statistics.median(cpu):.3f} s (goal: well under {GOAL} s)"
        )
        print(f"ratio of median CPU to goal: {statistics.median(cpu) / GOAL:.2f}; "
              f"of min wall: {min(wall) / GOAL:.2f}")


if __name__ == "__main__":
    main()
