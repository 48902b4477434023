"""A module's code as a rep holds it: its docstrings gone (and its comments with them).

Code evalkit places inside a rep (an observed script's wrapper, srt's launcher) is read by
an agent that may look at anything it can open; its docstrings are words for evalkit's
readers and would name the measurement. So it is placed as code alone, unparsed from the
module's syntax tree.
"""

from __future__ import annotations

import ast
from pathlib import Path


def bare_source(path: Path, keep_future: bool = True) -> str:
    """`path`'s code without a docstring anywhere; without its `from __future__` import
    too when the code is placed after other code, where that import may not stand."""
    module = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(module):
        body = getattr(node, "body", None)
        if isinstance(body, list) and any(_is_docstring(n) for n in body):
            # a module's, class's or function's docstring, and the ones under its names
            kept = [n for n in body if not _is_docstring(n)]
            node.body = kept or [ast.Pass()]  # type: ignore[attr-defined]
    module.body = [n for n in module.body if keep_future or not _is_future(n)]
    return ast.unparse(module) + "\n"


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _is_future(node: ast.stmt) -> bool:
    return isinstance(node, ast.ImportFrom) and node.module == "__future__"
