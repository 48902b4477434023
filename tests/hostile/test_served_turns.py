"""A scripted rep's turns are held to what its scripted server served: through the real CLI,
the agent's own Bash call posts a conversation of its own to the door its CLI talks through,
and is served a turn. The row is `ERROR tampering:request-outside-conversation`, the server's
record is kept beside the transcript, and verify re-derives the row from it; the same rep
without the post is a PASS with nothing named. Claude Code's pair under bubblewrap is in
`make test`; Codex's and Gemini's (each posting in its own wire, to the door its config or
environment names), and Claude Code's under srt, Docker and Podman, are slow."""

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

POST = """
import json, os, re, urllib.request
said = "a conversation of my own"
home = os.environ.get("CODEX_HOME") or os.path.expanduser("~/.codex")
config = os.path.join(home, "config.toml")
codex = re.search(r'base_url = "([^"]+)"', open(config).read()) if os.path.exists(config) else None
if codex:
    url = codex.group(1) + "/responses"
    body = {"model": "m", "stream": True, "input": [{"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": said}]}]}
elif os.environ.get("GOOGLE_GEMINI_BASE_URL"):
    url = os.environ["GOOGLE_GEMINI_BASE_URL"] + "/v1beta/models/m:streamGenerateContent?alt=sse"
    body = {"contents": [{"role": "user", "parts": [{"text": said}]}]}
else:
    url = os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages"
    body = {"model": "m", "max_tokens": 16, "tools": [],
            "messages": [{"role": "user", "content": said}]}
request = urllib.request.Request(url, json.dumps(body).encode(),
                                 {"content-type": "application/json"})
try:
    urllib.request.urlopen(request, timeout=20).read()
    print("posted-to-the-door")
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
@pytest.mark.parametrize(("agent", "backend"), forgery_cases())
def test_a_request_the_agent_posts_to_its_door_is_tampering(
    new_kit: Callable[..., Kit], tmp_path: Path, agent: str, backend: str, post: bool
) -> None:
    from tests.e2e.test_other_agents import require_cli

    if agent != "claude":
        require_cli(agent)
    kit = new_kit(tmp_path / "kit", suite=_suite(tmp_path, post))
    work = tmp_path / "w"
    done = kit.run("run", "P1-L1-greeting", "policy:oracle", str(work), "--allow-unfrozen",
                   "--agent", agent, *confined(backend))  # fmt: skip
    assert done.returncode == 0, done.why()
    (row,) = kit.tsv(work)
    (line,) = kit.manifest(work)
    transcript = work / line["evidence"] / line["files"]["transcript"]
    posted = "posted-to-the-door" in transcript.read_text(encoding="utf-8")
    assert posted == post, f"the agent's post reached its door: {posted}, in {transcript}"
    record = work / line["evidence"] / line["files"]["served"]
    roots = {json.loads(x)["root"] for x in record.read_text().splitlines()}
    assert len(roots) == (2 if post else 1), f"conversations in {record}: {len(roots)}"
    want = ("ERROR", "tampering:request-outside-conversation") if post else ("PASS", "")
    got = (row["verdict"], row["reasons"].split(";")[0] if post else "")
    assert got == want, f"{row['verdict']} {row['reasons']} for {record}"
    verified = kit.run("verify", str(work))
    rederived = [x for x in verified.stdout.splitlines() if x.strip().startswith("ok ")]
    assert len(rederived) == 1, verified.why()
