"""Scripts of reference behaviour: placeholders expanded once a sandbox exists."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalkit.models import Script
from evalkit.run.sandbox import expand


def _walk(value: Any, sandbox: Path, names: list[str], extra: dict[str, str]) -> Any:
    if isinstance(value, str):
        return expand(value, sandbox, names, extra)
    if isinstance(value, list):
        return [_walk(v, sandbox, names, extra) for v in value]
    if isinstance(value, dict):
        return {k: _walk(v, sandbox, names, extra) for k, v in value.items()}
    return value


def render(script: Script, sandbox: Path, names: list[str], extra: dict[str, str]) -> Script:
    data = _walk(script.model_dump(), sandbox, names, extra)
    return Script.model_validate(data)
