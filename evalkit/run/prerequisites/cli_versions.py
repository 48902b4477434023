"""Claude Code versions as an axis: each installed once from npm into a cache of its own.

`$XDG_CACHE_HOME/evalkit/claude/<version>/` (`~/.cache` when unset) holds one npm prefix per
version. A version is usable when its `claude --version` answers it and its `--help` names
every option evalkit passes; its integrity hash (from the install's package-lock) goes into
each rep's declarations. The pinned version stays the default and is never pruned; a suite
whose `agents:` block pins another has that one installed and run instead (`suite_pinned`).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from evalkit.errors import ConfigError, PrerequisiteError, RefusedError
from evalkit.records.rows.versions import SEMVER, semver_key
from evalkit.run.prerequisites.claude_cli import PINNED_VERSION

if TYPE_CHECKING:
    from evalkit.suite.config import Suite

PACKAGE = "@anthropic-ai/claude-code"
CACHE_ENV = "EVALKIT_CLI_CACHE"
"""Points straight at the folder holding one folder per version (tests and `make setup`)."""
OPTIONS = (
    "--model",
    "--output-format",
    "--verbose",
    "--include-hook-events",
    "--dangerously-skip-permissions",
    "--no-session-persistence",
    "--setting-sources",
    "--plugin-dir",
)
"""Every option `runner.agent_command` passes that `--help` lists: a version lacking one
cannot run a rep. (`--max-turns`, passed only when asked for, is not listed even by the
pinned version.)"""


def sort_versions(versions: list[str]) -> list[str]:
    return sorted(set(versions), key=semver_key)


def parse_versions(text: str) -> list[str]:
    """`--cli A,B`: each a version, none twice, in the order given."""
    found = [v.strip() for v in text.split(",") if v.strip()]
    if not found:
        raise ConfigError("--cli: name at least one version")
    for version in found:
        semver_key(version)
    if len(set(found)) != len(found):
        raise ConfigError(f"--cli {text}: a version is named twice")
    return found


def cache_root() -> Path:
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "evalkit" / "claude"


@dataclass(frozen=True)
class InstalledCli:
    version: str
    folder: Path

    @property
    def path(self) -> Path:
        return self.folder / "node_modules" / ".bin" / "claude"

    @property
    def integrity(self) -> str:
        """The package's integrity hash as npm recorded it on install ('' if unreadable)."""
        try:
            lock = json.loads((self.folder / "package-lock.json").read_text(encoding="utf-8"))
            entry = lock["packages"][f"node_modules/{PACKAGE}"]
            return str(entry.get("integrity", ""))
        except (OSError, ValueError, KeyError, TypeError):
            return ""


def installed(root: Path | None = None) -> list[InstalledCli]:
    """Every version in the cache whose CLI is there, in semver order."""
    root = root or cache_root()
    if not root.is_dir():
        return []
    found = [
        InstalledCli(p.name, p)
        for p in root.iterdir()
        if SEMVER.match(p.name) and (p / "node_modules" / ".bin" / "claude").exists()
    ]
    return sorted(found, key=lambda c: semver_key(c.version))


def install(version: str, root: Path | None = None, registry: str | None = None) -> InstalledCli:
    """The version's CLI, installed from npm on first use (from `registry` when given, npm's
    own otherwise); refused in one line when npm does not have it or cannot be reached."""
    semver_key(version)
    root = root or cache_root()
    cli = InstalledCli(version, root / version)
    if cli.path.exists():
        return cli
    npm = shutil.which("npm")
    if npm is None:
        raise PrerequisiteError(f"--cli {version}: not installed in {root}, and npm is not on PATH")
    staging = root / f".{version}.installing"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        staging.mkdir(parents=True)
    except OSError as exc:
        plain = root.exists() and not root.is_dir()
        what = "is not a folder" if plain else f"cannot be made ({exc.strerror})"
        raise PrerequisiteError(
            f"--cli {version}: the CLI cache {root} {what}; point {CACHE_ENV} at a folder"
        ) from None
    command = [npm, "install", "--prefix", str(staging), "--no-audit", "--no-fund",
               "--loglevel=error", f"{PACKAGE}@{version}"]  # fmt: skip
    command += [f"--registry={registry}"] if registry else []
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise PrerequisiteError(f"--cli {version}: npm install failed ({exc})") from exc
    if done.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        said = [x for x in done.stderr.splitlines() if x.strip() and "complete log" not in x]
        words = (said or ["no output"])[0][:160]  # npm's reason, not where it kept its log
        raise ConfigError(f"--cli {version}: unknown or unreachable on npm ({words})")
    staging.rename(cli.folder)
    return cli


def check(cli: InstalledCli) -> None:
    """Refuse, naming what is wrong, a CLI that does not answer its version or lacks an
    option evalkit passes."""
    answer = _ask(cli, "--version")
    if answer.split(" ")[0] != cli.version:
        raise ConfigError(f"--cli {cli.version}: {cli.path} answers --version with {answer[:60]!r}")
    missing = missing_options(_ask(cli, "--help"))
    if missing:
        raise ConfigError(
            f"--cli {cli.version}: lacks {missing[0]}, which evalkit passes to every rep"
        )


