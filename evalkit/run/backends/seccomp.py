"""The system calls no process of a rep may make: those that reach into another process.

A rep's CLI holds the stream that becomes its evidence; every tool process the agent starts
runs beside it, as the same user, in the same sandbox. `ptrace`, `process_vm_readv` and
`process_vm_writev` (and `pidfd_getfd`, which takes an open file from another process, and
`process_madvise`) would let one of them read or rewrite the CLI's memory or take its
streams, so the sandbox's filter answers each with EPERM. A system call made through another
architecture's table (a 32-bit `int 0x80` on x86-64, x32's numbers) could name the same
calls by other numbers, so every one of those is refused too.

The filter is classic BPF as the kernel's `seccomp(2)` reads it, written out here rather
than through libseccomp, which is not a dependency: bubblewrap loads it from a file
descriptor (`--seccomp FD`) after it has built the sandbox and before it starts the command.
"""

from __future__ import annotations

import errno
import os
import platform
import struct

_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000  # SECCOMP_RET_ALLOW
_REFUSE = 0x00050000 | errno.EPERM  # SECCOMP_RET_ERRNO | EPERM
_NR, _ARCH = 0, 4  # offsets in struct seccomp_data
_X32_BIT = 0x40000000

ARCHES: dict[str, tuple[int, dict[str, int]]] = {
    "x86_64": (
        0xC000003E,  # AUDIT_ARCH_X86_64
        {"ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311,
         "pidfd_getfd": 438, "process_madvise": 440},
    ),  # fmt: skip
    "aarch64": (
        0xC00000B7,  # AUDIT_ARCH_AARCH64
        {"ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271,
         "pidfd_getfd": 438, "process_madvise": 440},
    ),  # fmt: skip
}
"""Per machine: its audit architecture and the numbers of the calls refused."""


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program(machine: str | None = None) -> bytes | None:
    """The filter for this machine (or `machine`), or None on one evalkit has no table for."""
    found = ARCHES.get(machine or platform.machine())
    if found is None:
        return None
    arch, calls = found
    numbers = sorted(calls.values())
    ops = [_op(_LD_W_ABS, _ARCH)]
    # another architecture's table: straight to the refusal
    ops.append(_op(_JEQ_K, arch, jt=0, jf=len(numbers) + 3))
    ops.append(_op(_LD_W_ABS, _NR))
    ops.append(_op(_JGE_K, _X32_BIT, jt=len(numbers) + 1, jf=0))
    for i, number in enumerate(numbers):
        ops.append(_op(_JEQ_K, number, jt=len(numbers) - i, jf=0))
    ops.append(_op(_RET_K, _ALLOW))
    ops.append(_op(_RET_K, _REFUSE))
    return b"".join(ops)


def filter_fd() -> int | None:
    """An inheritable file descriptor holding this machine's filter, at offset 0, for
    `bwrap --seccomp`; the caller closes it once the process has started. None where the
    machine has no table (the rep then runs without the filter, and its reach says so)."""
    code = program()
    if code is None:
        return None
    fd = os.memfd_create("filter", 0)
    try:
        os.write(fd, code)
        os.lseek(fd, 0, os.SEEK_SET)
        os.set_inheritable(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd
