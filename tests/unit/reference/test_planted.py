"""self-test holds the world scan to fabricated request bodies of every wire: a marker
planted in one channel is named by that channel alone, and the controls (no marker, the
user's own words, a word a tool's own call named) give none. A reader that drops a channel,
reads the Task or blames a call's own word comes out other than designed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

import evalkit.reference.planted as planted
from evalkit.cli.main import app
from evalkit.suite.config import Suite, load_suite
from tests.e2e.conftest import copy_suite

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = [ROOT, *(ROOT / "suites" / n for n in ("adr-discrimination", "adr-eval-b", "runs-tests",
                                                  "plugin-evals-example"))]  # fmt: skip


def _wrong(cells: list[planted.PlantedCell]) -> list[tuple[str, str]]:
    return [(c.wire, c.case) for c in cells if not c.ok]


@pytest.mark.parametrize("folder", SHIPPED, ids=lambda p: p.name)
def test_every_planted_body_of_every_wire_is_named_by_its_channel_alone(folder: Path) -> None:
    cells = planted.planted_scan(load_suite(folder))
    assert {c.wire for c in cells} == {"messages", "responses", "generate-content"}
    assert not _wrong(cells), _wrong(cells)


def _replace_reader(monkeypatch: pytest.MonkeyPatch, wire: str, reader: planted.Pieces) -> None:
    body, _, channels = planted.WIRES[wire]
    monkeypatch.setitem(planted.WIRES, wire, (body, reader, channels))


def test_a_reader_that_drops_the_hook_output_fails_that_body(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = planted.WIRES["messages"][1]

    def dropping(body: planted.Body) -> Iterator[tuple[str, str, str]]:
        return (p for p in real(body) if p[0] != "hook-output")

    _replace_reader(monkeypatch, "messages", dropping)
    assert _wrong(planted.planted_scan(Suite(ROOT))) == [("messages", "hook-output")]


def test_a_reader_that_reads_the_user_s_own_words_fails_that_control(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = planted.WIRES["generate-content"][1]

    def reading_all(body: planted.Body) -> Iterator[tuple[str, str, str]]:
        yield from real(body)
        for turn in body["contents"]:
            for part in turn["parts"]:
                if isinstance(part.get("text"), str):
                    yield "env-context", part["text"], ""

    _replace_reader(monkeypatch, "generate-content", reading_all)
    assert _wrong(planted.planted_scan(Suite(ROOT))) == [("generate-content", planted.USER_TEXT)]


def test_a_reader_that_blames_a_call_for_its_own_word_fails_that_control(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = planted.WIRES["responses"][1]

    def blaming(body: planted.Body) -> Iterator[tuple[str, str, str]]:
        return ((channel, text, "") for channel, text, _ in real(body))

    _replace_reader(monkeypatch, "responses", blaming)
    assert _wrong(planted.planted_scan(Suite(ROOT))) == [("responses", planted.OWN_WORD)]


@pytest.mark.heavy
def test_self_test_fails_and_names_a_body_the_scan_misreads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = planted.WIRES["messages"][1]

    def dropping(body: planted.Body) -> Iterator[tuple[str, str, str]]:
        return (p for p in real(body) if p[0] != "tool-result")

    _replace_reader(monkeypatch, "messages", dropping)
    suite = copy_suite(tmp_path / "suite", only={"P1"})
    done = CliRunner().invoke(app, ["--suite", str(suite), "self-test"])
    named = [line for line in done.stdout.splitlines() if line.startswith("WRONG world-scan")]
    assert done.exit_code == 1 and len(named) == 1 and "tool-result" in named[0], done.exit_code
