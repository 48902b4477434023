"""What npm says an agent's CLI has released, and which of it is newer than a pin.

The registry is asked through npm itself (`npm view`), so a user's npm configuration (a
mirror, a proxy, a token) holds as it does for `--cli` installs, and `--registry` passes
through. The question is always asked online: a cached answer cannot name a release that
came out since. Pre-releases (a `-` suffix) are never watched, and neither is a release above
the `latest` dist-tag: one published but not promoted, or one `latest` was moved back from.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass, field
from typing import Any

from evalkit.errors import ConfigError, PrerequisiteError, RefusedError
from evalkit.records.rows.versions import SEMVER, semver_key

NPM_TIMEOUT = 120


@dataclass(frozen=True)
class Listing:
    """A package's versions and dist-tags, as npm listed them."""

    versions: list[str]
    tags: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Newer:
    """The versions of a listing newer than a pin, sorted by number, each in its kind."""

    releases: list[str]
    """Watched: releases newer than the pin, at most the `latest` tag."""
    prereleases: list[str]
    """Skipped: a `-` suffix."""
    unpromoted: list[str]
    """Skipped: releases above the `latest` tag."""

    @property
    def newest(self) -> str | None:
        return self.releases[-1] if self.releases else None


def is_prerelease(version: str) -> bool:
    return "-" in version


def by_number(versions: list[str]) -> list[str]:
    """Versions in the order of their numbers (2.1.32 < 2.1.321), each once."""
    return sorted(set(versions), key=semver_key)


def parse_listing(data: Any, package: str) -> Listing:
    """`npm view PACKAGE versions dist-tags --json`'s answer. npm gives a lone version as a
    string rather than a list; anything else that is not a version is left out."""
    if not isinstance(data, dict):
        raise ConfigError(f"npm view {package}: not a package listing")
    listed = data.get("versions", [])
    listed = [listed] if isinstance(listed, str) else listed
    tags = data.get("dist-tags", {})
    if not isinstance(listed, list) or not isinstance(tags, dict):
        raise ConfigError(f"npm view {package}: its versions or dist-tags are not a list and a map")
    versions = [str(v) for v in listed if SEMVER.match(str(v))]
    return Listing(versions, {str(k): str(v) for k, v in tags.items()})


def newer_than(pin: str, listing: Listing) -> Newer:
    """What of the listing is newer than `pin`, in the order of their numbers."""
    floor = semver_key(pin)
    newer = [v for v in by_number(listing.versions) if semver_key(v) > floor]
    releases = [v for v in newer if not is_prerelease(v)]
    latest = listing.tags.get("latest", "")
    above: list[str] = []
    if SEMVER.match(latest) and not is_prerelease(latest):
        above = [v for v in releases if semver_key(v) > semver_key(latest)]
    return Newer(
        releases=[v for v in releases if v not in above],
        prereleases=[v for v in newer if is_prerelease(v)],
        unpromoted=above,
    )


def npm_view(spec: str, fields: list[str], registry: str | None = None) -> Any:
    """`npm view SPEC FIELDS --json`, online, parsed; one line naming npm's own reason when it
    cannot answer."""
    npm = shutil.which("npm")
    if npm is None:
        raise PrerequisiteError(f"npm is not on PATH; watch asks it what {spec} has released")
    command = [npm, "view", spec, *fields, "--json", "--offline=false", "--prefer-online"]
    command += [f"--registry={registry}"] if registry else []
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=NPM_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PrerequisiteError(f"npm view {spec}: {exc}") from None
    try:
        answer = json.loads(done.stdout) if done.stdout.strip() else None
    except ValueError:
        answer = None
    if done.returncode != 0 or answer is None:
        raise PrerequisiteError(f"npm view {spec}: {_npm_reason(answer, done.stderr)}")
    return answer


def _npm_reason(answer: Any, stderr: str) -> str:
    """npm's one-line reason: its JSON error's summary, else its first line of stderr."""
    error = answer.get("error") if isinstance(answer, dict) else None
    if isinstance(error, dict) and error.get("summary"):
        return str(error["summary"]).splitlines()[0][:200]
    said = [x for x in stderr.splitlines() if x.strip() and "complete log" not in x]
    return (said or ["no answer"])[0][:200]


def listing(package: str, registry: str | None = None) -> Listing:
    return parse_listing(npm_view(package, ["versions", "dist-tags"], registry), package)


def registry_integrity(package: str, version: str, registry: str | None = None) -> str:
    """The registry's `dist.integrity` of one version ('' when it states none)."""
    answer = npm_view(f"{package}@{version}", ["dist.integrity"], registry)
    return answer if isinstance(answer, str) else ""


def check_integrity(version: str, installed: str, registry_says: str) -> None:
    """A bump pins what was measured only if the installed CLI is the tarball the registry
    serves under that version: both hashes stated, and the same."""
    if not installed:
        raise RefusedError(f"{version}: the installed CLI records no integrity hash; not bumped")
    if not registry_says:
        raise RefusedError(f"{version}: the registry states no dist.integrity; not bumped")
    if installed != registry_says:
        raise RefusedError(
            f"{version}: the installed CLI's integrity {installed[:24]}… is not the registry's "
            f"{registry_says[:24]}…; what was measured is not what npm serves, not bumped"
        )
