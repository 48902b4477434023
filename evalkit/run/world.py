"""The world a rep's agent lives in, as evalkit builds it: the project's git history as a
person made it, dated from the grid's start, and (with `confine.py`) the user, home and
places the rep's folders appear at."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from evalkit.models import WorldConfig, WorldView
from evalkit.records.kept.gitutil import Author
from evalkit.run.agents.hooks import world_hook_files

COMMIT_HOUR = 16
COMMIT_SPACING_MINUTES = 23


def world_start() -> str:
    """The day a grid starts, in the world: every sandbox of the grid dates its history from
    it, so two reps of one grid find the same commits (recorded in the plan)."""
    return datetime.now(UTC).date().isoformat()


def history_commits(
    world: WorldConfig, start: str | None = None
) -> list[tuple[str, list[str], Author]]:
    """The world's history as (message, paths, author) for `commit_history`, oldest first:
    each commit on the afternoon of its day before the start, minutes apart, all by the
    world's user."""
    day = date.fromisoformat(start or world_start())
    commits = []
    for index, commit in enumerate(world.history):
        when = datetime(day.year, day.month, day.day, COMMIT_HOUR, tzinfo=UTC)
        when -= timedelta(days=commit.days_before + 1)
        when += timedelta(minutes=COMMIT_SPACING_MINUTES * index)
        author = Author(world.full_name, world.email, when.isoformat(timespec="seconds"))
        commits.append((commit.message, list(commit.paths), author))
    return commits


PLUGINS_HOME = "~/.local/share/{agent}/plugins"
"""Where the plugin copies appear: the agent's own data folder as a user's machine keeps it
(XDG's), so a Codex or Gemini agent is not shown a Claude folder."""
WORLD_PATH = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")


def in_world(world: WorldConfig, path: str) -> str:
    """A world spelling (`~/Notes`) as the absolute world path (`/home/alex/Notes`)."""
    return world.home + path[1:] if path == "~" or path.startswith("~/") else path


@dataclass
class Places:
    """Where one rep's folders appear in its world: (host folder, world path, role) each,
    the outermost first so that bwrap mounts the home before what sits inside it."""

    world: WorldConfig
    binds: list[tuple[Path, str, str]] = field(default_factory=list)
    guarded: dict[str, str] = field(default_factory=dict)
    """guarded env name -> the guarded path's world spelling (absent inside)."""

    def world_of(self, host: Path) -> str:
        return next((w for h, w, _ in self.binds if h == host), str(host))

    @property
    def project(self) -> str:
        return next(w for _, w, role in self.binds if role == "project")

    def placeholders(self) -> dict[str, str]:
        """The script placeholders a reference policy writes, as the agent sees them."""
        found = {"sandbox": self.world.home}
        for _, world, role in self.binds:
            kind, _, name = role.partition(":")
            if kind in ("project", "store"):
                found[name or kind] = world
        return found

    def workspace(self) -> list[str]:
        """The project and each side store, as the agent sees them."""
        return [w for _, w, role in self.binds if role.partition(":")[0] in ("project", "store")]

    def hooks(self, recorder: Path, log: Path) -> None:
        """The hooks' recorder and log at their world paths, where the agent's adapter
        records its hooks (`hooks.world_hook_files`); nothing where it does not."""
        if recorder.is_file():
            log.touch()
            inside = world_hook_files(self.world.home)
            assert inside is not None
            self.binds += [(recorder, inside[0], "hooks:recorder"), (log, inside[1], "hooks:log")]

    def plugin_paths(self) -> dict[Path, str]:
        return {host: world for host, world, role in self.binds if role == "plugin"}

    def hosts(self, seen: list[Path]) -> list[Path]:
        """The plugin copies the agent sees at `seen`, as this machine holds them."""
        back = {world: host for host, world in self.plugin_paths().items()}
        return [back.get(str(p), p) for p in seen]

    def view(self, partial: list[str]) -> WorldView:
        roles = {role: world for _, world, role in self.binds if role != "plugin"}
        roles.update({f"guarded:{env}": world for env, world in self.guarded.items()})
        scratch = next(h for h, _, role in self.binds if role == "project").parent.parent
        beside = {role: host.relative_to(scratch).as_posix() for host, _, role in self.binds
                  if role in ("config", "home") and host.is_relative_to(scratch)}  # fmt: skip
        return WorldView(
            user=self.world.user, home=self.world.home, hostname=self.world.hostname,
            roles=roles, partial=partial, beside=beside,
        )  # fmt: skip


