"""A rep's trace as text a `trace` condition searches: one JSON line per event.

The transcript is parsed once for scoring; the trace is rebuilt from what was parsed
(the model's texts, each tool call with its input and result, the final message), so
`verify` re-derives it from the same kept transcript and no raw line is read twice.
"""

from __future__ import annotations

from evalkit.models import Transcript
from evalkit.scoring.jstext import js_stringify, tool_use_line
from evalkit.scoring.judge import final_message


def trace_text(transcript: Transcript) -> str:
    lines = [js_stringify({"type": "text", "text": t}) for t in transcript.texts]
    lines += [tool_use_line(c.name, c.input, c.result) for c in transcript.tool_calls]
    lines.append(js_stringify({"type": "result", "result": final_message(transcript)}))
    return "\n".join(lines)
