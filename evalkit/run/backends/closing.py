"""The launcher run inside srt's sandbox on Linux, last before the CLI: it closes the CLI's
memory to the agent's processes, as bubblewrap's own options do for evalkit's backend.

srt's bubblewrap, where evalkit is root, leaves its command every capability in the user
namespace its helper made (measured: `CapEff` all set, uid 0), and loads no filter of
evalkit's; its own filter refuses `mount`, the new mount calls and a further user namespace,
so no execute-only copy can be bound over the program it copies. So this script, started by
the system `python3 -I -S` with the standard library only, in the order that matters:

1. drops every capability: the bounding set first (`PR_CAPBSET_DROP`, where it may), then
   the ambient set, then `capset` to nothing; then checks `/proc/self/status` says so;
2. sets `PR_SET_NO_NEW_PRIVS` and loads evalkit's filter (`seccomp.py`, its bytes in the
   file named first) with `PR_SET_SECCOMP`: `ptrace`, `process_vm_readv`/`writev` refused;
3. execs the CLI from its execute-only copy (`exec_only.py`), its `argv[0]` the program's
   own path: a process exec'd, without a capability, from a file it cannot read is not
   dumpable, so `/proc/<pid>/mem` is closed to a same-uid process with none.

Anything it cannot do ends the rep (exit 126, one line on stderr): a CLI started half closed
would be a row that says more than holds.

    python3 -I -S closing.py FILTER PROGRAM ARGV0 [ARGS...]
"""

from __future__ import annotations

import ctypes
import os
import sys

PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
CAPABILITY_VERSION_3 = 0x20080522
REFUSED = 126


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Sets(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]  # fmt: skip


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _fail(what: str) -> None:
    raise OSError(ctypes.get_errno(), what)


def _last_cap() -> int:
    with open("/proc/sys/kernel/cap_last_cap", encoding="ascii") as handle:
        return int(handle.read())


def drop_capabilities(libc: ctypes.CDLL) -> None:
    """Every capability gone: none kept, none to be had again at an exec."""
    for cap in range(_last_cap() + 1):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() != 1:
            _fail("the bounding set")  # EPERM: no CAP_SETPCAP, so none to drop (checked below)
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)  # old kernels: none to clear
    none = (_Sets * 2)()
    if libc.capset(ctypes.byref(_Header(CAPABILITY_VERSION_3, 0)), none) != 0:
        _fail("capset")


def status_says_closed(status: str) -> bool:
    """Whether `/proc/self/status` shows no capability held or to be had: none effective,
    permitted, inheritable or ambient, and none in the bounding set for uid 0 (another uid
    gains none at an exec)."""
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    held = [int(fields[k].strip(), 16) for k in ("CapEff", "CapPrm", "CapInh", "CapAmb")]
    root = fields["Uid"].split()[1] == "0"
    bound = int(fields["CapBnd"].strip(), 16) if root else 0
    return not any(held) and not bound and fields.get("NoNewPrivs", "").strip() == "1"


def load_filter(libc: ctypes.CDLL, code: bytes) -> None:
    """No new privileges, then the filter, for this process and all it starts."""
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        _fail("no_new_privs")
    buffer = ctypes.create_string_buffer(code, len(code))
    program = _Program(len(code) // 8, ctypes.cast(buffer, ctypes.c_void_p).value)
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(program), 0, 0) != 0:
        _fail("the system call filter")


def main(argv: list[str]) -> int:
    code_file, program, *command = argv
    try:
        with open(code_file, "rb") as handle:
            code = handle.read()
        libc = _libc()
        drop_capabilities(libc)
        load_filter(libc, code)
        with open("/proc/self/status", encoding="ascii") as handle:
            if not status_says_closed(handle.read()):
                raise OSError(0, "a capability is still held")
        os.execv(program, command)
    except (OSError, ValueError, KeyError) as exc:
        print(f"cannot start: {exc}", file=sys.stderr)
    return REFUSED


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
