"""A suite's plugin hooks, rewritten for an agent's own hook configuration: the plugin root
filled in, and each command wrapped by `hookrec.py` so its run is recorded by effect."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
from pathlib import Path
from typing import Any

HOOK_LOG = "hook-runs.jsonl"
"""Beside the rep's sandbox; its lines follow the raw stream in the kept transcript."""
HOOKREC_FILE = Path(__file__).resolve().parent / "hookrec.py"
HOOKREC = HOOKREC_FILE.name
"""The recorder's name beside the log: an agent whose hooks evalkit records has one."""


def plugin_hooks(plugin: Path) -> dict[str, Any]:
    path = plugin / "hooks" / "hooks.json"
    if not path.is_file():
        return {}
    hooks = json.loads(path.read_text(encoding="utf-8")).get("hooks")
    return hooks if isinstance(hooks, dict) else {}


WORLD_RECORDER = ".local/lib/hooks/run-hook.py"
WORLD_LOG = ".local/state/hooks/runs.jsonl"
"""Where the recorder and its log appear in a rep's world, under the world's HOME: the
places a user's own hook runner might keep, naming nothing measured."""


def world_hook_files(world_home: str | None) -> tuple[str, str] | None:
    """(recorder, log) as a rep with a world sees them; None without a world, where they
    sit at their own paths."""
    if world_home is None:
        return None
    return f"{world_home}/{WORLD_RECORDER}", f"{world_home}/{WORLD_LOG}"


def wrapped_hooks(
    plugins: list[Path],
    log: Path,
    events: dict[str, str],
    timeout_scale: int = 1,
    shown: tuple[str, str] | None = None,
    roots: list[str] | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Each plugin's command hooks under the agent's event names (`events` maps Claude's
    name to the agent's; an event missing there is dropped), recording into `log`. A
    timeout is in seconds, times `timeout_scale` for an agent that counts milliseconds.
    The recorder is copied beside the log and started by the `python3` on PATH: a confined
    rep reaches neither evalkit's own folder nor its virtual environment. `shown` is
    (recorder, log) as the agent's world places them (`world_hook_files`), and `roots` each
    plugin's folder there (its hooks are read from `plugins`, where they are)."""
    recorder = log.with_name(HOOKREC)
    shutil.copyfile(HOOKREC_FILE, recorder)
    named_recorder, named_log = shown or (str(recorder), str(log))
    out: dict[str, list[dict[str, Any]]] = {}
    for plugin, root in zip(plugins, roots or [str(p) for p in plugins], strict=True):
        for event, groups in plugin_hooks(plugin).items():
            theirs = events.get(event)
            if theirs is None or not isinstance(groups, list):
                continue
            for group in groups:
                hooks = []
                for hook in group.get("hooks", []) if isinstance(group, dict) else []:
                    if not isinstance(hook, dict) or hook.get("type") != "command":
                        continue
                    command = str(hook["command"]).replace("${CLAUDE_PLUGIN_ROOT}", root)
                    name = f"{event}:{plugin.name}"
                    wrapped = shlex.join(
                        ["python3", named_recorder, named_log, event, name, command]
                    )
                    timeout = hook.get("timeout")
                    if isinstance(timeout, int | float):
                        hook = {**hook, "timeout": timeout * timeout_scale}
                    hooks.append({**hook, "command": wrapped})
                if hooks:
                    out.setdefault(theirs, []).append({"hooks": hooks})
    return out


LOGGED_TYPE = "hook_run"
"""What `hookrec.py` names a run in the log inside the rep (a word of no harness)."""
HOOK_RUN = "evalkit.hook_run"
"""What the kept transcript names it: the line `scoring/streams/` reads."""
MAX_HOOK_LOG = 4 << 20
RECORD_KEYS = {"type": str, "hook_event": str, "hook_name": str, "exit_code": int,
               "outcome": str, "output": str}  # fmt: skip
"""A hook run exactly as `hookrec.py` writes it; anything else in the log was not."""


class HookLogWatch:
    """evalkit's own reading of the hooks' log while the agent runs, asked at every poll.

    The recorder writes the log from inside the rep, where the agent's shell can write it
    too. So evalkit keeps each complete line as it first saw it arrive, placed by the
    stream's complete lines at the poll before (lines that were surely there when it was
    written: a place the agent cannot write, never later than the truth), and names a log
    whose earlier bytes changed or vanished (rewritten), that grew past its cap, or that
    holds a line that is no hook run; the kept transcript takes evalkit's copy."""

    def __init__(self, log: Path, stream: Path) -> None:
        self.log, self.stream = log, stream
        self.lines: list[tuple[bytes, int]] = []
        self.problems: list[str] = []
        self._seen = b""
        self._key: tuple[int, int, int, int] | None = None
        self._offset = 0
        self._count = 0

    def __call__(self) -> None:
        before = self._count  # the stream's lines before the last look at the log
        self._stream_lines()
        if self.problems:
            return
        try:
            info = os.lstat(self.log)
        except OSError:
            if self._seen:
                self.problems.append("hook-log-rewritten")
            return
        key = (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)
        if key == self._key:
            return
        self._key = key
        data = _read_capped(self.log) if stat.S_ISREG(info.st_mode) else None
        if data is None or len(data) > MAX_HOOK_LOG:
            self.problems.append("hook-log-unreadable" if data is None else "hook-log-too-large")
        elif not data.startswith(self._seen):
            self.problems.append("hook-log-rewritten")
        else:
            head, sep, _ = data[len(self._seen) :].rpartition(b"\n")
            if sep:
                self.lines += [(raw, before) for raw in head.split(b"\n")]
                self._seen += head + sep

    def _stream_lines(self) -> int:
        """The stream's complete lines so far, reading only what it gained; taken before the
        log is looked at, so a hook line first seen at the next poll was written after."""
        try:
            with self.stream.open("rb") as source:
                source.seek(self._offset)
                data = source.read()
        except OSError:
            return self._count
        self._offset += len(data)
        self._count += data.count(b"\n")
        return self._count

    def text(self) -> str:
        """The hook runs as evalkit saw them arrive, each with its place (`line`), as stream
        lines; a line that is no hook run is left out and named among the problems."""
        out = []
        for number, (raw, at) in enumerate(self.lines, start=1):
            record = _record(raw)
            if record is None:
                self.problems.append(f"hook-log-malformed:line-{number}")
                continue
            out.append(json.dumps({**record, "line": at}) + "\n")
        return "".join(out)


def _record(raw: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(record, dict) or set(record) != set(RECORD_KEYS):
        return None
    for key, kind in RECORD_KEYS.items():
        if not isinstance(record[key], kind) or isinstance(record[key], bool):
            return None
    if record["type"] != LOGGED_TYPE:
        return None
    return {**record, "type": HOOK_RUN}


def _read_capped(path: Path) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            return handle.read(MAX_HOOK_LOG + 1)
    except OSError:
        return None
