"""What --jobs buys when the model, not the CPU, is the bottleneck.

The same grid (policy:oracle over --scenarios x --reps) runs at each --jobs count into its
own fresh workdir, with the scripted model answering every request after --latency seconds
(EVALKIT_SCRIPTED_LATENCY), as a real model would think. Prints each wall time (the whole
`evalkit grid` process), the ratio of the last to the first, and the memory a grid holds:
the peak resident memory of the evalkit process itself and, apart, of every process below it
(the CLIs, their hooks and tools), sampled every 0.1 s, divided by the reps in flight.
Throwaway HOME, scratch and real-vault stand-in.

Usage: .venv/bin/python bench/grid_jobs.py [--latency 2.0] [--jobs 1,8] [--reps 8]
       [--scenarios P1,N1]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from _common import EVALKIT, REPO, isolate

GOAL = 6.0
PAGE = os.sysconf("SC_PAGE_SIZE")


def tree_rss(root: int) -> tuple[int, int]:
    """Resident bytes of root itself, and of all its descendants, read from /proc."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            statm = (entry / "statm").read_text().split()
        except OSError:
            continue
        ppid = int(stat.rpartition(")")[2].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
        rss[int(entry.name)] = int(statm[1]) * PAGE
    below, todo = 0, list(children.get(root, []))
    while todo:
        pid = todo.pop()
        below += rss.get(pid, 0)
        todo += children.get(pid, [])
    return rss.get(root, 0), below


class Sampler:
    """Peak memory of a running evalkit process itself, and of everything it started (the
    reps' CLIs and their tools, and the git and hook processes)."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc, self.own, self.reps, self.total = proc, 0, 0, 0
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        while self.proc.poll() is None:
            own, below = tree_rss(self.proc.pid)
            self.own, self.reps = max(self.own, own), max(self.reps, below)
            self.total = max(self.total, own + below)
            time.sleep(0.1)


def cpu_seconds() -> float:
    """User + system CPU of every finished child (and the children they waited for)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_grid(
    work: Path, scenarios: str, reps: int, jobs: int
) -> tuple[float, float, int, Sampler]:
    command = [str(EVALKIT), "--suite", str(REPO), "grid", str(work), "--scenarios", scenarios,
               "--models", "policy:oracle", "--reps", str(reps), "--jobs", str(jobs)]  # fmt: skip
    began, cpu = time.perf_counter(), cpu_seconds()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sampler = Sampler(proc)
    _, stderr = proc.communicate(timeout=3600)
    seconds, cpu = time.perf_counter() - began, cpu_seconds() - cpu
    sampler.thread.join()
    if proc.returncode != 0:
        sys.exit(f"grid --jobs {jobs} failed (exit {proc.returncode}):\n{stderr}")
    lines = (work / "results.tsv").read_text().splitlines()[1:]
    errors = sum(1 for x in lines if x.split("\t")[4] == "ERROR")
    if errors:
        sys.exit(f"grid --jobs {jobs}: {errors} ERROR row(s); the timing would mean nothing")
    return seconds, cpu, len(lines), sampler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=2.0, help="seconds per model answer")
    parser.add_argument("--jobs", default="1,8", help="comma-separated job counts to compare")
    parser.add_argument("--reps", type=int, default=8)
    parser.add_argument("--scenarios", default="P1,N1")
    args = parser.parse_args()
    counts = [int(j) for j in args.jobs.split(",")]
    times: dict[int, float] = {}
    cpus: dict[int, float] = {}
    walls: dict[int, float] = {}
    mib = 1024 * 1024
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-grid-") as tmp:
        base = Path(tmp)
        isolate(base)
        os.environ["EVALKIT_SCRIPTED_LATENCY"] = str(args.latency)
        print(f"scripted model latency {args.latency:g} s per answer, {os.cpu_count()} CPU(s)")
        for jobs in counts:
            seconds, cpu, rows, mem = timed_grid(
                base / f"jobs-{jobs}", args.scenarios, args.reps, jobs
            )
            times[jobs], cpus[jobs], walls[jobs] = seconds, cpu / rows, seconds / rows
            per_rep = mem.reps / min(jobs, rows)
            print(
                f"grid --jobs {jobs}: {rows} reps in {seconds:.1f} s ({seconds / rows:.2f} s/rep, "
                f"{cpu / rows:.2f} CPU s/rep); "
                f"peak memory {mem.total / mib:.0f} MiB: evalkit itself {mem.own / mib:.0f} MiB, "
                f"reps {mem.reps / mib:.0f} MiB = {per_rep / mib:.0f} MiB per rep in flight"
            )
    first, last = counts[0], counts[-1]
    ratio = times[first] / times[last]
    print(
        f"speed-up --jobs {last} over --jobs {first}: {ratio:.2f}x on {os.cpu_count()} CPU(s) "
        f"(goal >= {GOAL:g}x at 2 s latency)"
    )
    cores = os.cpu_count() or 1
    bound = cores * walls[first] / cpus[first]
    print(
        f"CPU bound: a rep takes {walls[first]:.2f} s alone and {cpus[first]:.2f} CPU s, so "
        f"{cores} CPU(s) keep at most ~{bound:.1f} reps busy at this latency, whatever --jobs"
    )


if __name__ == "__main__":
    main()
