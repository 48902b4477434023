"""Each agent's per-rep config home: the scripted server as its only model, its own retries
off, the suite's skills and hooks where that agent loads them, nothing of the user's."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest

from evalkit.run.agents.codex import patch_moves, prepare_codex
from evalkit.run.agents.gemini import SCRIPTED_KEY, prepare_gemini
from evalkit.scoring.world.markers import Markers


def plugin(tmp_path: Path) -> Path:
    root = tmp_path / "plugins" / "0-os-vault"
    (root / "skills" / "write").mkdir(parents=True)
    (root / "skills" / "write" / "SKILL.md").write_text("---\nname: write\n---\n")
    (root / "hooks").mkdir()
    hooks = {
        "SessionStart": [
            {
                "hooks": [
                    {
                        "type": "command",
                        "timeout": 10,
                        "command": '"${CLAUDE_PLUGIN_ROOT}/hooks/s.sh"',
                    }
                ]
            }
        ],
        "SessionEnd": [{"hooks": [{"type": "command", "command": "true"}]}],
    }
    (root / "hooks" / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    return root


def test_codex_home(tmp_path: Path) -> None:
    scratch = tmp_path / "rep"
    (scratch / "codex-home").mkdir(parents=True)
    env = {"PATH": "/bin", "OPENAI_API_KEY": "users-key", "ANTHROPIC_API_KEY": "k"}
    launch = prepare_codex(
        Path("/c/codex"), scratch, "http://127.0.0.1:9", "m", [plugin(tmp_path)], env
    )
    config = tomllib.loads((launch.home / "config.toml").read_text())
    provider = config["model_providers"][config["model_provider"]]
    assert provider["base_url"] == "http://127.0.0.1:9/v1" and provider["wire_api"] == "responses"
    assert provider["request_max_retries"] == provider["stream_max_retries"] == 0
    assert config["analytics"]["enabled"] is False
    assert (launch.home / "skills" / "os-vault:write" / "SKILL.md").is_file()
    hooks = json.loads((launch.home / "hooks.json").read_text())["hooks"]
    assert sorted(hooks) == ["SessionStart", "Stop"]
    command = hooks["SessionStart"][0]["hooks"][0]["command"]
    assert "hookrec.py" in command and "0-os-vault/hooks/s.sh" in command
    assert "OPENAI_API_KEY" not in launch.env and "ANTHROPIC_API_KEY" not in launch.env
    assert launch.env["CODEX_HOME"] == str(launch.home)
    assert "-p" not in launch.command and "--dangerously-bypass-hook-trust" in launch.command


def test_gemini_home(tmp_path: Path) -> None:
    scratch = tmp_path / "rep"
    env = {"PATH": "/bin", "GEMINI_API_KEY": "users-key", "HOME": "/home/someone"}
    command, child = prepare_gemini(
        Path("/g/gemini"), scratch, "http://127.0.0.1:9", "m", [plugin(tmp_path)], env
    )
    home = Path(child["HOME"])
    assert home.is_relative_to(scratch) and child["GEMINI_API_KEY"] == SCRIPTED_KEY
    settings = json.loads((home / ".gemini" / "settings.json").read_text())
    assert settings["general"]["maxAttempts"] == 1
    assert settings["security"]["auth"]["selectedType"] == "gemini-api-key"
    assert sorted(settings["hooks"]) == ["SessionEnd", "SessionStart"]
    assert settings["hooks"]["SessionStart"][0]["hooks"][0]["timeout"] == 10000
    assert (home / ".gemini" / "skills" / "write" / "SKILL.md").is_file()
    assert child["GOOGLE_GEMINI_BASE_URL"] == "http://127.0.0.1:9"
    assert "-p" not in command and "--skip-trust" in command


def test_codexs_home_in_a_world_names_nothing_measured_and_is_found_where_a_users_is(
    tmp_path: Path,
) -> None:
    scratch = tmp_path / "evalkit-rep-1"
    (scratch / "codex-home").mkdir(parents=True)
    roots = ["/home/alex/.local/share/claude/plugins/os-vault"]
    launch = prepare_codex(
        Path("/c/codex"), scratch, "http://127.0.0.1:9", "gpt-5-codex", [plugin(tmp_path)],
        {"PATH": "/bin"}, None, "/home/alex", roots,
    )  # fmt: skip
    assert "CODEX_HOME" not in launch.env  # HOME's ~/.codex, as on a user's machine
    texts = [(launch.home / n).read_text() for n in ("config.toml", "hooks.json")]
    texts += [f"{k}={v}" for k, v in launch.env.items()]
    assert [t for t in texts if Markers().find(t)] == []
    command = json.loads(texts[1])["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert "/home/alex/.local/lib/hooks/" in command and f"{roots[0]}/hooks/s.sh" in command
    assert str(scratch) not in command


def test_geminis_settings_in_a_world_name_nothing_measured_and_its_world_folders(
    tmp_path: Path,
) -> None:
    scratch = tmp_path / "evalkit-rep-1"
    roots = ["/home/alex/.local/share/claude/plugins/os-vault"]
    workspace = ["/home/alex/src/app", "/home/alex/Notes"]
    _, child = prepare_gemini(
        Path("/g/gemini"), scratch, "http://127.0.0.1:9", "gemini-2.5-pro", [plugin(tmp_path)],
        {"PATH": "/bin"}, None, "/home/alex", workspace, roots,
    )  # fmt: skip
    text = (scratch / "gemini-home" / ".gemini" / "settings.json").read_text()
    assert "TMPDIR" not in child and not (scratch / "tmp").exists()  # the world's own /tmp
    env = [f"{k}={v}" for k, v in child.items() if k != "HOME"]  # HOME: the world's, inside
    assert [t for t in [text, *env] if Markers().find(t)] == []
    settings = json.loads(text)
    assert settings["context"]["includeDirectories"] == workspace
    command = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert "/home/alex/.local/lib/hooks/" in command and str(scratch) not in command


def test_an_agents_adapter_is_part_of_the_runner_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalkit.run import rep as runner

    package = tmp_path / "run"
    (package / "agents").mkdir(parents=True)
    (package / "rep.py").write_text("x = 1\n")
    (package / "agents" / "codex.py").write_text("y = 1\n")
    monkeypatch.setattr(runner, "__file__", str(package / "rep.py"))
    monkeypatch.setattr(runner, "_RUNNER_HASH", None)
    before = runner.runner_source_hash()
    (package / "agents" / "codex.py").write_text("y = 2\n")
    monkeypatch.setattr(runner, "_RUNNER_HASH", None)
    assert runner.runner_source_hash() != before


def test_a_folder_of_several_agents_is_one_instrument_when_each_ran_one_version() -> None:
    from evalkit.models import EvidenceLine
    from evalkit.records.verify.verdict import mixed_instruments

    def line(agent: str, version: str) -> EvidenceLine:
        decl = {"checker": "vault-write@1", "cli_version": version}
        if agent != "claude":
            decl["agent"] = agent
        return EvidenceLine(
            run_id="r",
            scenario="s",
            model="m",
            rep=1,
            evidence="-",
            files={},
            declarations=decl,
            bundle_id="b",
            verdict="PASS",
        )

    assert mixed_instruments([line("claude", "2.1.328"), line("codex", "codex/0.169.0")]) == []
    two = [line("claude", "2.1.328"), line("claude", "2.1.300")]
    assert mixed_instruments(two) == ["rows were run against 2 different sets of frozen hashes"]


def test_a_real_codex_model_gets_codexs_own_provider_and_only_the_key_it_was_given(
    tmp_path: Path,
) -> None:
    scratch = tmp_path / "rep"
    (scratch / "codex-home").mkdir(parents=True)
    env = {"PATH": "/bin", "OPENAI_ORG_ID": "users-org", "ANTHROPIC_API_KEY": "k"}
    launch = prepare_codex(
        Path("/c/codex"), scratch, None, "gpt-5", [plugin(tmp_path)], env,
        {"OPENAI_API_KEY": "the-key"},
    )  # fmt: skip
    config = tomllib.loads((launch.home / "config.toml").read_text())
    assert "model_provider" not in config and "model_providers" not in config
    assert "openai_base_url" not in config
    assert config["analytics"]["enabled"] is False
    assert launch.env["CODEX_API_KEY"] == "the-key"  # 0.169.0 sends no key from OPENAI_API_KEY
    assert "OPENAI_API_KEY" not in launch.env
    assert "OPENAI_ORG_ID" not in launch.env and "ANTHROPIC_API_KEY" not in launch.env
    assert "EVALKIT_SCRIPTED_KEY" not in launch.env
    assert launch.command[-2:] == ["--model", "gpt-5"]


def test_a_real_gemini_model_reaches_googles_api_with_the_users_key(tmp_path: Path) -> None:
    scratch = tmp_path / "rep"
    env = {"PATH": "/bin", "GOOGLE_CLOUD_PROJECT": "p", "GEMINI_API_KEY": "from-base"}
    command, child = prepare_gemini(
        Path("/g/gemini"), scratch, None, "gemini-2.5-pro", [plugin(tmp_path)], env,
        {"GEMINI_API_KEY": "the-key"},
    )  # fmt: skip
    settings = json.loads((scratch / "gemini-home" / ".gemini" / "settings.json").read_text())
    assert settings["security"]["auth"]["selectedType"] == "gemini-api-key"
    assert "maxAttempts" not in settings["general"]
    assert child["GEMINI_API_KEY"] == "the-key"
    assert "GOOGLE_GEMINI_BASE_URL" not in child and "GOOGLE_CLOUD_PROJECT" not in child
    assert command[-2:] == ["--model", "gemini-2.5-pro"]


def test_a_move_codexs_stream_loses_is_read_from_its_session_record(tmp_path: Path) -> None:
    sessions = tmp_path / "codex-home" / "sessions" / "2026"
    sessions.mkdir(parents=True)
    change = {"/p/a.md": {"type": "update", "move_path": "/v/a.md"}, "/p/b.md": {"type": "add"}}
    item = {"type": "FileChange", "id": "c1", "changes": change, "status": "completed"}
    line = {"type": "event_msg", "payload": {"type": "item_completed", "item": item}}
    (sessions / "rollout-1.jsonl").write_text("not json\n" + json.dumps(line) + "\n")
    os.mkfifo(sessions / "rollout-2.jsonl")  # hostile: read without blocking, and skipped
    moves = [json.loads(x) for x in patch_moves(tmp_path).splitlines()]
    assert moves == [{"type": "evalkit.patch_move", "path": "/p/a.md", "move_path": "/v/a.md"}]


def test_a_real_codex_models_base_url_is_its_openai_base_url_setting(tmp_path: Path) -> None:
    """0.169.0 ignores the OPENAI_BASE_URL variable (measured: it calls its default host),
    so the URL is written as its `openai_base_url` setting and the variable is not passed."""
    scratch = tmp_path / "rep"
    (scratch / "codex-home").mkdir(parents=True)
    keys = {"CODEX_API_KEY": "k", "OPENAI_BASE_URL": "https://gw.example.com:8443/v1",
            "SSL_CERT_FILE": "/ca.pem"}  # fmt: skip
    launch = prepare_codex(Path("/c/codex"), scratch, None, "gpt-5", [], {"PATH": "/bin"}, keys)
    config = tomllib.loads((launch.home / "config.toml").read_text())
    assert config["openai_base_url"] == "https://gw.example.com:8443/v1"
    assert "OPENAI_BASE_URL" not in launch.env and launch.env["CODEX_API_KEY"] == "k"
    assert launch.env["SSL_CERT_FILE"] == "/ca.pem"
