"""A scripted rep's turns are held to what its scripted server served: through the real CLI,
the agent's own Bash call posts a conversation of its own to the door its CLI talks through,
and is served a turn. The row is `ERROR tampering:request-outside-conversation`, the server's
record is kept beside the transcript, and verify re-derives the row from it; the same rep
without the post is a PASS with nothing named."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tests.e2e.conftest import Kit

POST = """
import json, os, urllib.request
body = {"model": "m", "max_tokens": 16, "tools": [],
        "messages": [{"role": "user", "content": "a conversation of my own"}]}
request = urllib.request.Request(os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages",
                                 json.dumps(body).encode(), {"content-type": "application/json"})
try:
    urllib.request.urlopen(request, timeout=20).read()
except Exception:
    pass
"""


def _suite(tmp_path: Path, post: bool) -> Path:
    from evalkit.suite.scaffold import init_suite

    suite = tmp_path / "suite"
    init_suite(suite, "blank")
    if post:
        scenario = suite / "scenarios" / "P1-L1-greeting.md"
        command = f"echo {base64.b64encode(POST.encode()).decode()} | base64 -d | python3"
        text = scenario.read_text()
        scenario.write_text(text.replace("  oracle:\n", "  oracle:\n    - bash: " +
                                         json.dumps(command) + "\n", 1))  # fmt: skip
    return suite


@pytest.mark.e2e
@pytest.mark.parametrize("post", [True, False], ids=["own-post", "none"])
def test_a_request_the_agent_posts_to_its_door_is_tampering(
    new_kit: Callable[..., Kit], tmp_path: Path, post: bool
) -> None:
    kit = new_kit(tmp_path / "kit", suite=_suite(tmp_path, post))
    work = tmp_path / "w"
    done = kit.run("run", "P1-L1-greeting", "policy:oracle", str(work), "--allow-unfrozen")
    assert done.returncode == 0, done.why()
    (row,) = kit.tsv(work)
    (line,) = kit.manifest(work)
    record = work / line["evidence"] / line["files"]["served"]
    roots = {json.loads(x)["root"] for x in record.read_text().splitlines()}
    assert len(roots) == (2 if post else 1), f"conversations in {record}: {len(roots)}"
    want = ("ERROR", "tampering:request-outside-conversation") if post else ("PASS", "")
    got = (row["verdict"], row["reasons"].split(";")[0] if post else "")
    assert got == want, f"{row['verdict']} {row['reasons']} for {record}"
    verified = kit.run("verify", str(work))
    rederived = [x for x in verified.stdout.splitlines() if x.strip().startswith("ok ")]
    assert len(rederived) == 1, verified.why()
