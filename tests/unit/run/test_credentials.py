"""A real-model run refuses before planning when no credential would reach the CLI."""

from __future__ import annotations

import pytest

from evalkit.errors import PrerequisiteError
from evalkit.run.credentials import credentials_present, require_credentials


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
