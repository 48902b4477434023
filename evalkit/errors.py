"""Errors a user can act on. The CLI maps each to an exit code and one line on stderr."""

from __future__ import annotations


class EvalkitError(Exception):
    """Base for every error evalkit raises on purpose."""

    exit_code = 2


class ConfigError(EvalkitError):
    """A suite, scenario, lock or option is wrong; the message names the file and field."""


class NotFoundError(EvalkitError):
    """A scenario, sandbox or transcript is missing."""


class PrerequisiteError(EvalkitError):
    """Something evalkit needs is not installed or not reachable."""


class RefusedError(EvalkitError):
    """evalkit will not do this, because the result could not be trusted."""
