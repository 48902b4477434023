"""A tune's variant is written into evalkit.yaml in place: comments kept, nothing else moved."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.suite.config import Suite
from evalkit.tune.lineage import add_variant, next_number, write_overlay
from tests.tuning_suite import SKILL, write_tuning_suite

pytestmark = pytest.mark.heavy


def test_a_variant_is_added_with_the_file_as_a_person_wrote_it(tmp_path: Path) -> None:
    root = write_tuning_suite(tmp_path / "suite")
    config = root / "evalkit.yaml"
    config.write_text("# kept comment\n" + config.read_text())
    suite = Suite(root)
    rel = write_overlay(suite, "tune-1", {SKILL.as_posix(): b"---\nname: keep\n---\n"})
    add_variant(suite, "tune-1", rel, "round 1")
    text = config.read_text()
    assert text.startswith("# kept comment\n")
    assert Suite(root).config.variants["tune-1"].overlay == "variants/tune-1"
    add_variant(Suite(root), "tune-2", "variants/tune-2", "round 2")
    assert set(Suite(root).config.variants) == {"tune-1", "tune-2"}
    assert next_number(Suite(root)) == 3
