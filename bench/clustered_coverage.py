"""Coverage of the scenario-clustered 95 % interval over the issue's whole grid.

Beta-binomial data: each scenario's rate drawn from a beta with mean p and intra-scenario
correlation ICC, then m reps. G in {3, 6, 12}, m in {3, 10}, p in {0.5, 0.8, 0.95},
ICC in {0, 0.3, 0.8}, 2,000 draws a setting (seeded). Prints each setting's coverage beside
the rep-level Wilson interval's, and the floor (0.93 at G >= 6, 0.90 at G = 3) with PASS or
MISS. The unit tests run the same grid at 300 draws a setting.

Usage: .venv/bin/python bench/clustered_coverage.py [--trials 2000]
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evalkit.stats import clustered_interval, wilson  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=2000)
    args = parser.parse_args()
    misses = 0
    print("G   m   p     ICC  clustered  reps-as-independent  floor")
    for g in (3, 6, 12):
        for m in (3, 10):
            for p in (0.5, 0.8, 0.95):
                for icc in (0.0, 0.3, 0.8):
                    rng = random.Random(
                        g * 1_000_003 + m * 10_007 + int(p * 100) * 101 + int(icc * 10)
                    )
                    covered = naive = 0
                    for _ in range(args.trials):
                        cells = []
                        for _ in range(g):
                            rate = p
                            if icc:
                                a, b = p * (1 - icc) / icc, (1 - p) * (1 - icc) / icc
                                rate = rng.betavariate(a, b)
                            cells.append((sum(rng.random() < rate for _ in range(m)), m))
                        found = clustered_interval(cells)
                        assert found is not None
                        covered += found.low <= p <= found.high
                        rep_level = wilson(sum(k for k, _ in cells), g * m)
                        assert rep_level is not None
                        naive += rep_level[0] <= p <= rep_level[1]
                    share = covered / args.trials
                    floor = 0.93 if g >= 6 else 0.90
                    verdict = "PASS" if share >= floor else "MISS"
                    misses += share < floor
                    print(
                        f"{g:<3} {m:<3} {p:<5} {icc:<4} {share:.3f}      "
                        f"{naive / args.trials:.3f}                {floor} {verdict}"
                    )
    print(f"{misses} setting(s) below the floor")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
