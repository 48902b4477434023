"""Type-I error of `gate --sequential` over repeated looks, against the fixed test looked at
after every pair.

A/A data (the null: both arms alike within each scenario): G scenarios, each with a pass rate
drawn once per setting, reps paired k by k in recorded order. After every pair the
sequential test (the one-sided mixture e-process, evalkit/inference/sequential.py) and the
fixed exact sign test of the discordant pairs so far are each asked; a draw counts as a false
positive when either has ever rejected by the last look. A pair is drawn whole: discordant
against B with probability p(1 - p), for B with the same, else concordant, which is exactly
two independent reps of rate p. Prints each setting's rates with the Monte Carlo SE and
PASS where the sequential rate is at most alpha + 2 SE.

Usage: .venv/bin/python bench/sequential_level.py [--draws 2000]
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evalkit.inference.sequential import one_sided_e  # noqa: E402

SETTINGS = ((6, 10), (10, 20), (12, 40))
"""(scenarios, reps a side): up to 60, 200 and 480 looks."""
ALPHA = 0.05


def _sign_test_limits(pairs: int, alpha: float) -> list[int]:
    """For each n discordant pairs, the fewest against B at which the exact one-sided sign
    test rejects (n + 1 where it cannot)."""
    limits = []
    for n in range(pairs + 1):
        tail, k = 0, n + 1
        while k > 0 and (tail + math.comb(n, k - 1)) / 2**n <= alpha:
            k -= 1
            tail += math.comb(n, k)
        limits.append(k)
    return limits


def simulate(
    scenarios: int, reps: int, draws: int, seed: int, alpha: float = ALPHA
) -> tuple[float, float]:
    """(sequential, fixed-at-every-look) rejection rates under the null."""
    rng = random.Random(seed)
    rates = [rng.uniform(0.1, 0.9) for _ in range(scenarios)]
    split = [p * (1 - p) for p in rates]
    limits = _sign_test_limits(scenarios * reps, alpha)
    bar = 1 / alpha
    sequential = fixed = 0
    for _ in range(draws):
        against = towards = 0
        seq_hit = fixed_hit = False
        for _k in range(reps):
            for q in split:
                u = rng.random()
                if u >= 2 * q:
                    continue
                if u < q:
                    against += 1
                else:
                    towards += 1
                if not seq_hit and one_sided_e(against, towards) >= bar:
                    seq_hit = True
                if not fixed_hit and against >= limits[against + towards]:
                    fixed_hit = True
        sequential += seq_hit
        fixed += fixed_hit
    return sequential / draws, fixed / draws


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--draws", type=int, default=2000)
    args = parser.parse_args()
    misses = 0
    print(f"alpha {ALPHA}, {args.draws} draws a setting, a look after every paired rep")
    print("G   reps  looks  sequential  fixed, looked at each step  MC SE   sequential")
    for g, reps in SETTINGS:
        seq, fix = simulate(g, reps, args.draws, seed=g * 1009 + reps)
        se = math.sqrt(ALPHA * (1 - ALPHA) / args.draws)
        ok = seq <= ALPHA + 2 * se
        misses += not ok
        print(f"{g:<3} {reps:<5} {g * reps:<6} {seq:<11.4f} {fix:<27.4f} {se:.4f}  "
              f"{'PASS' if ok else 'MISS'}")  # fmt: skip
    return 1 if misses else 0


if __name__ == "__main__":
    raise SystemExit(main())
