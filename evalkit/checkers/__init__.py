"""The checker registry: suites pick a checker by name in their config."""

from __future__ import annotations

from evalkit.errors import ConfigError
from evalkit.scoring.checker import Checker

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
    from evalkit.checkers.adr_discrimination import scoring as _adr  # noqa: F401
    from evalkit.checkers.rules import scoring as _rules  # noqa: F401
    from evalkit.checkers.vault_write import scoring as _vault  # noqa: F401
