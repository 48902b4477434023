"""The macOS sandbox evalkit asks srt for, checked on any platform: srt's own
`wrapCommandWithSandboxMacOS` turns the settings evalkit writes for a rep into the Seatbelt
profile a Mac would enforce, and the profile must deny by default, read only under the
allowed folders, write only in the rep's, and reach out only to srt's proxy (the door)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from evalkit.run.backends.srt import SandboxRuntime, node, package

HELPER = Path(__file__).with_name("seatbelt_profile.mjs")
pytestmark = pytest.mark.skipif(
    SandboxRuntime().version() == "" or node() is None, reason="srt: run `make srt`"
)


def _block(profile: str, head: str) -> list[str]:
    """The subpaths of every `(head ...)` rule of the profile."""
    found: list[str] = []
    for match in re.finditer(re.escape(f"({head}") + r"\s*\n(.*?)\(with message", profile, re.S):
        found += re.findall(r'\(subpath "([^"]+)"\)', match.group(1))
    return found


def _faults(profile: str, allowed: list[str], own: list[str], forbidden: list[str]) -> list[str]:
    """What in the profile breaks the contract; empty when it holds."""
    faults = [] if "(deny default" in profile else ["not deny-by-default"]
    reads = _block(profile, "allow file-read*")
    writes = _block(profile, "allow file-write*")
    under = lambda p, roots: any(p == r or p.startswith(r.rstrip("/") + "/") for r in roots)  # noqa: E731
    faults += [f"reads {p}" for p in reads if not under(p, allowed)]
    faults += [f"writes {p}" for p in writes if not under(p, own)]
    faults += [f"suite or results readable: {p}" for p in reads if under(p, forbidden)]
    outbound = re.findall(r'network-outbound \(remote ip "([^"]+)"\)', profile)
    faults += [f"outbound {o}" for o in outbound if o not in ("localhost:3128", "localhost:1080")]
    faults += ["outbound to anywhere"] if "(allow network-outbound)" in profile else []
    return faults


def _settings(tmp_path: Path) -> tuple[dict[str, object], list[str], list[str]]:
    """The settings evalkit writes for one rep, and (the rep's folders, suite and results)."""
    scratch, suite, results = tmp_path / "scratch", tmp_path / "suite", tmp_path / "results"
    for folder in (scratch / "sandbox" / "project", suite, results):
        folder.mkdir(parents=True)
    cli = Path(__file__)
    confined = SandboxRuntime().confine(
        [str(cli)], {"PATH": "/usr/bin:/bin"}, scratch / "sandbox" / "project",
        [scratch / "sandbox"], scratch / "home", cli, [suite, results],
    )  # fmt: skip
    confined.stop()
    settings = json.loads((scratch / "srt-settings.json").read_text())
    return settings, confined.reach.writable, [str(suite), str(results)]


def _profile(settings: dict[str, object]) -> str:
    command = [node() or "node", str(HELPER), str(package())]
    done = subprocess.run(command, input=json.dumps(settings), capture_output=True, text=True,
                          timeout=60, check=True)  # fmt: skip
    return done.stdout


def test_the_profile_srt_makes_of_a_reps_settings_holds_the_contract(tmp_path: Path) -> None:
    settings, own, forbidden = _settings(tmp_path)
    allowed = settings["filesystem"]["allowRead"]  # type: ignore[index]
    assert _faults(_profile(settings), allowed, own, forbidden) == []


def test_the_profile_check_fails_when_a_suite_path_is_planted_in_the_allow_list(
    tmp_path: Path,
) -> None:
    settings, own, forbidden = _settings(tmp_path)
    settings["filesystem"]["allowRead"].append(forbidden[0])  # type: ignore[index]
    allowed = settings["filesystem"]["allowRead"]  # type: ignore[index]
    faults = _faults(_profile(settings), allowed, own, forbidden)
    assert f"suite or results readable: {forbidden[0]}" in faults
