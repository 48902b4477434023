"""The checker registry: suites pick a checker by name in their config.

Every checker, built-in or installed from outside, is found the same way: an entry
point in the ``evalkit.checkers`` group whose name is the checker's name and whose
value is its class. Its reference behaviour is the ``CheckerReference`` subclass in
the ``reference`` module beside the checker's module.
"""

from __future__ import annotations

import importlib
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING

from evalkit.errors import ConfigError
from evalkit.scoring.checker import Checker

if TYPE_CHECKING:
    from evalkit.checkers.behaviour import CheckerReference

GROUP = "evalkit.checkers"


def _entry_points() -> dict[str, EntryPoint]:
    found: dict[str, EntryPoint] = {}
    for ep in entry_points(group=GROUP):
        found.setdefault(ep.name, ep)
    return found


def checker_class(name: str, where: str = "evalkit.yaml") -> type[Checker]:
    """The class registered under name; `where` is the file that asked, for the error."""
    points = _entry_points()
    if name not in points:
        known = ", ".join(sorted(points)) or "none"
        raise ConfigError(f"{where}: checker.name: unknown checker '{name}' (known: {known})")
    try:
        cls = points[name].load()
    except Exception as exc:  # an outside package that fails to import is a config problem
        raise ConfigError(
            f"{where}: checker.name: '{name}' ({points[name].value}) does not load: "
            f"{type(exc).__name__}: {exc}"
        ) from None
    if not (isinstance(cls, type) and issubclass(cls, Checker)) or cls.name != name:
        raise ConfigError(
            f"{where}: checker.name: entry point '{name}' ({points[name].value}) is not a "
            f"Checker subclass named '{name}'"
        )
    return cls


def names() -> list[str]:
    return sorted(_entry_points())


def reference_for(checker: Checker) -> CheckerReference[Checker]:
    """The reference behaviour kept beside a checker, from its package's ``reference``."""
    from evalkit.checkers.behaviour import CheckerReference

    module_name = type(checker).__module__
    package = module_name.rpartition(".")[0]
    target = f"{package}.reference" if package else f"{module_name}_reference"
    try:
        module = importlib.import_module(target)
    except ModuleNotFoundError as exc:
        raise ConfigError(f"checker {checker.name}: no reference module {target} ({exc})") from None
    for value in vars(module).values():
        if (
            isinstance(value, type)
            and issubclass(value, CheckerReference)
            and getattr(value, "checker_type", None) is type(checker)
        ):
            return value(checker)
    raise ConfigError(f"checker {checker.name}: {target} defines no CheckerReference for it")
