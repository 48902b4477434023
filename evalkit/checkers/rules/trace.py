"""A rep's trace as text a `trace` condition searches: one JSON line per event.

The transcript is parsed once for scoring; the trace is rebuilt from what was parsed
(the model's texts, each tool call with its input and result, the final message), so
`verify` re-derives it from the same kept transcript and no raw line is read twice.
"""

from __future__ import annotations

import json

from evalkit.models import Transcript
from evalkit.scoring.judge import final_message


def trace_text(transcript: Transcript) -> str:
    lines = [json.dumps({"type": "text", "text": t}, ensure_ascii=False) for t in transcript.texts]
    for call in transcript.tool_calls:
        lines.append(
            json.dumps(
                {"type": "tool_use", "name": call.name, "input": call.input, "result": call.result},
                ensure_ascii=False,
                sort_keys=True,
            )
        )
    lines.append(json.dumps({"type": "result", "result": final_message(transcript)}))
    return "\n".join(lines)
