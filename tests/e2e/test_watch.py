"""`evalkit watch` through the real CLIs in the version cache, asking a registry stub on
loopback (never the real registry) what Claude Code has released: the newest release found
past a pre-release, run against the pin through the scripted model, and each exit code with
what it leaves of the pin file and the cursor."""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.e2e.test_cli_versions import CACHE, versioned_kit

if TYPE_CHECKING:
    from conftest import Done, Kit

pytestmark = pytest.mark.e2e

PACKAGE = "@anthropic-ai/claude-code"
PIN = "2.1.327"
NEW = "2.1.328"
PRERELEASE = "2.1.329-next.0"
ABSENT = "2.1.999"
"""Listed by one registry, in no cache: with npm offline its install fails."""
PINS = f'# pins the watch reads and bumps\n[agents]\nclaude = "{PIN}"   # the measured one\n'
# Five positive scenarios: one test (recall) in the family, and 1/2^5 below alpha, so a
# release that fails every one is shown worse, and one that fails none is shown to hold.
GRID = ("--set", "all", "--scenarios", "P1,P2,P3,P4,P5", "--reps", "1", "--jobs", "2")


def _integrity(version: str) -> str:
    """What npm recorded of a cached install, as the registry would state it."""
    lock = json.loads((CACHE / version / "package-lock.json").read_text(encoding="utf-8"))
    return str(lock["packages"][f"node_modules/{PACKAGE}"]["integrity"])


def packument(versions: list[str], latest: str) -> dict[str, Any]:
    """npm's package document for these versions, each with its dist."""
    return {
        "name": PACKAGE,
        "dist-tags": {"latest": latest, "next": PRERELEASE},
        "versions": {
            v: {"name": PACKAGE, "version": v, "dist": {
                "integrity": _integrity(v) if (CACHE / v).is_dir() else "sha512-none",
                "tarball": f"http://127.0.0.1:9/{v}.tgz",
            }}
            for v in versions
        },
    }  # fmt: skip


DOCUMENTS = {
    "/releases/": lambda: packument(["2.1.326", PIN, NEW, PRERELEASE], NEW),
    "/absent/": lambda: packument(["2.1.326", PIN, NEW, ABSENT], ABSENT),
}
"""Registry path -> the package document it serves: one registry per listing."""


class _Registry(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
        for prefix, document in DOCUMENTS.items():
            if self.path.lower() == f"{prefix}@anthropic-ai%2fclaude-code":
                body = json.dumps(document()).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def registry() -> Iterator[str]:
    """The stub's base URL, on a port the OS chose."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Registry)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def watched(
    new_kit: Callable[..., Kit],
    tmp_path_factory: pytest.TempPathFactory,
    suite_copier: Callable[..., Path],
) -> Kit:
    """A kit on a frozen copy of the suite, its version cache the one `make setup` fills."""
    base = tmp_path_factory.mktemp("watch")
    kit = versioned_kit(new_kit, base)
    kit.suite = suite_copier(base / "suite")
    frozen = kit.run("suite", "freeze")
    assert frozen.returncode == 0, frozen.why()
    return kit


def _pins(kit: Kit, name: str) -> Path:
    path = kit.base / name
    path.write_text(PINS, encoding="utf-8")
    return path


def _watch(kit: Kit, work: Path, pins: Path, model: str, registry: str, *more: str) -> Done:
    return kit.run("watch", str(work), "--agent", "claude", "--pins", str(pins),
                   "--models", model, "--registry", registry, *GRID, *more,
                   timeout=600)  # fmt: skip


def _cursor(work: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((work / "watch-cursor.json").read_text(encoding="utf-8"))
    return data["agents"]["claude"]


@pytest.fixture(scope="module")
def regressed(watched: Kit, registry: str) -> tuple[Kit, Path, Path, Done]:
    """A watch of a release planted worse from 2.1.328 on, asked to bump."""
    work, pins = watched.base / "regressed", _pins(watched, "regressed.toml")
    model = f"policy:regress-from:{NEW}"
    done = _watch(watched, work, pins, model, f"{registry}/releases/", "--bump")
    return watched, work, pins, done


def test_the_newest_release_is_found_past_a_pre_release_and_run_against_the_pin(
    regressed: tuple[Kit, Path, Path, Done],
) -> None:
    kit, work, _, done = regressed
    first = done.stdout.splitlines()[0]
    assert f"pinned at {PIN}" in first and f"newest release {NEW}" in first, done.why()
    assert f"skipped: pre-release {PRERELEASE}" in first, done.why()
    rows = kit.tsv(work / f"claude-{NEW}-vs-{PIN}")
    assert sorted({r["cli_version"] for r in rows}) == [PIN, NEW]
    assert len(rows) == 10 and {r["model"] for r in rows} == {f"policy:regress-from:{NEW}"}


def test_a_worse_release_exits_1_and_leaves_the_pin_file_as_it_was(
    regressed: tuple[Kit, Path, Path, Done],
) -> None:
    _, _, pins, done = regressed
    assert done.returncode == 1, done.why()
    assert "gate: regression: recall" in done.stdout, done.why()
    assert pins.read_text(encoding="utf-8") == PINS


def test_a_worse_release_is_recorded_in_the_cursor(
    regressed: tuple[Kit, Path, Path, Done],
) -> None:
    _, work, _, done = regressed
    assert done.returncode == 1, done.why()
    recorded = _cursor(work)[NEW]
    assert (recorded["outcome"], recorded["pin"]) == (1, PIN)


def test_a_release_tested_already_is_not_run_again_and_exits_with_its_outcome(
    regressed: tuple[Kit, Path, Path, Done], registry: str
) -> None:
    kit, work, pins, first = regressed
    assert first.returncode == 1, first.why()
    model = f"policy:regress-from:{NEW}"
    again = _watch(kit, work, pins, model, f"{registry}/releases/")
    assert again.returncode == 1, again.why()
    said = [line for line in again.stdout.splitlines() if "not run again" in line]
    assert len(said) == 1 and "tested against 2.1.327 already" in said[0], again.why()
    assert not (work / f"claude-{NEW}-vs-{PIN}.2").exists()


def test_a_release_that_holds_exits_0_and_bumps_the_pin_printing_the_diff(
    watched: Kit, registry: str
) -> None:
    work, pins = watched.base / "holds", _pins(watched, "holds.toml")
    done = _watch(watched, work, pins, "policy:oracle", f"{registry}/releases/", "--bump")
    assert done.returncode == 0, done.why()
    assert pins.read_text(encoding="utf-8") == PINS.replace(f'"{PIN}"', f'"{NEW}"')
    assert f'-claude = "{PIN}"   # the measured one' in done.stdout, done.why()
    assert f'+claude = "{NEW}"   # the measured one' in done.stdout, done.why()
    assert _cursor(work)[NEW]["outcome"] == 0


def test_a_release_that_cannot_be_installed_exits_2_and_leaves_the_cursor(
    regressed: tuple[Kit, Path, Path, Done], registry: str
) -> None:
    kit, work, pins, first = regressed
    assert first.returncode == 1, first.why()
    retry = kit.base / "absent"
    shutil.copytree(work, retry)
    before = (retry / "watch-cursor.json").read_bytes()
    done = _watch(kit, retry, pins, "policy:oracle", f"{registry}/absent/")
    assert done.returncode == 2, done.why()
    assert f"--cli {ABSENT}" in done.stderr and done.stderr.count("\n") == 1, done.why()
    assert (retry / "watch-cursor.json").read_bytes() == before
    assert not (retry / f"claude-{ABSENT}-vs-{PIN}").exists()
