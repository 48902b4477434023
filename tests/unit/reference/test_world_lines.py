"""A CLI's own lines from an empty world are spelled as each rep's world spells its HOME and
config home, so a line that names them is the CLI's own wherever the rep lives."""

from __future__ import annotations

import json

from evalkit.reference.world_baseline import CONFIG, HOME, _lines, in_world


def _body(*lines: str) -> str:
    return json.dumps({"system": "\n".join(lines)})


def test_the_throwaway_home_and_config_home_are_kept_as_tokens() -> None:
    sent = _body("- `r1` = `/tmp/b/cfg/codex-home/skills/.system`",
                 "<cwd>/tmp/b/home/app</cwd>", "a scratch /tmp/b/other")  # fmt: skip
    kept = _lines([sent], "/tmp/b", {"/tmp/b/cfg/codex-home": CONFIG, "/tmp/b/home": HOME})
    assert kept == {f"- `r1` = `{CONFIG}/skills/.system`", f"<cwd>{HOME}/app</cwd>"}


def test_a_kept_line_reads_as_the_reps_world_spells_it() -> None:
    kept = frozenset({f"- `r1` = `{CONFIG}/skills/.system`", f"<cwd>{HOME}/app</cwd>", "plain"})
    spelled = in_world(kept, "/home/alex", "/home/alex/.codex")
    assert spelled == {"- `r1` = `/home/alex/.codex/skills/.system`", "<cwd>/home/alex/app</cwd>",
                       "plain"}  # fmt: skip


def test_without_a_world_a_line_naming_its_folders_is_left_out() -> None:
    kept = frozenset({f"{HOME}/x", f"{CONFIG}/y", "plain"})
    assert in_world(kept, None, None) == {"plain"}
