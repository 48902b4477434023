"""The checker registry: suites pick a checker by name in their config."""

from __future__ import annotations

from evalkit.checkers.base import Checker
from evalkit.errors import ConfigError

_REGISTRY: dict[str, type[Checker]] = {}


def register(cls: type[Checker]) -> type[Checker]:
    _REGISTRY[cls.name] = cls
    return cls


def checker_class(name: str) -> type[Checker]:
    _load_builtins()
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY)) or "none"
        raise ConfigError(f"unknown checker '{name}' (known: {known})") from None


def names() -> list[str]:
    _load_builtins()
    return sorted(_REGISTRY)


def _load_builtins() -> None:
    """Built-in checkers register through the same decorator an outside one would use."""
    from evalkit.checkers import adr_discrimination, vault_write  # noqa: F401
