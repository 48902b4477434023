"""`policy:coin:p=P[:seed=S]`: a stochastic reference agent for A/A runs and their tests.

Each rep plays the checker's ideal policy with probability P and its never-acting policy
otherwise, drawn from a seed of (S, scenario, rep): the same rep is the same draw on every
run, and a grid's arms differ because their reps are numbered apart (`run.grid.variant_rep`).
So two arms of identical wording differ only by chance, as a real model's samples do.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from evalkit.errors import ConfigError

NAME = "coin:"
_FORM = re.compile(r"^coin:p=([0-9.]+)(?::seed=([0-9]+))?$")


@dataclass(frozen=True)
class Coin:
    p: float
    seed: int = 0

    @classmethod
    def parse(cls, policy: str) -> Coin | None:
        """The coin a policy name names; None for any other policy."""
        if not policy.startswith(NAME):
            return None
        match = _FORM.match(policy)
        try:
            if match is None:
                raise ValueError
            p = float(match.group(1))
            if not 0.0 <= p <= 1.0:
                raise ValueError
        except ValueError:
            raise ConfigError(
                f"policy:{policy}: expected policy:coin:p=P or policy:coin:p=P:seed=S with "
                "0 <= P <= 1"
            ) from None
        return cls(p, int(match.group(2) or 0))

    def acts(self, scenario: str, rep: int) -> bool:
        """Whether this rep plays the ideal policy (else the never-acting one)."""
        digest = hashlib.sha256(f"coin\0{self.seed}\0{scenario}\0{rep}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64 < self.p
