"""The planted regression the scripted server plays by CLI version."""

from __future__ import annotations

import pytest

from evalkit.errors import ConfigError
from evalkit.reference.regression import Regression, version_in_user_agent


def test_the_version_is_read_from_the_user_agent() -> None:
    assert version_in_user_agent("claude-cli/2.1.327 (external, sdk-cli)") == "2.1.327"
    assert version_in_user_agent("curl/8.0") == ""


def test_a_step_regression_is_good_before_its_version_and_bad_from_it_on() -> None:
    planted = Regression.parse("regress-from:2.1.32")
    assert planted is not None
    assert [planted.plays_bad(v, "P1", 1) for v in ("2.1.4", "2.1.31", "2.1.32", "2.1.321")] == [
        False, False, True, True,
    ]  # fmt: skip


def test_the_flaky_form_is_seeded_and_near_its_rate() -> None:
    planted = Regression.parse("regress-from:2.1.327:p=0.8")
    assert planted is not None and planted.p == 0.8
    bad = [planted.plays_bad("2.1.328", "P1", rep) for rep in range(1, 2001)]
    assert bad == [planted.plays_bad("2.1.328", "P1", rep) for rep in range(1, 2001)]
    assert 0.75 < sum(bad) / len(bad) < 0.85
    good = [planted.plays_bad("2.1.326", "P1", rep) for rep in range(1, 2001)]
    assert 0.15 < sum(good) / len(good) < 0.25


@pytest.mark.parametrize("name", ["regress-from:", "regress-from:2.1", "regress-from:2.1.3:p=0.3"])
def test_a_malformed_regression_is_one_line(name: str) -> None:
    with pytest.raises(ConfigError, match="regress-from:VERSION"):
        Regression.parse(name)
