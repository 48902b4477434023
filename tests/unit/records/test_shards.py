"""Shards of one grid, fabricated and recorded for real: what `merge` accepts, what it refuses
without writing a byte, and how `verify` and `report` hold a sharded folder to its grid."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from evalkit.errors import RefusedError
from evalkit.records.folder.appendlog import append_locked
from evalkit.records.merge import merge
from evalkit.records.report.build import build_report
from evalkit.records.verify.rederive import verify_workdir
from evalkit.suite.config import Suite
from tests.unit.records.folder import shard_folder

GRID = [("N1-L1-reporting", "policy:oracle", 1), ("P1-L1-reporting", "policy:oracle", 1)]
"""Two reps: shard 1/2 holds N1's, shard 2/2 P1's; shard 2/3 holds P1's, 3/3 nothing."""


@pytest.fixture(scope="module")
def recorded(suite: Suite, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("shards")
    made = {
        "1/2": shard_folder(suite, base / "s1", GRID, "1/2"),
        "2/2": shard_folder(suite, base / "s2", GRID, "2/2"),
        "1/2 again": shard_folder(suite, base / "s1b", GRID, "1/2", run_id="rfab00000002"),
        "2/3": shard_folder(suite, base / "t2", GRID, "2/3"),
    }
    return {name: ctx.workdir for name, ctx in made.items()}


@pytest.fixture
def shards(recorded: dict[str, Path], tmp_path: Path) -> dict[str, Path]:
    """Private copies (their records name paths relative to themselves)."""
    return {
        name: Path(shutil.copytree(folder, tmp_path / "in" / folder.name, symlinks=True))
        for name, folder in recorded.items()
    }


def _snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every path under folder, with a file's bytes (None for a folder)."""
    if not folder.exists():
        return {}
    return {
        str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(folder.rglob("*"))
    }


def _edit_manifest(folder: Path, **changes: object) -> None:
    """Change the first manifest line's fields (a dict value is merged into the field)."""
    path = folder / "manifest.jsonl"
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    for key, value in changes.items():
        if isinstance(value, dict):
            lines[0][key].update(value)
        else:
            lines[0][key] = value
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_every_shard_merged_verifies_publishable(
    suite: Suite, shards: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "merged"
    merge(out, [shards["1/2"], shards["2/2"]])
    got = verify_workdir(suite, out)
    assert got.publishable, got.publish_problems + got.count_problems
    assert not build_report(suite, out).incomplete


def test_a_lone_shard_is_not_publishable_and_names_the_missing_shard(
    suite: Suite, shards: dict[str, Path]
) -> None:
    got = verify_workdir(suite, shards["1/2"])
    assert not got.publishable
    named = [p for p in got.publish_problems if "missing shard(s) 2/2" in p]
    assert named and "1 of its 2 rep(s) not planned here" in named[0], got.publish_problems


def test_one_shard_of_two_merged_is_not_publishable_and_the_report_is_incomplete(
    suite: Suite, shards: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "merged"
    merge(out, [shards["1/2"]])
    got = verify_workdir(suite, out)
    assert not got.publishable
    assert any("missing shard(s) 2/2" in p for p in got.publish_problems), got.publish_problems
    report = build_report(suite, out)
    assert json.loads(report.model_dump_json())["incomplete"] is True
    assert any("missing shard(s) 2/2" in g for g in report.grid_gaps), report.grid_gaps


def test_the_same_shard_under_two_run_ids_is_refused_and_nothing_written(
    shards: dict[str, Path], tmp_path: Path
) -> None:
    fresh = tmp_path / "fresh"
    with pytest.raises(RefusedError, match="already in"):
        merge(fresh, [shards["1/2"], shards["2/2"], shards["1/2 again"]])
    assert not fresh.exists()
    out = tmp_path / "merged"
    merge(out, [shards["1/2"], shards["2/2"]])
    before = _snapshot(out)
    with pytest.raises(RefusedError, match="already in"):
        merge(out, [shards["1/2 again"]])
    assert _snapshot(out) == before


def test_a_folder_holding_one_shard_twice_is_named_by_verify(
    suite: Suite, shards: dict[str, Path], tmp_path: Path
) -> None:
    """As an older `merge` left it: shard 1/2 run twice, under two run ids, in one folder."""
    out = tmp_path / "twice"
    merge(out, [shards["1/2"], shards["2/2"]])
    again = shards["1/2 again"]
    for name in ("plans.jsonl", "manifest.jsonl"):
        with (out / name).open("a") as fh:
            fh.write((again / name).read_text())
    with (out / "results.tsv").open("a") as fh:
        fh.write("".join((again / "results.tsv").read_text().splitlines(keepends=True)[1:]))
    shutil.copytree(again / "evidence" / "rfab00000002", out / "evidence" / "rfab00000002")
    got = verify_workdir(suite, out)
    assert not got.publishable
    named = [p for p in got.publish_problems if "shard 1/2 under 2 run ids" in p]
    assert named, got.publish_problems
    assert "rfab00000001" in named[0] and "rfab00000002" in named[0], named


def test_shards_cut_with_different_n_are_refused(
    suite: Suite, shards: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "merged"
    with pytest.raises(RefusedError, match="cut with different N"):
        merge(out, [shards["1/2"], shards["2/3"]])
    assert not out.exists()


def test_a_shard_missing_an_evidence_folder_leaves_the_target_as_it_was(
    suite: Suite, shards: dict[str, Path], tmp_path: Path
) -> None:
    broken = Path(shutil.copytree(shards["2/2"], tmp_path / "broken"))
    shutil.rmtree(broken / "evidence")
    fresh = tmp_path / "fresh"
    with pytest.raises(RefusedError, match="evidence"):
        merge(fresh, [shards["1/2"], broken])
    assert not fresh.exists()

    out = tmp_path / "merged"
    merge(out, [shards["1/2"]])
    before = _snapshot(out)
    with pytest.raises(RefusedError, match="evidence"):
        merge(out, [broken])
    assert _snapshot(out) == before
    merge(out, [shards["2/2"]])
    assert verify_workdir(suite, out).publishable


def test_a_manifest_evidence_path_leading_outside_is_refused_before_writing(
    shards: dict[str, Path], tmp_path: Path
) -> None:
    source = shards["2/2"]
    planted = source.parent / "planted"
    (planted / "inside").mkdir(parents=True)
    (planted / "inside" / "x.txt").write_text("x")
    _edit_manifest(source, evidence="../planted/inside")
    out = tmp_path / "a" / "merged"
    with pytest.raises(RefusedError, match="outside"):
        merge(out, [shards["1/2"], source])
    assert not out.exists()
    assert not (tmp_path / "a" / "planted").exists()


def test_a_manifest_file_path_leading_outside_is_refused_by_merge(
    shards: dict[str, Path], tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    _edit_manifest(shards["2/2"], files={"stderr": str(secret)})
    out = tmp_path / "merged"
    with pytest.raises(RefusedError, match="outside"):
        merge(out, [shards["1/2"], shards["2/2"]])
    assert not out.exists()


def test_a_failure_while_appending_undoes_the_whole_merge(
    suite: Suite, shards: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "merged"
    merge(out, [shards["1/2"]])
    before = _snapshot(out)
    calls: list[Path] = []

    def full_disk(path: Path, data: bytes, header: bytes = b"") -> None:
        calls.append(path)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        append_locked(path, data, header)

    monkeypatch.setattr("evalkit.records.merge.append_locked", full_disk)
    with pytest.raises(OSError):
        merge(out, [shards["2/2"]])
    assert len(calls) == 2 and _snapshot(out) == before
    monkeypatch.undo()
    merge(out, [shards["2/2"]])
    assert verify_workdir(suite, out).publishable


def test_the_merge_command_refuses_in_one_line_with_exit_2(
    shards: dict[str, Path], tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from evalkit.cli.main import app
    from tests.conftest import REPO

    broken = Path(shutil.copytree(shards["2/2"], tmp_path / "broken"))
    shutil.rmtree(broken / "evidence")
    out = tmp_path / "merged"
    for pair in ([shards["1/2"], broken], [shards["1/2"], shards["2/3"]]):
        args = ["--suite", str(REPO), "merge", str(out), *map(str, pair)]
        done = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
        assert done.exit_code == 2 and done.stderr.count("\n") == 1, done.stderr
        assert not out.exists()


def test_two_manifest_lines_naming_one_evidence_folder_are_refused_before_writing(
    shards: dict[str, Path], tmp_path: Path
) -> None:
    source = shards["2/2"]
    first = (source / "manifest.jsonl").read_text().splitlines()[0]
    other = json.loads(first) | {"rep": 2}
    with (source / "manifest.jsonl").open("a") as fh:
        fh.write(json.dumps(other) + "\n")
    out = tmp_path / "merged"
    with pytest.raises(RefusedError, match="named twice"):
        merge(out, [shards["1/2"], source])
    assert not out.exists()


def test_a_source_holding_one_shard_under_two_run_ids_is_refused(
    shards: dict[str, Path], tmp_path: Path
) -> None:
    """As an older `merge` left a folder: it cannot be merged on as if it were one grid."""
    twice = tmp_path / "twice"
    merge(twice, [shards["1/2"]])
    again = shards["1/2 again"]
    for name in ("plans.jsonl", "manifest.jsonl"):
        with (twice / name).open("a") as fh:
            fh.write((again / name).read_text())
    shutil.copytree(again / "evidence" / "rfab00000002", twice / "evidence" / "rfab00000002")
    out = tmp_path / "merged"
    with pytest.raises(RefusedError, match="already in"):
        merge(out, [twice, shards["2/2"]])
    assert not out.exists()


def test_one_shard_named_twice_in_one_merge_is_refused(
    shards: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "merged"
    with pytest.raises(RefusedError, match="merged twice"):
        merge(out, [shards["1/2"], shards["1/2"]])
    assert not out.exists()


def _evidence_pairs(out: Path, shard: Path) -> list[tuple[Path, Path]]:
    return [
        (path, shard / path.relative_to(out))
        for path in sorted((out / "evidence").rglob("*"))
        if path.is_file()
    ]


def test_merged_evidence_is_hard_linked_to_the_shards_on_one_file_system(
    shards: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "merged"
    merge(out, [shards["1/2"], shards["2/2"]])
    pairs = _evidence_pairs(out, shards["1/2"]) + _evidence_pairs(out, shards["2/2"])
    linked = [merged.samefile(kept) for merged, kept in pairs if kept.is_file()]
    assert len(linked) >= 2 and all(linked), [str(m) for m, _ in pairs]


def test_merge_copies_evidence_where_a_hard_link_is_refused(
    suite: Suite, shards: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def cross_device(source: str, target: str) -> None:
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr("evalkit.records.merge.os.link", cross_device)
    out = tmp_path / "merged"
    merge(out, [shards["1/2"], shards["2/2"]])
    pairs = [(m, k) for m, k in _evidence_pairs(out, shards["1/2"]) if k.is_file()]
    assert pairs and not any(m.samefile(k) for m, k in pairs)
    assert all(m.read_bytes() == k.read_bytes() for m, k in pairs)
    assert verify_workdir(suite, out).publishable


def _first_evidence(folder: Path) -> Path:
    line = json.loads((folder / "manifest.jsonl").read_text().splitlines()[0])
    return folder / line["evidence"]


@pytest.mark.parametrize("where", ["top", "nested"])
def test_evidence_holding_a_link_is_refused_before_writing(
    shards: dict[str, Path], tmp_path: Path, where: str
) -> None:
    evidence = _first_evidence(shards["2/2"])
    kept = next(p for p in sorted(evidence.iterdir()) if p.is_file())
    folder = evidence / "deeper" if where == "nested" else evidence
    folder.mkdir(exist_ok=True)
    (folder / "extra-link").symlink_to(kept)
    out = tmp_path / "merged"
    with pytest.raises(RefusedError, match="holds a link"):
        merge(out, [shards["1/2"], shards["2/2"]])
    assert not out.exists()


def test_a_kept_file_replaced_by_a_link_out_is_refused_before_writing(
    shards: dict[str, Path], tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    line = json.loads((shards["2/2"] / "manifest.jsonl").read_text().splitlines()[0])
    kept = shards["2/2"] / line["evidence"] / line["files"]["stderr"]
    kept.unlink()
    kept.symlink_to(secret)
    out = tmp_path / "merged"
    with pytest.raises(RefusedError, match="outside"):
        merge(out, [shards["1/2"], shards["2/2"]])
    assert not out.exists()


def test_a_merged_folder_holds_each_sources_records_and_evidence_as_they_were(
    shards: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "merged"
    merge(out, [shards["1/2"], shards["2/2"]])
    for name in ("manifest.jsonl", "results.tsv"):
        merged = (out / name).read_text().splitlines()
        for source in (shards["1/2"], shards["2/2"]):
            mine = [x for x in (source / name).read_text().splitlines() if x.strip()]
            assert all(x in merged for x in mine), (name, str(source))
    pairs = _evidence_pairs(out, shards["1/2"]) + _evidence_pairs(out, shards["2/2"])
    pairs = [(m, k) for m, k in pairs if k.is_file()]
    assert pairs and all(m.read_bytes() == k.read_bytes() for m, k in pairs)
    listed = {p.relative_to(out) for p in (out / "evidence").rglob("*")}
    kept = {
        p.relative_to(source)
        for source in (shards["1/2"], shards["2/2"])
        for p in (source / "evidence").rglob("*")
    }
    assert listed == kept


def test_a_manifest_line_is_merged_as_the_text_it_was_written_in(
    shards: dict[str, Path], tmp_path: Path
) -> None:
    path = shards["2/2"] / "manifest.jsonl"
    first, *rest = [x for x in path.read_text().splitlines() if x.strip()]
    reordered = dict(reversed(list(json.loads(first).items())))
    written = json.dumps(reordered, separators=(", ", ": "))
    path.write_text("\n".join([written, *rest]) + "\n\n")
    out = tmp_path / "merged"
    merge(out, [shards["1/2"], shards["2/2"]])
    assert written in (out / "manifest.jsonl").read_text().splitlines()


def test_a_manifest_changed_while_merging_is_refused_and_the_merge_undone(
    shards: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalkit.records import merge as merging

    real = merging.carry_file
    manifest = shards["2/2"] / "manifest.jsonl"

    def meddling(source: str, target: str) -> None:
        manifest.write_text(manifest.read_text() + manifest.read_text().splitlines()[0] + "\n")
        real(source, target)

    monkeypatch.setattr(merging, "carry_file", meddling)
    out = tmp_path / "merged"
    with pytest.raises(RefusedError, match="changed while it was being merged"):
        merge(out, [shards["1/2"], shards["2/2"]])
    assert not out.exists()


def test_a_failure_while_linking_evidence_removes_every_folder_the_merge_made(
    suite: Suite, shards: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "merged"
    merge(out, [shards["1/2"]])
    before = _snapshot(out)
    linked: list[str] = []

    def failing(source: str, target: str) -> None:
        linked.append(target)
        if len(linked) == 3:
            raise OSError(28, "No space left on device")
        shutil.copyfile(source, target)

    monkeypatch.setattr("evalkit.records.merge.carry_file", failing)
    with pytest.raises(OSError):
        merge(out, [shards["2/2"]])
    assert len(linked) == 3 and _snapshot(out) == before


def test_a_link_put_in_an_evidence_folder_after_the_check_is_not_carried(
    shards: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalkit.records import merge as merging

    line = json.loads((shards["2/2"] / "manifest.jsonl").read_text().splitlines()[0])
    folder = shards["2/2"] / line["evidence"]
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    real = merging._write

    def late(*args: object) -> None:
        (folder / "late.txt").symlink_to(secret)
        real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(merging, "_write", late)
    out = tmp_path / "merged"
    merge(out, [shards["1/2"], shards["2/2"]])
    carried = out / line["evidence"]
    assert carried.is_dir() and not os.path.lexists(carried / "late.txt")


def test_an_evidence_folder_holding_a_folder_is_carried_whole(
    shards: dict[str, Path], tmp_path: Path
) -> None:
    line = json.loads((shards["2/2"] / "manifest.jsonl").read_text().splitlines()[0])
    folder = shards["2/2"] / line["evidence"]
    (folder / "extra" / "empty").mkdir(parents=True)
    (folder / "extra" / "note.txt").write_text("kept")
    out = tmp_path / "merged"
    merge(out, [shards["1/2"], shards["2/2"]])
    carried = out / line["evidence"]
    assert (carried / "extra" / "empty").is_dir()
    assert (carried / "extra" / "note.txt").read_text() == "kept"
