"""The evidence is out of the agent's reach: from its own tool call, through the real CLI and
its sandbox, the agent tries every way into what its CLI writes to evalkit (appending to,
rewriting and reading `/proc/<cli>/fd/1` and `/2`, opening `/proc/<cli>/mem`, attaching with
`ptrace`, reading it with `process_vm_readv`), and none of it lands: the kept transcript has
no forged event, the row is the one the agent's real work earns, and verify agrees. Under
each backend alike: under srt on Linux the CLI starts through the launcher that drops every
capability, loads evalkit's filter and execs its execute-only copy (`srt_start.py`), so the
nothing may land, for every agent: a Codex rep starts its vendored binary (the process that
writes its stream) itself, as Codex's npm launcher would (`run/agents/codex_native.py`), so
that binary too starts from its copy. A Codex row under srt still declares `cli-memory`, by
srt's conservative rule: its install holds other native programs (ripgrep, its own
bubblewrap, a helper host) that srt can bind no copy over; none of them writes the stream."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.hostile.conftest import confined, forgery_cases

if TYPE_CHECKING:
    from tests.e2e.conftest import Kit

DECLARED = {("codex", "srt")}
"""(agent, backend) whose rows declare `cli-memory`; nothing may land for any."""
CASES = [*forgery_cases(("claude",)),
         *(pytest.param(a, "srt", id=f"{a}-srt", marks=pytest.mark.slow)
           for a in ("codex", "gemini"))]  # fmt: skip
FORGED = "forged-by-the-agent"
"""The type of the event the agent tries to plant; no CLI writes one."""

ATTACK = f"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
me = {{os.getpid(), os.getppid()}}
line = ('{{' + '"type":"{FORGED}"' + '}}' + chr(10)).encode()
def cli(p):
    try:
        said = open('/proc/%s/cmdline' % p, 'rb').read()
        return b'stream-json' in said or b'--json\\x00' in said
    except OSError:
        return False
def attempt(what, fn):
    try:
        fn()
        print('landed', what.upper())
    except OSError:
        pass
found = [int(p) for p in os.listdir('/proc') if p.isdigit() and int(p) not in me]
found = [p for p in found if cli(p)]
print('attacked', len(found))
for p in found:
    for n in (1, 2):
        f = '/proc/%s/fd/%s' % (p, n)
        attempt('append', lambda: open(f, 'ab').write(line))
        attempt('rewrite', lambda: open(f, 'r+b').write(line))
        attempt('read', lambda: open(f, 'rb').read(1))
    attempt('mem', lambda: open('/proc/%s/mem' % p, 'r+b').close())
    if libc.ptrace(16, p, 0, 0) == 0:
        print('landed', 'ptrace'.upper())
        libc.ptrace(17, p, 0, 0)
        os.kill(p, 18)
    if libc.syscall(310, p, 0, 0, 0, 0, 0) >= 0:
        print('landed', 'vm_readv'.upper())
"""


def _events(transcript: Path) -> list[object]:
    events = []
    for raw in transcript.read_text(encoding="utf-8").splitlines():
        try:
            events.append(json.loads(raw))
        except ValueError:
            events.append(None)
    return events


@pytest.mark.e2e
@pytest.mark.parametrize(("agent", "backend"), CASES)
def test_the_agent_cannot_reach_what_its_cli_writes_to_evalkit(
    new_kit: Callable[..., Kit], tmp_path: Path, agent: str, backend: str
) -> None:
    from evalkit.suite.scaffold import init_suite

    suite = tmp_path / "suite"
    init_suite(suite, "blank")
    scenario = suite / "scenarios" / "P1-L1-greeting.md"
    command = f"echo {base64.b64encode(ATTACK.encode()).decode()} | base64 -d | python3"
    text = scenario.read_text()
    scenario.write_text(text.replace("  oracle:\n", "  oracle:\n    - bash: " +
                                     json.dumps(command) + "\n", 1))  # fmt: skip
    kit = new_kit(tmp_path / "kit", suite=suite)
    work = tmp_path / "w"
    done = kit.run("run", "P1-L1-greeting", "policy:oracle", str(work), "--allow-unfrozen",
                   *confined(backend), "--agent", agent)  # fmt: skip
    assert done.returncode == 0, done.why()
    (row,) = kit.tsv(work)
    (line,) = kit.manifest(work)
    transcript = work / line["evidence"] / line["files"]["transcript"]
    events = _events(transcript)
    intact = None not in events
    assert intact, f"a line of {transcript} is not JSON"
    planted = any(isinstance(e, dict) and e.get("type") == FORGED for e in events)
    assert not planted, f"a forged event reached {transcript}"
    said = transcript.read_text(encoding="utf-8")
    landed = [w for w in ("APPEND", "REWRITE", "READ", "MEM", "PTRACE", "VM_READV")
              if f"landed {w}" in said]  # fmt: skip
    tried = "attacked 0" not in said and "attacked " in said
    assert tried, f"the attack found no CLI to try in {transcript}"
    declared = "cli-memory" in row["flags"]
    expected = (agent, backend) in DECLARED
    assert declared == expected, f"the CLI's memory declared: {declared}, {row['flags']}"
    assert not landed, f"attempts that reached the CLI: {landed}"
    assert row["verdict"] == "PASS", f"{row['verdict']} for {transcript}"
    verified = kit.run("verify", str(work))
    rederived = [x for x in verified.stdout.splitlines() if x.strip().startswith("ok ")]
    assert verified.returncode == 0 and len(rederived) == 1, verified.why()
