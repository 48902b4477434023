"""A folder whose rows were judged by two judge identities is not publishable."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalkit.records.folder.workdir import EVIDENCE_INDEX
from evalkit.records.verify.rederive import verify_workdir
from evalkit.suite.config import Suite

pytestmark = pytest.mark.heavy

COMMAND = "command:sha256:" + "ab" * 32


def test_verify_calls_a_folder_of_two_judges_not_publishable(
    suite: Suite, recorded: Path, tmp_path: Path
) -> None:
    work = Path(shutil.copytree(recorded, tmp_path / "work", symlinks=True))
    manifest = work / EVIDENCE_INDEX
    lines = [json.loads(x) for x in manifest.read_text().splitlines()]
    lines[0]["declarations"]["judge"] = COMMAND
    lines[1]["declarations"]["judge"] = "claude:haiku"
    manifest.write_text("".join(json.dumps(x) + "\n" for x in lines))
    problems = verify_workdir(suite, work).publish_problems
    assert (
        f"rows were judged by 2 judge identities (claude:haiku 1, {COMMAND} 1): a judge is a "
        "factor; split the folder by run id" in problems
    )
