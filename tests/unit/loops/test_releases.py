"""npm's answer read as versions: ordered by number, pre-releases and releases above the
`latest` tag never watched, and the integrity check a bump makes before it pins anything."""

from __future__ import annotations

import pytest

from evalkit.errors import ConfigError, RefusedError
from evalkit.loops.releases import (
    Listing,
    by_number,
    check_integrity,
    newer_than,
    parse_listing,
)

PACKAGE = "@anthropic-ai/claude-code"


def test_versions_are_ordered_by_number_not_by_text() -> None:
    assert by_number(["2.1.321", "2.1.32", "2.1.4", "2.1.32"]) == ["2.1.4", "2.1.32", "2.1.321"]


def test_the_newest_release_newer_than_the_pin_is_named() -> None:
    listed = Listing(["2.1.326", "2.1.327", "2.1.328"], {"latest": "2.1.328"})
    assert newer_than("2.1.326", listed).newest == "2.1.328"


def test_a_pre_release_is_skipped_however_new() -> None:
    listed = Listing(["2.1.327", "2.1.328", "2.1.329-next.0"], {"next": "2.1.329-next.0"})
    newer = newer_than("2.1.327", listed)
    assert (newer.releases, newer.prereleases) == (["2.1.328"], ["2.1.329-next.0"])


def test_a_release_above_the_latest_tag_is_skipped() -> None:
    listed = Listing(["2.1.327", "2.1.328", "2.1.330"], {"latest": "2.1.328"})
    newer = newer_than("2.1.327", listed)
    assert (newer.newest, newer.unpromoted) == ("2.1.328", ["2.1.330"])


def test_nothing_newer_than_the_pin_names_no_release() -> None:
    listed = Listing(["2.1.326", "2.1.327", "2.1.328-beta.1"], {"latest": "2.1.327"})
    assert newer_than("2.1.327", listed).newest is None


def test_a_lone_version_npm_gives_as_a_string_is_read_as_a_list() -> None:
    listed = parse_listing({"versions": "1.0.0", "dist-tags": {"latest": "1.0.0"}}, PACKAGE)
    assert listed.versions == ["1.0.0"]


def test_a_listing_of_another_shape_is_one_line_naming_the_package() -> None:
    with pytest.raises(ConfigError, match=PACKAGE):
        parse_listing({"versions": {"1.0.0": {}}, "dist-tags": {}}, PACKAGE)


def test_the_same_integrity_passes() -> None:
    check_integrity("2.1.328", "sha512-abc", "sha512-abc")


@pytest.mark.parametrize(
    ("installed", "registry"),
    [("sha512-abc", "sha512-xyz"), ("", "sha512-abc"), ("sha512-abc", "")],
    ids=["differs", "installed-unknown", "registry-unknown"],
)
def test_an_integrity_that_differs_or_is_unknown_refuses_the_bump(
    installed: str, registry: str
) -> None:
    with pytest.raises(RefusedError, match="not bumped"):
        check_integrity("2.1.328", installed, registry)
