"""Sandboxes: fresh, git-inited, pristine, and never where a stray CLAUDE.md would leak in."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from evalkit.errors import RefusedError
from evalkit.run.sandbox import SandboxTemplates, build_sandbox
from evalkit.suite.config import Suite


def test_a_sandbox_has_a_git_inited_project_a_pristine_vault_and_a_manifest(
    suite: Suite, tmp_path: Path
) -> None:
    dest = tmp_path / "sbx"
    build_sandbox(suite, suite.resolve("P1"), dest)
    log = subprocess.run(
        ["git", "-C", str(dest / "project"), "log", "--oneline"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert len(log) == len(suite.config.world.history)
    status = subprocess.run(
        ["git", "-C", str(dest / "project"), "status", "--porcelain"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert status == ""
    assert not (dest / "vault" / ".git").exists()
    assert (dest / "vault" / "vault-conventions.md").is_file()
    manifest = json.loads((dest / "sandbox.json").read_text())
    assert manifest["scenario"] == "P1-L1-reporting"
    assert manifest["fixture_hashes"] == suite.fixture_hashes()
    assert manifest["schema_version"] == 1


def test_a_non_empty_destination_is_refused(suite: Suite, tmp_path: Path) -> None:
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "x").write_text("")
    with pytest.raises(RefusedError, match="new or empty"):
        build_sandbox(suite, suite.resolve("P1"), tmp_path / "busy")


def test_a_destination_under_a_claude_md_is_refused_with_the_reason(
    suite: Suite, tmp_path: Path
) -> None:
    (tmp_path / "CLAUDE.md").write_text("# instructions that would leak into every session\n")
    with pytest.raises(RefusedError, match="CLAUDE.md"):
        build_sandbox(suite, suite.resolve("N1"), tmp_path / "deep" / "sbx")


def test_a_scenario_can_leave_a_path_out_of_its_sandbox(suite: Suite, tmp_path: Path) -> None:
    scenario = suite.resolve("P1")
    lacking = scenario.scenario.model_copy(update={"without": ["lib"]})
    assert (suite.fixture_dirs()["project"] / "lib").is_dir()
    build_sandbox(
        suite, type(scenario)(lacking, scenario.path, scenario.sha256, ""), tmp_path / "s"
    )
    assert not (tmp_path / "s" / "project" / "lib").exists()
    assert (tmp_path / "s" / "project" / "README.md").is_file()


def _state(sandbox: Path) -> tuple[dict[str, bytes], str, str]:
    files = {
        p.relative_to(sandbox).as_posix(): p.read_bytes()
        for p in sorted(sandbox.rglob("*"))
        if p.is_file() and ".git" not in p.parts and p.name != "sandbox.json"
    }

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(sandbox / "project"), *args],
                              capture_output=True, text=True, check=True)  # fmt: skip
        return done.stdout

    return files, git("rev-parse", "HEAD"), git("status", "--porcelain")


def test_a_sandbox_copied_from_the_template_is_the_one_built_fresh(
    suite: Suite, tmp_path: Path
) -> None:
    scenario = suite.resolve("P1")
    build_sandbox(suite, scenario, tmp_path / "fresh")
    templates = SandboxTemplates()
    for name in ("first", "second"):
        templates.copy(suite, scenario, tmp_path / name, tmp_path)
        assert _state(tmp_path / name) == _state(tmp_path / "fresh")
    manifest = json.loads((tmp_path / "second" / "sandbox.json").read_text())
    assert manifest["scenario"] == scenario.id


def test_the_template_copy_refuses_what_a_fresh_build_refuses(suite: Suite, tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text("# instructions that would leak into every session\n")
    with pytest.raises(RefusedError, match="CLAUDE.md"):
        SandboxTemplates().copy(suite, suite.resolve("N1"), tmp_path / "sbx", tmp_path)
