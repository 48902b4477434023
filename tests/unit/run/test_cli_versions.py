"""CLI versions as an axis: ordered as numbers, cached per version, refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.errors import ConfigError, RefusedError
from evalkit.run.prerequisites import cli_versions
from evalkit.run.prerequisites.cli_versions import (
    InstalledCli,
    cache_root,
    check,
    installed,
    missing_options,
    parse_versions,
    prune,
    sort_versions,
)

FULL_HELP = " ".join(cli_versions.OPTIONS)


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv(cli_versions.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "evalkit" / "claude"


def fake_cli(
    root: Path, version: str, answers: str | None = None, help_text: str = FULL_HELP
) -> InstalledCli:
    folder = root / version
    bin_dir = folder / "node_modules" / ".bin"
    bin_dir.mkdir(parents=True)
    script = bin_dir / "claude"
    said = answers or f"{version} (Claude Code)"
    script.write_text(
        f'#!/bin/sh\nif [ "$1" = --version ]; then echo "{said}"; else echo "{help_text}"; fi\n'
    )
    script.chmod(0o755)
    lock = {
        "packages": {"node_modules/@anthropic-ai/claude-code": {"integrity": f"sha512-{version}"}}
    }
    (folder / "package-lock.json").write_text(json.dumps(lock))
    return InstalledCli(version, folder)


def test_versions_are_ordered_as_numbers_never_as_strings() -> None:
    assert sort_versions(["2.1.321", "2.1.4", "2.1.32", "2.0.0"]) == [
        "2.0.0", "2.1.4", "2.1.32", "2.1.321",
    ]  # fmt: skip


def test_a_bad_or_repeated_version_is_one_line() -> None:
    with pytest.raises(ConfigError, match="not a version"):
        parse_versions("2.1")
    with pytest.raises(ConfigError, match="named twice"):
        parse_versions("2.1.327,2.1.327")
    assert parse_versions("2.1.328,2.1.327") == ["2.1.328", "2.1.327"]


def test_the_cache_lives_under_xdg_cache_home(own_cache: Path) -> None:
    assert cache_root() == own_cache


def test_a_version_lacking_an_option_evalkit_passes_is_refused_naming_it(own_cache: Path) -> None:
    old = fake_cli(own_cache, "2.0.0", help_text="--model --output-format --verbose")
    with pytest.raises(ConfigError, match="lacks --include-hook-events"):
        check(old)
    assert missing_options("--model")[:2] == ["--output-format", "--verbose"]


def test_a_cli_answering_another_version_is_refused(own_cache: Path) -> None:
    liar = fake_cli(own_cache, "2.1.327", answers="2.1.328 (Claude Code)")
    with pytest.raises(ConfigError, match="answers --version"):
        check(liar)
    check(fake_cli(own_cache, "2.1.326"))


def test_the_integrity_hash_is_read_from_the_install(own_cache: Path) -> None:
    assert fake_cli(own_cache, "2.1.326").integrity == "sha512-2.1.326"


def test_prune_never_removes_the_pinned_version(own_cache: Path) -> None:
    for version in ("2.1.326", cli_versions.PINNED_VERSION, "2.1.32"):
        fake_cli(own_cache, version)
    assert [c.version for c in installed()] == ["2.1.32", "2.1.326", cli_versions.PINNED_VERSION]
    assert prune() == ["2.1.32", "2.1.326"]
    assert [c.version for c in installed()] == [cli_versions.PINNED_VERSION]


def test_cli_list_and_prune_through_the_command(own_cache: Path) -> None:
    from typer.testing import CliRunner

    import evalkit.cli.main  # noqa: F401  (registers every command)
    from evalkit.cli.main import app

    fake_cli(own_cache, "2.1.326")
    fake_cli(own_cache, cli_versions.PINNED_VERSION)
    listed = CliRunner().invoke(app, ["cli", "list"])
    assert listed.exit_code == 0, listed.output
    assert listed.stdout.splitlines()[0].startswith("2.1.326  sha512-2.1.326")
    assert "(pinned, the default)" in listed.stdout
    pruned = CliRunner().invoke(app, ["cli", "prune"])
    assert pruned.exit_code == 0 and "2.1.326" in pruned.stdout
    assert [c.version for c in installed()] == [cli_versions.PINNED_VERSION]


def test_doctor_checks_the_version_it_is_given(own_cache: Path) -> None:
    from evalkit.run.prerequisites.doctor import check_cli

    fake_cli(own_cache, "2.1.326")
    fake_cli(own_cache, "2.0.0", help_text="--model")
    ok = check_cli("2.1.326")
    assert ok.ok and ok.detail.endswith("(sha512-2.1.326)")
    old = check_cli("2.0.0")
    assert not old.ok and "lacks --output-format" in old.detail


def test_prune_refuses_a_version_a_running_evalkit_holds(own_cache: Path) -> None:
    import subprocess
    import sys

    fake_cli(own_cache, "2.1.326")
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; "
         "from evalkit.run.prerequisites.cli_versions import resolve; "
         "resolve(['2.1.326']); print('held', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(RefusedError, match="2.1.326 is in use"):
            prune()
        assert (own_cache / "2.1.326").is_dir()
    finally:
        holder.communicate("")
    assert prune() == ["2.1.326"]