def missing_options(help_text: str) -> list[str]:
    return [o for o in OPTIONS if not re.search(re.escape(o) + r"\b", help_text)]


def _ask(cli: InstalledCli, flag: str) -> str:
    try:
        done = subprocess.run(
            [str(cli.path), flag], capture_output=True, text=True, timeout=120,
            env={**os.environ, "DISABLE_AUTOUPDATER": "1"},
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip()


_CHECKED: dict[Path, InstalledCli] = {}


def resolve(
    versions: list[str], root: Path | None = None, registry: str | None = None
) -> dict[str, InstalledCli]:
    """Each version installed (once) and checked (once per process), before anything is
    planned."""
    found = {}
    for version in versions:
        cli = install(version, root, registry)
        if cli.folder.resolve() not in _CHECKED:
            check(cli)
            _CHECKED[cli.folder.resolve()] = cli
        _hold(cli)
        found[version] = cli
    return found


IN_USE = ".in-use"
"""A file in each version's folder that every process running that version holds a shared
lock on until it exits, so `prune` can tell a version a running grid needs."""
_HELD: dict[Path, int] = {}


def _hold(cli: InstalledCli) -> None:
    folder = cli.folder.resolve()
    if folder in _HELD:
        return
    try:
        fd = os.open(folder / IN_USE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        fcntl.flock(fd, fcntl.LOCK_SH)
    except OSError:
        return  # a read-only cache: nothing can prune it either
    _HELD[folder] = fd


def _claim(cli: InstalledCli) -> int | None:
    """An exclusive hold on a version no process is running (its fd, kept while it is
    removed, so no run can start on it meanwhile); None when one is."""
    if cli.folder.resolve() in _HELD:
        return None
    try:
        fd = os.open(cli.folder / IN_USE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError:
        return -1  # nothing can hold a version whose lock file cannot be made
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def registry_versions() -> list[str]:
    """Every version npm serves, in semver order (one line when npm cannot say)."""
    npm = shutil.which("npm")
    if npm is None:
        raise PrerequisiteError("npm is not on PATH; name the versions with --versions")
    try:
        done = subprocess.run(
            [npm, "view", PACKAGE, "versions", "--json"], capture_output=True, text=True,
            timeout=120,
        )  # fmt: skip
        listed = json.loads(done.stdout) if done.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError):
        listed = None
    if not isinstance(listed, list):
        raise ConfigError(f"npm view {PACKAGE} versions: no answer; name them with --versions")
    return sort_versions([str(v) for v in listed if SEMVER.match(str(v))])


def versions_between(good: str, bad: str, known: list[str]) -> list[str]:
    """The versions from good to bad inclusive, in semver order; both must be known."""
    low, high = semver_key(good), semver_key(bad)
    if not low < high:
        raise ConfigError(f"--good {good} must be an older version than --bad {bad}")
    for end in (good, bad):
        if end not in known:
            raise ConfigError(f"{end}: not among the versions to bisect")
    return [v for v in sort_versions(known) if low <= semver_key(v) <= high]


def prune(root: Path | None = None, keep: list[str] | None = None) -> list[str]:
    """Remove every cached version but the pinned one and `keep`; return what went. A
    version a running evalkit holds is refused, and then nothing is removed."""
    kept = {PINNED_VERSION, *(keep or [])}
    going = [cli for cli in installed(root) if cli.version not in kept]
    claims = {cli.version: _claim(cli) for cli in going}
    try:
        busy = [v for v, fd in claims.items() if fd is None]
        if busy:
            raise RefusedError(
                f"cli prune: {', '.join(busy)} {'is' if len(busy) == 1 else 'are'} in use by "
                "a running evalkit; nothing was removed: prune when it ends, or --keep it"
            )
        for cli in going:
            shutil.rmtree(cli.folder) if not cli.folder.is_symlink() else cli.folder.unlink()
    finally:
        for fd in claims.values():
            if fd is not None and fd >= 0:
                os.close(fd)
    return [cli.version for cli in going]


def chosen_cli(text: str | None) -> InstalledCli | None:
    """`--cli VERSION` of a command that runs one version (run, calibrate, doctor)."""
    if not text:
        return None
    versions = parse_versions(text)
    if len(versions) > 1:
        raise ConfigError(f"--cli {text}: this command takes one version; grid takes several")
    return resolve(versions)[versions[0]]


def suite_pinned(suite: Suite, agent: str) -> list[str]:
    """The version the suite's `agents:` block pins AGENT's CLI to, as `--cli` names it, when
    it is not evalkit's own pin ([] when the suite pins none or the same one): `run` and
    `grid` without --cli install and run it. A pin the agent's adapter cannot install is
    refused rather than silently run at evalkit's own."""
    from evalkit.pins import pinned
    from evalkit.run.agents.clis import agent_name
    from evalkit.run.agents.registry import adapter

    name = agent_name(agent)
    version = suite.config.agents.get(name)
    if version is None or version == pinned(name):
        return []
    if not adapter(name).capabilities.cli_versions:
        raise RefusedError(
            f"{suite.config_path}: agents.{name}: {version} is not evalkit's pin "
            f"({pinned(name)}), and --agent {name} cannot run another version of its CLI; "
            f"pin {pinned(name)} or leave {name} out"
        )
    return [version]
