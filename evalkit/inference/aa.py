"""An A/A run read back: how often identical arms disagree, and what the gate makes of chance.

Both arms ran the same wording, so every difference between them is noise. Each scenario's
reps of both arms are pooled and re-split at random into two arms of the same sizes, R times
from a seed; the gate's own family of one-sided sign-flip tests (Holm) is run on each
re-split, and the share that reject is the gate's empirical false-positive rate on this
suite. The 95th percentile of the absolute mean per-scenario difference over the re-splits
is the smallest difference the A/A run says is worth acting on.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from evalkit import stats

Arms = tuple[Sequence[int], Sequence[int]]
"""One scenario: arm A's outcomes and arm B's (1 a PASS, 0 anything else), in rep order."""
Family = dict[str, Arms]
"""One of the gate's tests (a model and polarity): scenario -> its arms."""


def flips(a: Sequence[int], b: Sequence[int]) -> tuple[int, int]:
    """Of the reps paired in order (A's k-th with B's k-th), how many differ, of how many."""
    pairs = list(zip(a, b, strict=False))
    return sum(1 for x, y in pairs if x != y), len(pairs)


@lru_cache(maxsize=65536)
def _lower_count(magnitudes: tuple[int, ...], observed: int) -> int:
    counts = stats._sign_sums(magnitudes)
    return sum(w for total, w in counts.items() if total <= observed)


def lower_p(scaled: Sequence[int]) -> float | None:
    """`stats.sign_flip_lower_p` of integer-scaled differences, cached by their magnitudes:
    re-splits repeat the same few."""
    if not scaled:
        return None
    magnitudes = tuple(sorted(abs(v) for v in scaled))
    return _lower_count(magnitudes, sum(scaled)) / float(2 ** len(scaled))


@dataclass(frozen=True)
class Resplit:
    draws: int
    seed: int
    rejections: int
    p95: list[float]
    """Per family: the 95th percentile of |mean per-scenario difference| over the re-splits."""

    @property
    def false_positive_rate(self) -> float:
        return self.rejections / self.draws

    @property
    def standard_error(self) -> float:
        rate = self.false_positive_rate
        return math.sqrt(rate * (1 - rate) / self.draws)


def _split(family: Family, rng: random.Random, scale: int) -> tuple[list[int], float]:
    """One re-split of a family: each scenario's scaled B' - A', and the mean difference."""
    scaled, total = [], 0.0
    for a, b in family.values():
        pool = [*a, *b]
        rng.shuffle(pool)
        first, second = sum(pool[: len(a)]), sum(pool[len(a) :])
        scaled.append(second * (scale // len(b)) - first * (scale // len(a)))
        total += second / len(b) - first / len(a)
    return scaled, total / len(family) if family else 0.0


def resplit(families: Sequence[Family], alpha: float, draws: int = 1000, seed: int = 0) -> Resplit:
    """The gate's rejections over `draws` seeded re-splits, and each family's 95th percentile
    of |mean per-scenario difference|. Scenarios where an arm is empty are left out."""
    kept = [{s: (a, b) for s, (a, b) in f.items() if a and b} for f in families]
    scales = [math.lcm(*(n for a, b in f.values() for n in (len(a), len(b)))) for f in kept]
    rng = random.Random(seed)
    rejections = 0
    sizes: list[list[float]] = [[] for _ in kept]
    for _ in range(draws):
        p_values = []
        for index, family in enumerate(kept):
            scaled, mean = _split(family, rng, scales[index] if family else 1)
            sizes[index].append(abs(mean))
            p = lower_p(scaled)
            p_values.append(1.0 if p is None else p)
        rejections += any(stats.holm(p_values, alpha))
    return Resplit(draws, seed, rejections, [percentile(s, 0.95) for s in sizes])


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank q-th quantile (0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]
