"""A path a results folder's records name must lead inside that folder, links followed: a
manifest line pointing elsewhere is tampering, named by `verify` and never read by `report`."""

from __future__ import annotations

import base64
import gzip
import json
import re
import shutil
from pathlib import Path

import pytest

from evalkit.errors import RefusedError
from evalkit.records.folder.confined import Confinement, confined
from evalkit.records.pages.html import write_html
from evalkit.records.verify.rederive import verify_workdir
from evalkit.suite.config import Suite

pytestmark = pytest.mark.heavy

MARK = "planted-outside-7c1e"


@pytest.fixture
def work(recorded: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(recorded, tmp_path / "work", symlinks=True))


@pytest.fixture
def planted(tmp_path: Path) -> Path:
    path = tmp_path / "elsewhere" / "secret.txt"
    path.parent.mkdir()
    path.write_text(MARK)
    return path


def _edit_first_line(work: Path, key: str, value: object) -> str:
    """Set a field of the first manifest line; returns that rep's run id and scenario."""
    path = work / "manifest.jsonl"
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    if isinstance(value, dict):
        lines[0][key].update(value)
    else:
        lines[0][key] = value
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return f"{lines[0]['run_id']} {lines[0]['scenario']}"


def test_a_path_inside_is_given_back_and_one_leading_out_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "a").mkdir(parents=True)
    assert confined(root, "a", "b.txt") == (root / "a" / "b.txt").resolve()
    for parts in (("..", "x"), ("a", "../../x"), ("/etc/passwd",), (".",), ("a", "..")):
        with pytest.raises(RefusedError, match="outside"):
            confined(root, *parts)
    (root / "a" / "link").symlink_to(tmp_path)
    with pytest.raises(RefusedError, match="outside"):
        confined(root, "a", "link", "x")


def test_many_paths_under_one_folder_resolve_the_folder_once_and_read_as_resolve_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    (root / "evidence" / "rep-1").mkdir(parents=True)
    (root / "evidence" / "rep-1" / "stdout.txt").write_text("x")
    (root / "real").mkdir()
    (root / "evidence" / "inner-link").symlink_to(root / "real")
    asked = [
        ("evidence/rep-1", "stdout.txt"),
        ("evidence", "rep-1", "./stdout.txt"),
        ("evidence/rep-1/not-yet", "deeper.txt"),
        ("evidence/rep-1/stdout.txt/under-a-file",),
        ("evidence/inner-link", "y.txt"),
        ("evidence/rep-1/../rep-1", "stdout.txt"),
    ]
    expected = [root.joinpath(*parts).resolve() for parts in asked]
    resolved: list[Path] = []
    real_resolve = Path.resolve

    def counting(self: Path, strict: bool = False) -> Path:
        resolved.append(self)
        return real_resolve(self, strict)

    monkeypatch.setattr(Path, "resolve", counting)
    within = Confinement(root)
    got = [within(*parts) for parts in asked]
    assert got == expected
    plain = 4
    assert len(resolved) == 1 + len(asked) - plain, [str(p) for p in resolved]


def test_one_confinement_still_refuses_every_way_out(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "evidence" / "rep-1").mkdir(parents=True)
    (root / "evidence" / "rep-1" / "out").symlink_to(tmp_path)
    (root / "evidence" / "rep-1" / "file-out").symlink_to(tmp_path / "elsewhere.txt")
    (root / "evidence" / "rep-2").symlink_to(tmp_path)
    within = Confinement(root)
    assert within("evidence/rep-1", "kept.txt") == root.resolve() / "evidence/rep-1/kept.txt"
    for parts in (
        ("evidence/rep-1/out", "x"),
        ("evidence/rep-1", "file-out"),
        ("evidence/rep-2", "x"),
        ("evidence", "../../x"),
        ("/etc/passwd",),
        ("evidence/rep-1", "/etc/passwd"),
        (".",),
        ("evidence/..",),
    ):
        with pytest.raises(RefusedError, match="outside"):
            within(*parts)


def test_verify_names_a_manifest_file_path_leading_outside(
    suite: Suite, work: Path, planted: Path
) -> None:
    rep = _edit_first_line(work, "files", {"stderr": str(planted)})
    got = verify_workdir(suite, work)
    assert not got.publishable
    named = [p for p in got.publish_problems if "outside the folder" in p]
    assert named and rep in named[0] and "stderr" in named[0], got.publish_problems


def test_verify_names_an_evidence_file_linked_outside(
    suite: Suite, work: Path, planted: Path
) -> None:
    line = json.loads((work / "manifest.jsonl").read_text().splitlines()[0])
    kept = work / line["evidence"] / line["files"]["stderr"]
    kept.unlink()
    kept.symlink_to(planted)
    got = verify_workdir(suite, work)
    assert not got.publishable
    assert any("outside the folder" in p for p in got.publish_problems), got.publish_problems


def test_verify_names_a_manifest_evidence_folder_leading_outside(
    suite: Suite, work: Path, planted: Path
) -> None:
    rep = _edit_first_line(work, "evidence", "../elsewhere")
    got = verify_workdir(suite, work)
    assert not got.publishable
    named = [p for p in got.publish_problems if "outside the folder" in p]
    assert named and rep in named[0], got.publish_problems


def test_the_html_page_never_embeds_a_file_a_manifest_points_outside(
    suite: Suite, work: Path, planted: Path, tmp_path: Path
) -> None:
    _edit_first_line(work, "files", {"stderr": str(planted)})
    page = tmp_path / "page.html"
    stats = write_html(suite, work, page, "inline")
    html = page.read_text(encoding="utf-8")
    blob = re.search(r'id="evalkit-evidence">(.*?)</script>', html, re.S)
    assert blob is not None
    unpacked = "".join(
        gzip.decompress(base64.b64decode(b)).decode() for b in json.loads(blob.group(1))
    )
    assert (MARK in unpacked or MARK in html) is False
    assert any("outside the folder" in p for p in stats.problems), stats.problems
