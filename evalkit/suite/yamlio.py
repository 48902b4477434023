"""Reading the YAML people keep, with errors that name the file, the field and the line.

The round-trip parser (ruamel) is imported on first use: a scenario's front matter usually
goes through libyaml alone, and a command that reads nothing else never pays for it.
No file evalkit reads holds an anchor or alias: a few lines of aliases expand into
gigabytes, so any is refused before the text is loaded.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from evalkit.errors import ConfigError

if TYPE_CHECKING:
    from ruamel.yaml import YAML

M = TypeVar("M", bound=BaseModel)
LIBYAML = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def refuse_anchors(text: str, source: Path, first_line: int = 1) -> None:
    """Raise a ConfigError naming the line of the first anchor or alias in YAML text. The
    parser's events are read one by one and nothing is built, so no alias is ever expanded;
    text that does not parse is left to the loader to name."""
    if "&" not in text and "*" not in text:
        return
    events = yaml.parse(text, Loader=LIBYAML)
    try:
        for event in events:
            alias = isinstance(event, yaml.AliasEvent)
            if alias or getattr(event, "anchor", None) is not None:
                mark = event.start_mark
                line = (mark.line if mark is not None else 0) + first_line
                what = "an alias" if alias else "an anchor"
                raise ConfigError(
                    f"{source}:{line}: YAML anchors and aliases are not read ({what} here); "
                    "write the value out"
                )
    except yaml.YAMLError:
        return


def _yaml() -> YAML:
    from ruamel.yaml import YAML

    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.width = 4096
    return y


def load_text(text: str, source: Path, first_line: int = 1) -> Any:
    """Parse YAML text; a syntax error becomes a ConfigError naming source and line."""
    from ruamel.yaml.error import YAMLError

    refuse_anchors(text, source, first_line)
    yaml = _yaml()
    try:
        return yaml.load(io.StringIO(text))
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + first_line}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{source}{where}: YAML does not parse: {problem}") from None


def _line_of(data: Any, loc: tuple[int | str, ...]) -> int | None:
    node = data
    line: int | None = None
    for key in loc:
        lc = getattr(node, "lc", None)
        try:
            if lc is not None and isinstance(key, str) and key in node:
                line = lc.key(key)[0]
            elif lc is not None and isinstance(key, int) and key < len(node):
                line = lc.item(key)[0]
            node = node[key]
        except (KeyError, IndexError, TypeError, AttributeError):
            break
    return line


def validate(model: type[M], data: Any, source: Path, first_line: int = 1, prefix: str = "") -> M:
    """Validate data against model; errors read `file:line: field: message`, one per line."""
    try:
        return model.model_validate(data if data is not None else {})
    except ValidationError as exc:
        raise ConfigError(describe(exc, data, source, first_line, prefix)) from None


def describe(
    exc: ValidationError, data: Any, source: Path, first_line: int = 1, prefix: str = ""
) -> str:
    lines = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        field = ".".join(str(p) for p in (prefix.split(".") if prefix else []) + list(loc))
        line = _line_of(data, loc)
        where = f":{line + first_line}" if line is not None else ""
        message = err["msg"]
        if err["type"] == "extra_forbidden":
            message = "unknown field"
        lines.append(f"{source}{where}: {field or '(top level)'}: {message}")
    return "\n".join(lines)


def load_file(model: type[M], path: Path) -> M:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"{path}:{line}: not UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})"
        ) from None
    return validate(model, load_text(text, path), path)


def dump(data: Any) -> str:
    out = io.StringIO()
    _yaml().dump(data, out)
    return out.getvalue()


def quick_load_file(model: type[M], path: Path) -> M:
    """load_file through libyaml's safe loader, many times quicker than a round-trip parse;
    whatever it cannot take, load_file reads again to name the line. libyaml reads YAML 1.1
    (`yes` is a boolean), so only a reader of fields where 1.1 and 1.2 agree may use it."""
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return load_file(model, path)
    refuse_anchors(text, path)
    try:
        return model.model_validate(yaml.load(text, Loader=LIBYAML))
    except (yaml.YAMLError, ValidationError):
        return load_file(model, path)
