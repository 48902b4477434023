"""The hostile tests that drive the real CLI share the end-to-end tests' fixtures, and the
confinement backends each forgery runs under: bubblewrap (the Linux default) in `make test`,
srt, Docker and Podman in `make calibrate-suites`."""

from __future__ import annotations

import os

import pytest

from tests.e2e.conftest import claude_cli, evalkit_bin, kit, new_kit  # noqa: F401

OTHER_BACKENDS = ("srt", "docker", "podman")


def forgery_cases(agents: tuple[str, ...] = ("claude", "codex", "gemini")) -> list[object]:
    """(agent, backend) pairs: every agent under bubblewrap, and the first agent named under
    each other backend; all but Claude Code's under bubblewrap are slow."""
    cases = [
        pytest.param(agent, "bwrap", id=f"{agent}-bwrap",
                     marks=() if agent == "claude" else pytest.mark.slow)
        for agent in agents
    ]  # fmt: skip
    cases += [
        pytest.param(agents[0], name, id=f"{agents[0]}-{name}", marks=pytest.mark.slow)
        for name in OTHER_BACKENDS
    ]
    return cases


def confined(name: str) -> tuple[str, ...]:
    """The options that confine a rep with backend `name`; skips where this machine cannot
    confine with it, but fails under CI=true, which installs and starts every backend."""
    from evalkit.run.backends import backend

    missing = backend(name).unavailable()
    if missing is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(missing)
        pytest.skip(missing)
    return ("--confine", name)