def rep_places(
    world: WorldConfig,
    sandbox: Path,
    stores: list[str],
    config_dir: Path,
    home: Path,
    plugins: list[Path],
    guarded: dict[str, Path],
    config_home: str = "~/.claude",
    agent: str = "claude",
) -> Places:
    """Every rep folder's world path: HOME, the agent's config home (where its adapter says
    a user's machine keeps it), the project and each side store, the plugin copies (in
    `agent`'s data folder); and each guarded path's world spelling (a path under
    the caller's home is spelled under the world's)."""
    places = Places(world)
    places.binds.append((home, world.home, "home"))
    places.binds.append((config_dir, in_world(world, config_home), "config"))
    places.binds.append((sandbox / "project", in_world(world, world.project), "project"))
    for name in sorted(s for s in stores if s != "project"):
        spelled = world.stores.get(name, f"~/{name}")
        places.binds.append((sandbox / name, in_world(world, spelled), f"store:{name}"))
    for plugin in plugins:
        name = plugin.name.split("-", 1)[-1] if plugin.name[:1].isdigit() else plugin.name
        spelled = PLUGINS_HOME.format(agent=agent)
        places.binds.append((plugin, f"{in_world(world, spelled)}/{name}", "plugin"))
    host_home = Path.home()
    for env, path in guarded.items():
        inside = path == host_home or host_home in path.parents
        rel = path.relative_to(host_home).as_posix() if inside else None
        places.guarded[env] = f"{world.home}/{rel}" if rel else str(path)
    return places


def lay_out_home(world: WorldConfig, home: Path) -> None:
    """A home that looks lived in: the dotfiles a developer's account has, nothing of the
    host's."""
    home.mkdir(parents=True, exist_ok=True)
    files = {
        ".bashrc": BASHRC,
        ".profile": PROFILE,
        ".gitconfig": f"[user]\n\tname = {world.full_name}\n\temail = {world.email}\n"
        "[init]\n\tdefaultBranch = main\n[pull]\n\trebase = true\n",
    }
    for name, text in files.items():
        (home / name).write_text(text, encoding="utf-8")
    for folder in (".local/bin", ".cache", "Downloads"):
        (home / folder).mkdir(parents=True, exist_ok=True)


BASHRC = """\
# ~/.bashrc: executed by bash(1) for non-login shells.
case $- in *i*) ;; *) return;; esac
HISTCONTROL=ignoreboth
HISTSIZE=5000
shopt -s histappend checkwinsize
alias ll='ls -alF'
alias la='ls -A'
alias gs='git status'
export EDITOR=vim
[ -d "$HOME/.local/bin" ] && PATH="$HOME/.local/bin:$PATH"
"""
PROFILE = """\
# ~/.profile: executed by the command interpreter for login shells.
if [ -n "$BASH_VERSION" ] && [ -f "$HOME/.bashrc" ]; then . "$HOME/.bashrc"; fi
"""


def world_env(
    world: WorldConfig, env: dict[str, str], drop: list[str], path: list[str]
) -> dict[str, str]:
    """The agent's environment in its world: the user's names and HOME, a PATH of folders
    that exist inside, and nothing that names the harness (its own variables, the guarded
    paths' pointers, the per-rep config folder, root's permission switch)."""
    inner = {k: v for k, v in env.items() if k not in drop and not k.startswith("EVALKIT_")}
    for name in ("CLAUDE_CONFIG_DIR", "IS_SANDBOX", "TMPDIR"):
        inner.pop(name, None)
    inner.update(
        HOME=world.home, USER=world.user, LOGNAME=world.user, SHELL="/bin/bash",
        PATH=":".join(dict.fromkeys([*path, *WORLD_PATH])),
        LANG=env.get("LANG") or "C.UTF-8",
    )  # fmt: skip
    return inner
