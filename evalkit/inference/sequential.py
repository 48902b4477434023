"""A comparison you may stop early: an anytime-valid test over paired reps.

Reps are paired within a scenario in the order they were recorded (A's k-th with B's k-th),
and the pairs are taken k by k, so adding reps only adds observations and recomputing from
the folders gives the same path. Only a discordant pair (one side PASS, the other not) says
anything: where A and B are exchangeable its sign is a fair coin, whatever the scenario.

The e-process is the likelihood ratio of the signs, mixed over a uniform prior on the
probability q that a discordant pair goes against B, over [1/2, 1] (one-sided: "B is worse")
or [0, 1] (two-sided). A mixture of likelihood ratios is a nonnegative (super)martingale under
the null, so by Ville's inequality it ever reaches 1/alpha with probability at most alpha:
look after every rep and stop whenever it is decided (Ville 1939; Ramdas, Grünwald, Vovk &
Shafer, "Game-theoretic statistics and safe anytime-valid inference", Statistical Science
38, 2023). Its anytime p is 1 / the running maximum.

With a against B and b for B of n = a + b discordant pairs, the one-sided mixture is exactly
2^(n+1) ∫_{1/2}^1 q^a (1-q)^b dq = Σ_{j<=a} C(n+1, j) / ((n+1) C(n, a)).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache


@lru_cache(maxsize=1 << 16)
def one_sided_e(against: int, towards: int) -> float:
    """The one-sided e-value after `against` discordant pairs against B and `towards` for."""
    n = against + towards
    return sum(math.comb(n + 1, j) for j in range(against + 1)) / ((n + 1) * math.comb(n, against))


def two_sided_e(against: int, towards: int) -> float:
    """Both one-sided e-processes averaged: the uniform prior on q over [0, 1]."""
    return (one_sided_e(against, towards) + one_sided_e(towards, against)) / 2


def path(signs: Sequence[int], two_sided: bool = False) -> list[float]:
    """The e-process after each discordant pair (+1 against B, -1 for B)."""
    against = towards = 0
    found = []
    for sign in signs:
        if sign > 0:
            against += 1
        elif sign < 0:
            towards += 1
        else:
            continue
        found.append((two_sided_e if two_sided else one_sided_e)(against, towards))
    return found


def anytime_p(signs: Sequence[int], two_sided: bool = False) -> float:
    """1 / the running maximum of the e-process: valid at any look, however chosen."""
    return min(1.0, 1.0 / max([1.0, *path(signs, two_sided)]))


def pairs_to_decide(level: float) -> int:
    """The fewest discordant pairs, all against B, whose e-value reaches 1 / level."""
    n = 1
    while one_sided_e(n, 0) < 1.0 / level:
        n += 1
    return n


def paired_signs(a: Sequence[Sequence[int]], b: Sequence[Sequence[int]]) -> list[int]:
    """Per scenario A's and B's outcomes (1 PASS) in recorded order, as the signs of the
    pairs taken k by k: +1 where A passed and B did not, -1 the reverse, 0 concordant."""
    signs = []
    for k in range(max((min(len(x), len(y)) for x, y in zip(a, b, strict=True)), default=0)):
        for x, y in zip(a, b, strict=True):
            if k < len(x) and k < len(y):
                signs.append(x[k] - y[k])
    return signs
