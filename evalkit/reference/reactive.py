"""Reactive script text: what a scripted step says may quote what the real tools returned.

A reference policy such as "cite whatever the lookup found" can then only pass when the
lookup really found the right thing. The scripted server and the fabricated runs fill
texts through this one function, from the latest tool result of the conversation.
"""

from __future__ import annotations

import re
from typing import Any

from evalkit.models import Quote

PLACEHOLDER = "{quote}"


def fill(text: str, quote: Quote | None, latest: str) -> str:
    """text with {quote} replaced by the first match in latest, or quote.fallback."""
    if quote is None:
        return text
    found = re.search(quote.pattern, latest)
    if found is None:
        return quote.fallback
    value = found.group(1) if found.re.groups else found.group(0)
    return text.replace(PLACEHOLDER, value or "")


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(c.get("text", ""))
            for c in content
            if isinstance(c, dict) and c.get("type") == "text"
        )
    return ""


def latest_tool_result(messages: Any) -> str:
    """The text of the last tool_result block in a Messages API conversation ('' if none)."""
    if not isinstance(messages, list):
        return ""
    for message in reversed(messages):
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        results = (
            [c for c in content if isinstance(c, dict) and c.get("type") == "tool_result"]
            if isinstance(content, list)
            else []
        )
        if results:
            return _content_text(results[-1].get("content"))
    return ""
