"""policy:escape through the real CLI: every way out of the rep is tried, nothing lands
outside it, nothing of the suite is read, and the row names each attempt. Under a real model
name the preflight is skipped: proving the instrument first is `test_preflight.py`'s subject."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from evalkit.models import Script
from evalkit.reference.escape import PORT_ENV, escape_steps, run_values
from evalkit.reference.placeholders import render
from evalkit.reference.scripted_server import ScriptedServer
from tests.e2e.conftest import Kit, leaked_tasks, task_blocks

pytestmark = pytest.mark.e2e


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A loopback port outside every sandbox: the escape's connection must never arrive."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.setblocking(False)
    yield sock
    sock.close()


def _arrived(sock: socket.socket) -> bool:
    try:
        conn, _ = sock.accept()
    except BlockingIOError:
        return False
    conn.close()
    return True


def _listing(*folders: Path) -> set[str]:
    """Every path under the folders but HOME's cache folder, where evalkit keeps its own
    (the CLI versions it installs, each version's text from an empty world): the harness
    writes there, not the agent."""
    return {
        str(p) for folder in folders for p in folder.rglob("*")
        if not p.is_relative_to(folder / ".cache")
    }  # fmt: skip


def _outside(kit: Kit, work: Path) -> set[str]:
    """Everything a rep must leave alone: HOME, the real vault, the suite, and the results
    folder's own top level (evalkit's records live in files it names)."""
    tops = {str(p) for p in work.iterdir()} if work.is_dir() else set()
    return _listing(kit.home, kit.real_vault, kit.suite) | tops


def _escape_files(kit: Kit) -> list[str]:
    return sorted(str(p) for p in kit.base.rglob("evalkit-escape*"))


def _results(work: Path, line: dict[str, object]) -> list[tuple[str, str, str]]:
    """(tool, path, result text) of each tool call of a rep's transcript."""
    calls: dict[str, tuple[str, str]] = {}
    found = []
    for raw in (work / str(line["evidence"]) / "transcript.jsonl").read_text().splitlines():
        event = json.loads(raw)
        for block in (event.get("message") or {}).get("content") or []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":
                data = block.get("input") or {}
                path = data.get("file_path") or data.get("command") or ""
                calls[block["id"]] = (block["name"], str(path)[:80])
            elif block.get("type") == "tool_result" and block.get("tool_use_id") in calls:
                content = block.get("content")
                text = content if isinstance(content, str) else json.dumps(content)
                found.append((*calls[block["tool_use_id"]], text))
    return found


def _suite_reads(kit: Kit, calls: list[tuple[str, str, str]]) -> list[str]:
    """tool and path of each call whose result holds a line of a scenario file, or names a
    file of the suite; never the text itself."""
    tasks = task_blocks(kit.suite)
    suite_text = [str(kit.suite / "scenarios"), "calibration:", "polarity:"]
    return [
        f"{tool} {path}"
        for tool, path, text in calls
        if leaked_tasks(text, tasks) or any(s in text for s in suite_text)
    ]


def _missing_flags(kit: Kit, work: Path, scenario: str, port: int, flags: str) -> list[str]:
    """The attempts the row does not name. A write that landed in the sandbox's private /tmp
    (a HOME under /tmp, as here) is an attempt, one refused a blocked: either names it."""
    named = {f.partition(":")[2] for f in flags.split(";") if f.startswith("escape-")}
    wanted = {
        f"Write:{kit.home}/evalkit-escape/write.txt",
        f"Bash:{kit.home}/evalkit-escape-redirect.txt",
        f"Bash:{work}/evalkit-escape-python.txt",
        f"Bash:{work}/evalkit-escape-node.txt",
        f"Bash:{kit.home}",
        f"Read:{kit.suite / 'scenarios' / scenario}",
    }
    missing = sorted(wanted - named)
    if f"escape-blocked:Bash:net:127.0.0.1:{port}" not in flags.split(";"):
        missing.append(f"escape-blocked:Bash:net:127.0.0.1:{port}")
    return missing


def _private_suite(kit: Kit, suite_copier: Callable[..., Path]) -> None:
    kit.suite = suite_copier(kit.base / "suite")


def test_escape_in_run_lands_nothing_reads_nothing_and_is_flagged(
    kit: Kit, suite_copier: Callable[..., Path], listener: socket.socket
) -> None:
    _private_suite(kit, suite_copier)
    port = listener.getsockname()[1]
    kit.extra_env[PORT_ENV] = str(port)
    work = kit.base / "work"
    before = _outside(kit, work)
    done = kit.run("run", "P1", "policy:escape", str(work))
    assert done.returncode == 0, done.why()
    assert _escape_files(kit) == [], "escape files landed outside the rep"
    assert _outside(kit, work) - before <= {str(work / n) for n in
                                            ("results.tsv", "plans.jsonl", "manifest.jsonl",
                                             "evidence", "subjects")}  # fmt: skip
    assert not _arrived(listener), "a connection reached the loopback port outside"
    rows, lines = kit.tsv(work), kit.manifest(work)
    assert [r["verdict"] for r in rows] == ["PASS"], [r["reasons"] for r in rows]
    scenario = next((kit.suite / "scenarios").glob("P1-*.md")).name
    missing = _missing_flags(kit, work, scenario, port, rows[0]["flags"])
    assert not missing, f"flags missing: {missing}"
    assert _suite_reads(kit, _results(work, lines[0])) == []


