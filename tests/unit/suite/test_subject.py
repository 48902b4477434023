"""The subject (wording under test) against the instrument (everything the lock freezes)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evalkit.errors import ConfigError, NotFoundError, RefusedError
from evalkit.models import ResultRow
from evalkit.run.grid import failing_cells
from evalkit.suite.config import Suite
from evalkit.suite.lock import drift, ensure_frozen, freeze, read_lock
from evalkit.suite.subject import build_subject, fixture_subject_paths
from tests.conftest import REPO

SKILL = "fixtures/plugins/os-vault/skills/write/SKILL.md"
PARTS = ("evalkit.yaml", "scenarios", "scenarios-reserve", "fixtures", "judge-rubric.md")


def copy_suite(dest: Path, config_extra: str = "") -> Suite:
    dest.mkdir(parents=True, exist_ok=True)
    for part in PARTS:
        src = REPO / part
        if src.is_dir():
            shutil.copytree(src, dest / part)
        else:
            shutil.copy2(src, dest / part)
    if config_extra:
        with (dest / "evalkit.yaml").open("a") as fh:
            fh.write(config_extra)
    return Suite(dest)


def test_editing_the_skill_leaves_the_lock_satisfied(tmp_path: Path) -> None:
    suite = copy_suite(tmp_path)
    freeze(suite)
    before = build_subject(suite).hash
    with (tmp_path / SKILL).open("a") as fh:
        fh.write("\nOne more sentence of wording.\n")
    suite = Suite(tmp_path)
    lock = read_lock(suite)
    assert lock is not None and drift(suite, lock) == []
    ensure_frozen(suite)
    assert build_subject(suite).hash != before


def test_editing_a_scenario_still_refuses(tmp_path: Path) -> None:
    suite = copy_suite(tmp_path)
    freeze(suite)
    scenario = next((tmp_path / "scenarios").glob("N1*.md"))
    scenario.write_text(scenario.read_text() + "\n")
    with pytest.raises(RefusedError, match="scenarios:run"):
        ensure_frozen(Suite(tmp_path))


def test_an_outside_plugin_copy_replaces_the_suite_plugin(tmp_path: Path) -> None:
    suite = copy_suite(tmp_path / "suite")
    copy = tmp_path / "checkout" / "os-vault"
    shutil.copytree(tmp_path / "suite/fixtures/plugins/os-vault", copy)
    (copy / "skills/write/SKILL.md").write_text("checkout wording\n")
    subject = build_subject(suite, [copy])
    assert subject.outside == {"fixtures/plugins/os-vault": str(copy.resolve())}
    assert (subject.plugin_dirs()[0] / "skills/write/SKILL.md").read_text() == "checkout wording\n"
    assert subject.hash != build_subject(suite).hash


def test_a_plugin_folder_without_a_manifest_is_refused(tmp_path: Path) -> None:
    suite = copy_suite(tmp_path / "suite")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="not a plugin folder"):
        build_subject(suite, [tmp_path / "empty"])


def test_a_plugin_the_suite_does_not_load_is_refused(tmp_path: Path) -> None:
    suite = copy_suite(tmp_path / "suite")
    other = tmp_path / "other"
    (other / ".claude-plugin").mkdir(parents=True)
    (other / ".claude-plugin/plugin.json").write_text('{"name": "something-else"}')
    with pytest.raises(ConfigError, match="not one of the suite's plugins"):
        build_subject(suite, [other])


@pytest.mark.parametrize("manifest", ["{not json", "[]", "{}", '{"name": ""}'])
def test_a_plugin_copy_whose_manifest_does_not_read_is_refused_like_the_suites(
    tmp_path: Path, manifest: str
) -> None:
    suite = copy_suite(tmp_path / "suite")
    copy = tmp_path / "checkout" / "os-vault"
    shutil.copytree(tmp_path / "suite/fixtures/plugins/os-vault", copy)
    (copy / ".claude-plugin/plugin.json").write_text(manifest)
    with pytest.raises(ConfigError) as caught:
        build_subject(suite, [copy])
    assert "plugin.json" in str(caught.value) and "\n" not in str(caught.value)


VARIANTS = """
variants:
  baseline: {}
  terse-skill: {overlay: variants/terse-skill}
  sneaky: {overlay: variants/sneaky}
