"""The wording loop end to end: the subject changes between runs, the instrument stays frozen."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import Kit

pytestmark = pytest.mark.e2e

SKILL = Path("fixtures/plugins/os-vault/skills/write/SKILL.md")
HOOK = Path("hooks/session-start.sh")
MARKER = "checkout-hook-marker-5d1c"
VARIANTS = "\nvariants:\n  terse-skill: {overlay: variants/terse-skill}\n"


@pytest.fixture(scope="module")
def frozen(
    new_kit: Callable[..., Kit],
    suite_copier: Callable[..., Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> Path:
    """A private copy of the default suite with one variant, frozen once for the module;
    every test edits a copy of it, never this one."""
    base = tmp_path_factory.mktemp("wording-loop")
    root = suite_copier(base / "suite")
    with (root / "evalkit.yaml").open("a") as fh:
        fh.write(VARIANTS)
    terse = root / "variants/terse-skill" / SKILL
    terse.parent.mkdir(parents=True)
    terse.write_text((root / SKILL).read_text().split("\n\n")[0] + "\n")
    done = new_kit(base / "kit", suite=root).run("suite", "freeze")
    assert done.returncode == 0, done.why()
    return root


@pytest.fixture
def world(new_kit: Callable[..., Kit], frozen: Path, tmp_path: Path) -> Kit:
    """A kit driving a fresh copy of the frozen suite."""
    root = tmp_path / "suite"
    shutil.copytree(frozen, root)
    return new_kit(tmp_path / "kit", suite=root)


def manifest_transcript(work: Path, index: int) -> str:
    lines = [json.loads(x) for x in (work / "manifest.jsonl").read_text().splitlines()]
    line = lines[index]
    return (work / line["evidence"] / line["files"]["transcript"]).read_text()


def subjects(kit: Kit, work: Path) -> list[str]:
    return [r["subject_hash"] for r in kit.tsv(work)]


def test_an_edited_skill_runs_without_allow_unfrozen_and_is_a_new_subject(world: Kit) -> None:
    work = world.base / "w"
    first = world.run("run", "P1", "policy:oracle", str(work))
    assert first.returncode == 0, first.why()
    with (world.suite / SKILL).open("a") as fh:
        fh.write("\nWrite the note before you finish.\n")
    second = world.run("run", "P1", "policy:oracle", str(work))
    assert second.returncode == 0, second.why()
    hashes = subjects(world, work)
    assert len(hashes) == 2 and hashes[0] != hashes[1] and all(hashes)
    assert sorted(p.name for p in (work / "subjects").iterdir()) == sorted(
        h.removeprefix("sha256:")[:16] for h in hashes
    )
    verified = world.run("verify", str(work))
    assert verified.returncode == 0, verified.why()
    assert verified.stdout.strip().endswith("PUBLISHABLE")
    compared = world.run("compare", str(work), "--a", f"run:{_run_ids(world, work)[0]}",
                         "--b", f"run:{_run_ids(world, work)[1]}", "--format", "json")  # fmt: skip
    assert compared.returncode == 0, compared.why()
    assert json.loads(compared.stdout)["differing"] == ["subject"]


def _run_ids(kit: Kit, work: Path) -> list[str]:
    return list(dict.fromkeys(r["run_id"] for r in kit.tsv(work)))


def test_an_edited_scenario_still_refuses(world: Kit) -> None:
    scenario = next((world.suite / "scenarios").glob("P1*.md"))
    scenario.write_text(scenario.read_text() + "\n")
    done = world.run("run", "P1", "policy:oracle", str(world.base / "w"))
    assert done.returncode == 2
    assert "scenarios:run" in done.stderr and "--allow-unfrozen" in done.stderr


def test_an_outside_plugin_copy_is_the_one_whose_hook_fires(world: Kit) -> None:
    checkout = world.base / "checkout" / "os-vault"
    shutil.copytree(world.suite / "fixtures/plugins/os-vault", checkout)
    hook = checkout / HOOK
    hook.write_text(hook.read_text().replace("exit 0", f'echo "{MARKER}"\nexit 0'))
    work = world.base / "w"
    done = world.run("run", "P1", "policy:oracle", str(work), "--plugin", str(checkout))
    assert done.returncode == 0, done.why()
    assert MARKER in manifest_transcript(work, 0)
    plain = world.run("run", "P1", "policy:oracle", str(work))
    assert plain.returncode == 0, plain.why()
    assert MARKER not in manifest_transcript(work, 1)
    assert len(set(subjects(world, work))) == 2


def test_a_variant_runs_its_overlay_and_a_confounded_compare_is_refused(world: Kit) -> None:
    work = world.base / "w"
    base = world.run("run", "N1", "policy:oracle", str(work))
    assert base.returncode == 0, base.why()
    terse = world.run("run", "N1", "policy:always-write", str(work), "--variant", "terse-skill")
    assert terse.returncode == 0, terse.why()
    assert [r["variant"] for r in world.tsv(work)] == ["suite", "terse-skill"]
    refused = world.run("compare", str(work), "--a", "variant:suite", "--b", "variant:terse-skill")
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1 and "differ in subject, model" in refused.stderr
    allowed = world.run("compare", str(work), "--a", "variant:suite", "--b",
                        "variant:terse-skill", "--allow-confounded")  # fmt: skip
    assert allowed.returncode == 0, allowed.why()
    assert "CONFOUNDED: A and B differ in subject, model" in allowed.stdout


def test_a_two_variant_grid_verifies_and_resumes_each_variants_missing_reps(world: Kit) -> None:
    work = world.base / "w"
    grid = ("grid", str(work), "--models", "policy:oracle", "--scenarios", "P1",
            "--variants", "suite,terse-skill")  # fmt: skip
    first = world.run(*grid, "--reps", "1")
    assert first.returncode == 0, first.why()
    resumed = world.run(*grid, "--reps", "2", "--resume")
    assert resumed.returncode == 0, resumed.why()
    assert "resuming: 2 rep(s) left to run" in resumed.stdout, resumed.why()
    rows = sorted((r["variant"], r["rep"]) for r in world.tsv(work))
    assert rows == [("suite", "1"), ("suite", "3"), ("terse-skill", "2"), ("terse-skill", "4")]
    verified = world.run("verify", str(work))
    assert verified.returncode == 0, verified.why()
    assert verified.stdout.strip().endswith("PUBLISHABLE")


def test_report_tables_each_variant_of_a_grid_apart(world: Kit) -> None:
    work = world.base / "w"
    grid = world.run("grid", str(work), "--models", "policy:oracle", "--scenarios", "P1,N1",
                     "--variants", "suite,terse-skill", "--reps", "1")  # fmt: skip
    assert grid.returncode == 0, grid.why()
    done = world.run("report", str(work), "--format", "json")
    assert done.returncode == 0, done.why()
    report = json.loads(done.stdout)
    assert [(s["variant"], s["rows"]) for s in report["subjects"]] == [
        ("suite", 2),
        ("terse-skill", 2),
    ]
    cells = [
        (c["variant"], c["polarity"], c["pass_rate"]["n"]) for c in report["levels"][0]["cells"]
    ]
    assert sorted(cells) == [
        ("suite", "negative", 1),
        ("suite", "positive", 1),
        ("terse-skill", "negative", 1),
        ("terse-skill", "positive", 1),
    ]
    assert report["inner_loop"] is False


def test_a_variant_is_compared_with_the_recorded_baseline(world: Kit) -> None:
    base, terse = world.base / "base", world.base / "terse"
    assert world.run("run", "N1", "policy:oracle", str(base)).returncode == 0
    recorded = world.run("suite", "baseline", str(base))
    assert recorded.returncode == 0, recorded.why()
    after = world.run("run", "N1", "policy:oracle", str(terse), "--variant", "terse-skill")
    assert after.returncode == 0, after.why()
    compared = world.run("compare", str(terse), "--format", "json")
    assert compared.returncode == 0, compared.why()
    got = json.loads(compared.stdout)
    assert got["a"]["baseline"] and got["a"]["workdir"] == str(base.resolve())
    assert got["differing"] == ["subject"]
