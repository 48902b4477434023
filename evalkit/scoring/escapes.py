"""What a rep's agent reached outside its own rep, named by a stated rule.

A rep run with --unconfined carries the flag `unconfined`: nothing stopped it.
"""

from __future__ import annotations

from evalkit.models import Reach, Transcript

UNCONFINED = "unconfined"


def reach_flags(reach: Reach | None, transcript: Transcript) -> list[str]:
    """The flags a rep's reach puts on its row; none for a record that kept no reach."""
    if reach is None:
        return []
    return [] if reach.confined else [UNCONFINED]
