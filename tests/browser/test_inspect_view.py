"""An exported Inspect log as its readers see it: `inspect view`, Inspect's own log viewer,
served on loopback and opened in headless Chromium, lists one sample per rep with the
verdict scores, shows the ERROR rep as an errored sample, and holds no Task line.

The folder is recorded through the real recorder (a PASS, a cut-off ERROR and a negative);
the viewer is the pinned inspect-ai's, run offline.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evalkit.exports.inspect_log import write_inspect_log
from evalkit.models import PlanCell
from evalkit.run.context import record_plan
from evalkit.suite.config import Suite
from evalkit.suite.task import read_task
from tests.browser.chromium import chromium
from tests.unit.records.folder import context, record_rep

pytestmark = pytest.mark.browser

INSPECT = Path(sys.executable).parent / "inspect"
POSITIVE, NEGATIVE = "P1-L1-reporting", "N1-L1-reporting"
REPS = [(POSITIVE, 1, None), (POSITIVE, 2, "cut-before-result"), (NEGATIVE, 1, None)]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def logs(suite: Suite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("inspect-view") / "work"
    ctx = context(suite, work)
    cells = [PlanCell(scenario=POSITIVE, model="policy:oracle", reps=2),
             PlanCell(scenario=NEGATIVE, model="policy:oracle", reps=1)]  # fmt: skip
    record_plan(ctx, cells, "view")
    for scenario, rep, case in REPS:
        record_rep(ctx, scenario, "policy:oracle", rep, case_name=case)
    folder = work.parent / "logs"
    folder.mkdir()
    write_inspect_log(suite, work, folder / "work.eval")
    return folder


@pytest.fixture(scope="module")
def viewer(logs: Path) -> Iterator[str]:
    port = _free_port()
    command = [str(INSPECT), "view", "--log-dir", str(logs), "--host", "127.0.0.1",
               "--port", str(port)]  # fmt: skip
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/"
    try:
        for _ in range(600):
            try:
                with urllib.request.urlopen(url, timeout=2):
                    break
            except OSError:
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture(scope="module")
def samples(viewer: str) -> Iterator[tuple[Any, str]]:
    from selenium.webdriver.support.ui import WebDriverWait

    with chromium() as driver:
        driver.get(viewer + "#/tasks/work.eval/samples")
        WebDriverWait(driver, 90).until(lambda d: f"{len(REPS)} rows" in d.page_source)
        yield driver, driver.find_element("tag name", "body").text


def test_the_viewer_lists_one_sample_per_rep_with_the_verdict_scores(
    samples: tuple[Any, str],
) -> None:
    _, text = samples
    listed = f"{len(REPS)} rows" in text and text.count(POSITIVE) >= 2 and NEGATIVE in text
    scored = "VERDICT" in text.upper() and "AXIS_A" in text.upper()
    assert listed and scored, "the samples page lacks a rep or a verdict score column"


def test_the_error_rep_is_an_errored_sample_in_the_viewer(samples: tuple[Any, str]) -> None:
    _, text = samples
    counted = f"1 of {len(REPS)} samples" in text and "had errors and were not scored" in text
    named = "ERROR: no-result-line" in text
    assert counted and named, f"{POSITIVE} rep 2 is not shown as an errored sample"


def test_no_task_line_is_on_the_viewer_s_pages(suite: Suite, samples: tuple[Any, str]) -> None:
    _, text = samples
    lines = {
        line.strip()
        for sid in (POSITIVE, NEGATIVE)
        for line in read_task(suite.resolve(sid)).splitlines()
        if len(line.strip()) > 20
    }
    leaked = any(line in text for line in lines)
    assert not leaked, "a Task line is on the viewer's samples page"