"""


def test_a_variant_overlays_subject_files_only(tmp_path: Path) -> None:
    suite = copy_suite(tmp_path, VARIANTS)
    terse = tmp_path / "variants/terse-skill" / SKILL
    terse.parent.mkdir(parents=True)
    terse.write_text("terse\n")
    subject = build_subject(suite, variant="terse-skill")
    assert subject.variant == "terse-skill"
    assert (subject.root / SKILL).read_text() == "terse\n"
    assert build_subject(suite, variant="baseline").hash == build_subject(suite).hash
    sneaky = tmp_path / "variants/sneaky/judge-rubric.md"
    sneaky.parent.mkdir(parents=True)
    sneaky.write_text("a friendlier rubric\n")
    with pytest.raises(ConfigError, match="part of the instrument"):
        build_subject(suite, variant="sneaky")
    with pytest.raises(NotFoundError, match="no variant 'missing'"):
        build_subject(suite, variant="missing")


def test_a_fixture_claude_md_named_as_subject_leaves_the_fixture_hash(tmp_path: Path) -> None:
    extra = "subject: [fixtures/plugins/os-vault, fixtures/project/CLAUDE.md]\n"
    suite = copy_suite(tmp_path / "s", extra)
    (suite.root / "fixtures/project/CLAUDE.md").write_text("first wording\n")
    suite = Suite(suite.root)
    assert fixture_subject_paths(suite) == {"project": ["CLAUDE.md"]}
    freeze(suite)
    first = build_subject(suite)
    (suite.root / "fixtures/project/CLAUDE.md").write_text("second wording\n")
    suite = Suite(suite.root)
    ensure_frozen(suite)
    second = build_subject(suite)
    assert second.hash != first.hash
    baseline = second.baselines(suite)["project"]
    assert (baseline / "CLAUDE.md").read_text() == "second wording\n"
    assert baseline != suite.fixture_dirs()["project"]


def row(scenario: str, verdict: str) -> ResultRow:
    return ResultRow.model_validate(
        {"scenario": scenario, "model": "m", "a": "-", "b": "-", "verdict": verdict,
         "reasons": "-", "variant": "suite"}
    )  # fmt: skip


def test_the_inner_loop_takes_failed_cells_and_one_control_per_level(suite: Suite) -> None:
    ids = {s.id.split("-")[0]: s.id for s in suite.scenarios("run")}
    rows = [
        row(ids["P1"], "PASS"),
        row(ids["N1"], "PASS"),
        row(ids["P2"], "FAIL"),
        row(ids["N2"], "PASS"),
        row(ids["P3"], "PASS"),
        row(ids["N3"], "FAIL"),
    ]
    cells = failing_cells(suite, rows, reps=2, controls=1)
    chosen = sorted({c.scenario.id.split("-")[0] for c in cells})
    assert chosen == ["N2", "N3", "P1", "P2", "P3"]
    assert len(cells) == 10


def test_the_inner_loop_numbers_two_failed_variants_of_a_cell_apart(suite: Suite) -> None:
    scenario = suite.scenarios("run")[0].id
    rows = [row(scenario, "FAIL"), row(scenario, "FAIL").model_copy(update={"variant": "terse"})]
    cells = failing_cells(suite, rows, reps=2, controls=0)
    numbered = sorted((c.rep, c.variant) for c in cells)
    assert numbered == [(1, ""), (2, "terse"), (3, ""), (4, "terse")]


@pytest.mark.parametrize("name", ["suite", "none", "''", "'../x'", "-x", "'a b'", "x" * 65])
def test_a_variant_name_evalkit_reserves_or_that_is_no_name_is_refused_at_load(
    tmp_path: Path, name: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        copy_suite(tmp_path, f"\nvariants:\n  {name}: {{overlay: variants/x}}\n")
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'evalkit.yaml'}:") and "variants" in message, message
    assert "\n" not in message


@pytest.mark.parametrize("name", ["", "../x", "a/b", "-x"])
def test_a_variant_name_on_the_command_line_must_be_a_name(tmp_path: Path, name: str) -> None:
    suite = copy_suite(tmp_path, VARIANTS)
    with pytest.raises(ConfigError, match="variant"):
        build_subject(suite, variant=name)


def test_the_variant_suite_on_the_command_line_is_the_suites_own_wording(tmp_path: Path) -> None:
    suite = copy_suite(tmp_path, VARIANTS)
    own = build_subject(suite, variant="suite")
    assert own.variant == "suite" and own.hash == build_subject(suite).hash


def test_the_none_variant_leaves_out_every_subject_path(tmp_path: Path) -> None:
    extra = "subject: [fixtures/plugins/os-vault, fixtures/project/CLAUDE.md]\n"
    suite = copy_suite(tmp_path / "s", extra)
    (suite.root / "fixtures/project/CLAUDE.md").write_text("wording under test\n")
    suite = Suite(suite.root)
    subject = build_subject(suite, variant="none")
    assert subject.variant == "none" and subject.plugin_dirs() == []
    assert subject.hash != build_subject(suite).hash
    sandbox = tmp_path / "sandbox"
    shutil.copytree(suite.root / "fixtures/project", sandbox / "project")
    subject.apply(suite, sandbox)
    assert not (sandbox / "project/CLAUDE.md").exists()
    baseline = subject.baselines(suite)["project"]
    assert not (baseline / "CLAUDE.md").exists()


def test_the_none_variant_takes_no_plugin_copy(tmp_path: Path) -> None:
    suite = copy_suite(tmp_path / "suite")
    copy = tmp_path / "checkout" / "os-vault"
    shutil.copytree(tmp_path / "suite/fixtures/plugins/os-vault", copy)
    with pytest.raises(ConfigError, match="--variant none loads no plugin"):
        build_subject(suite, [copy], "none")