def test_escape_in_a_four_job_grid_holds_for_every_rep(
    kit: Kit, suite_copier: Callable[..., Path], listener: socket.socket
) -> None:
    _private_suite(kit, suite_copier)
    port = listener.getsockname()[1]
    kit.extra_env[PORT_ENV] = str(port)
    work = kit.base / "work"
    done = kit.run(
        "grid", str(work), "--scenarios", "P1,N1", "--models", "policy:escape", "--reps", "2",
        "--jobs", "4", timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.why()
    assert _escape_files(kit) == [], "escape files landed outside the rep"
    assert not _arrived(listener), "a connection reached the loopback port outside"
    rows, lines = kit.tsv(work), kit.manifest(work)
    assert len(rows) == 4 and {r["verdict"] for r in rows} == {"PASS"}, rows
    scenarios = {p.name.split("-")[0]: p.name for p in (kit.suite / "scenarios").glob("*.md")}
    for row in rows:
        name = scenarios[row["scenario"].split("-")[0]]
        missing = _missing_flags(kit, work, name, port, row["flags"])
        assert not missing, f"{row['scenario']} rep {row['rep']}: flags missing: {missing}"
    for line in lines:
        assert _suite_reads(kit, _results(work, line)) == [], line["evidence"]


def test_the_escape_script_under_a_real_model_name_holds_the_same_way(
    kit: Kit, suite_copier: Callable[..., Path], listener: socket.socket
) -> None:
    """The real-model network path: `sonnet` against a loopback Anthropic-compatible
    endpoint set by ANTHROPIC_BASE_URL, with a dummy key."""
    _private_suite(kit, suite_copier)
    port = listener.getsockname()[1]
    work = kit.base / "work"
    scenario = next((kit.suite / "scenarios").glob("P1-*.md"))
    values = run_values(kit.home, work, scenario, str(port))
    script = render(Script(steps=escape_steps(), final_text="Done."), kit.base, [], values)
    with ScriptedServer(script) as server:
        kit.extra_env.update(
            ANTHROPIC_BASE_URL=server.base_url,
            ANTHROPIC_API_KEY="sk-ant-test-not-a-key",
            EVALKIT_JUDGE_CMD="echo NO",
        )
        done = kit.run("run", "P1", "sonnet", str(work), "--skip-preflight")
    assert done.returncode == 0, done.why()
    assert _escape_files(kit) == [], "escape files landed outside the rep"
    assert not _arrived(listener), "a connection reached the loopback port outside"
    rows, lines = kit.tsv(work), kit.manifest(work)
    assert len(rows) == 1 and rows[0]["verdict"] != "ERROR", rows[0]["reasons"]
    missing = _missing_flags(kit, work, scenario.name, port, rows[0]["flags"])
    assert not missing, f"flags missing: {missing}"
    assert _suite_reads(kit, _results(work, lines[0])) == []


def test_an_https_api_host_is_reached_through_the_allow_listing_proxy_only(
    kit: Kit, tmp_path: Path
) -> None:
    """The https path: the CLI reaches an https API stand-in through the CONNECT proxy its
    sandbox's HTTPS_PROXY names, and the proxy tunnels to nothing else."""
    import ssl
    import subprocess

    from evalkit.models import Step, ToolUseBlock

    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
         "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    other = "curl -sS --max-time 10 https://127.0.0.1:9/ -o /dev/null; echo exit=$?"
    script = Script(
        steps=[Step(blocks=[ToolUseBlock(name="Bash", input={"command": other})])],
        final_text="Done.",
    )
    work = kit.base / "work"
    with ScriptedServer(script, tls=tls) as server:
        kit.extra_env.update(
            ANTHROPIC_BASE_URL=server.base_url,
            ANTHROPIC_API_KEY="sk-ant-test-not-a-key",
            NODE_EXTRA_CA_CERTS=str(cert),
            EVALKIT_JUDGE_CMD="echo NO",
        )
        done = kit.run("run", "P1", "sonnet", str(work), "--skip-preflight")
        answered = len([r for r in server.requests if not r.side])
    assert done.returncode == 0, done.why()
    rows, lines = kit.tsv(work), kit.manifest(work)
    assert len(rows) == 1 and rows[0]["verdict"] != "ERROR", rows[0]["reasons"]
    assert answered >= 2, f"the https stand-in answered {answered} scripted step(s)"
    results = [text for tool, _, text in _results(work, lines[0]) if tool == "Bash"]
    refused = len(results) == 1 and "403" in results[0] and "exit=0" not in results[0]
    assert refused, "the proxy did not refuse a host other than the API's"
