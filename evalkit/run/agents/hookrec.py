"""Runs one hook command and appends its run to a log: the event, the hook's name, its exit
code and output, one JSON line each. Standalone, standard library only: any python3 runs it.

usage: run-hook.py LOG EVENT NAME COMMAND
"""

from __future__ import annotations

import json
import subprocess
import sys


def main(argv: list[str]) -> int:
    log, event, name, command = argv[1:5]
    done = subprocess.run(["/bin/sh", "-c", command], stdin=sys.stdin, capture_output=True)
    sys.stdout.buffer.write(done.stdout)
    sys.stderr.buffer.write(done.stderr)
    output = (done.stdout + done.stderr).decode("utf-8", "replace")
    record = {
        "type": "hook_run",
        "hook_event": event,
        "hook_name": name,
        "exit_code": done.returncode,
        "outcome": "success" if done.returncode == 0 else "error",
        "output": output[:20000],
    }
    with open(log, "a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\n")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv))
