"""`policy:regress-from:<version>[:p=P]`: a planted regression between CLI versions.

The CLI names its version in the `User-Agent` of each request, so the scripted server can play
the checker's ideal policy to a version before `<version>` and its never-acting policy from it
on: a step change that a bisect over real CLIs must find. With `p=P` (0.5 < P <= 1) each rep
plays what its version calls for with probability P and the other behaviour otherwise, drawn
from a seed of (scenario, rep, version), so the same rep is the same draw on every run.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from evalkit.errors import ConfigError, EvalkitError
from evalkit.records.rows.versions import semver_key

NAME = "regress-from:"
_FORM = re.compile(r"^regress-from:([^:]+)(?::p=([0-9.]+))?$")
_USER_AGENT = re.compile(r"claude-cli/(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)")


def version_in_user_agent(user_agent: str) -> str:
    """The CLI version a request's User-Agent names ('' when it names none)."""
    found = _USER_AGENT.search(user_agent or "")
    return found.group(1) if found else ""


@dataclass(frozen=True)
class Regression:
    first_bad: str
    p: float = 1.0

    @classmethod
    def parse(cls, policy: str) -> Regression | None:
        """The regression a policy name plants; None for any other policy."""
        if not policy.startswith(NAME):
            return None
        match = _FORM.match(policy)
        try:
            p = float(match.group(2)) if match and match.group(2) else 1.0
            if match is None or not 0.5 < p <= 1.0:
                raise ValueError
            semver_key(match.group(1))
        except (ValueError, EvalkitError):
            raise ConfigError(
                f"policy:{policy}: expected policy:regress-from:VERSION or "
                "policy:regress-from:VERSION:p=P with 0.5 < P <= 1"
            ) from None
        return cls(match.group(1), p)

    def is_bad(self, version: str) -> bool:
        """Whether a version is at or after the first bad one (an unnamed one is good)."""
        try:
            return semver_key(version) >= semver_key(self.first_bad)
        except EvalkitError:
            return False

    def plays_bad(self, version: str, scenario: str, rep: int) -> bool:
        """Whether this rep, served by this version, plays the never-acting behaviour."""
        bad = self.is_bad(version)
        if self.p >= 1.0:
            return bad
        digest = hashlib.sha256(f"{scenario}\0{rep}\0{version}".encode()).digest()
        draw = int.from_bytes(digest[:8], "big") / 2**64
        return bad if draw < self.p else not bad
