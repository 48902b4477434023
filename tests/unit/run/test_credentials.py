"""A real-model run refuses before planning when no credential would reach the CLI."""

from __future__ import annotations

import pytest

from evalkit.errors import PrerequisiteError
from evalkit.run.prerequisites.credentials import credentials_present, require_credentials


def test_no_credential_for_a_real_model_is_one_line_naming_every_way() -> None:
    with pytest.raises(PrerequisiteError) as refused:
        require_credentials(["policy:oracle", "sonnet"], environ={"PATH": "/bin"})
    message = str(refused.value)
    assert "\n" not in message and "sonnet" in message
    for way in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
                "ANTHROPIC_BASE_URL", "policy:oracle"):  # fmt: skip
        assert way in message


def test_any_one_credential_or_a_gateway_is_enough() -> None:
    for name in ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        require_credentials(["sonnet"], environ={name: "x"})


def test_policy_models_need_no_credential_and_an_empty_value_is_none() -> None:
    require_credentials(["policy:oracle"], environ={})
    assert credentials_present({"ANTHROPIC_API_KEY": "  ", "ANTHROPIC_AUTH_TOKEN": "t"}) == [
        "ANTHROPIC_AUTH_TOKEN"
    ]


def test_each_other_agent_names_its_own_keys_and_takes_no_other_agents() -> None:
    from evalkit.run.prerequisites.credentials import agent_credentials

    with pytest.raises(PrerequisiteError) as refused:
        require_credentials(["gpt-5"], environ={"ANTHROPIC_API_KEY": "k"}, agent="codex")
    message = str(refused.value)
    assert "\n" not in message and "gpt-5" in message
    for way in ("OPENAI_API_KEY", "CODEX_API_KEY", "policy:oracle"):
        assert way in message
    require_credentials(["gpt-5"], environ={"CODEX_API_KEY": "k"}, agent="codex")
    require_credentials(["gpt-5"], environ={"OPENAI_API_KEY": "k"}, agent="codex")
    with pytest.raises(PrerequisiteError, match="GEMINI_API_KEY"):
        require_credentials(["gemini-2.5-pro"], environ={"OPENAI_API_KEY": "k"}, agent="gemini")
    require_credentials(["policy:oracle"], environ={}, agent="gemini")
    environ = {"GEMINI_API_KEY": "g", "GOOGLE_GEMINI_BASE_URL": "https://gw", "OPENAI_API_KEY": "o"}
    assert agent_credentials("gemini", environ) == {
        "GEMINI_API_KEY": "g",
        "GOOGLE_GEMINI_BASE_URL": "https://gw",
    }


def test_a_variable_the_agent_cannot_be_given_faithfully_is_refused_naming_it() -> None:
    """Codex 0.169.0's `exec` sends no credential from CODEX_ACCESS_TOKEN (measured against a
    TLS stand-in): set, a real Codex model is refused naming it, even beside a key."""
    for environ in ({"CODEX_ACCESS_TOKEN": "t"}, {"CODEX_ACCESS_TOKEN": "t", "CODEX_API_KEY": "k"}):
        with pytest.raises(PrerequisiteError) as refused:
            require_credentials(["gpt-5"], environ=environ, agent="codex")
        message = str(refused.value)
        assert "\n" not in message and "CODEX_ACCESS_TOKEN" in message
    require_credentials(["policy:oracle"], environ={"CODEX_ACCESS_TOKEN": "t"}, agent="codex")
