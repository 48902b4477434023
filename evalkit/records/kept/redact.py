"""Removing secret-shaped values before anything is kept as evidence: every agent's keys
(Anthropic's, OpenAI's, Google's API keys and OAuth tokens), cloud keys, JWTs, private keys,
and any value given after a secret's name."""

from __future__ import annotations

import json
import re
from typing import Any

MARK = "[REDACTED]"
_WHOLE = [
    re.compile(
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?-----END [A-Z0-9 ]*PRIVATE KEY-----", re.DOTALL
    ),
    re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}"),
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"),  # a Google API key (Gemini's)
    re.compile(r"\bya29\.[0-9A-Za-z_\-.]{16,}"),  # a Google OAuth access token
    re.compile(r"(?<![\w/])1//0[0-9A-Za-z_\-]{20,}"),  # a Google OAuth refresh token
    re.compile(r"\beyJ[A-Za-z0-9_\-]{6,}\.[A-Za-z0-9_\-]{6,}\.[A-Za-z0-9_\-]{6,}"),
]
_AFTER = [
    re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/\-]{8,}=*"),
    re.compile(
        r"(?i)(\b(?:api[_-]?key|auth[_-]?token|access[_-]?token|secret[_-]?access[_-]?key|"
        r"client[_-]?secret|password)[\"']?\s*[:=]\s*[\"']?)[^\s\"'\\,;}]{8,}"
    ),
]


def redact(text: str) -> str:
    for pattern in _WHOLE:
        text = pattern.sub(MARK, text)
    for pattern in _AFTER:
        text = pattern.sub(lambda m: m.group(1) + MARK, text)
    return text


def redact_value(value: Any) -> Any:
    """A parsed JSON value with every string in it redacted, as `redact_jsonl` keeps it."""
    return _walk(value)


def _walk(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [_walk(v) for v in value]
    if isinstance(value, dict):
        return {k: _walk(v) for k, v in value.items()}
    return value


def redact_jsonl(text: str) -> str:
    """Redact inside each JSON line's values, so every line that parsed still parses."""
    out = []
    for line in text.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            out.append(redact(line))
            continue
        out.append(json.dumps(_walk(event), ensure_ascii=False))
    return "\n".join(out) + ("\n" if out else "")
