"""`evalkit import skill-creator`: a skill-creator trigger set becomes scenarios of a rules
suite's run set, one per query, or is refused in one line with nothing written.

`skill_creator/description-evals.json` is a trigger set as skill-creator's workflow wrote it,
kept byte for byte: `skills/observe-instrument/evals/description-evals.json` of commit
d07c1c27c439cbc633bed4c595d5a5a1c90a92b0 in github.com/anthropics/skills (pull request
#595), sha256 e005f9c68010d73096a10df6c50a13fc67d82877ac308e1064fae55c579821b7.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli.main import app
from evalkit.suite.catalog import load_catalog
from evalkit.suite.provenance import AUTHOR_RESERVE, IMPORT_RECORD, OPEN, labelled
from evalkit.suite.skill_creator import read_trigger_set, smallest_class
from evalkit.suite.split_reserve import choose
from evalkit.suite.task import read_task
from tests.trigger_suite import (
    README,
    SKILL,
    query,
    trigger_set,
    write_trigger_set,
    write_trigger_suite,
)

pytestmark = pytest.mark.heavy

REAL = Path(__file__).parent / "skill_creator" / "description-evals.json"
SMALL = ("--reps", "5", "--margin", "0.3", "--share", "0.5")
"""Settings at which the tests need 6 a polarity, so 12 a class split in half suffice."""

runner = CliRunner()


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    return write_trigger_suite(tmp_path / "suite")


def import_set(suite: Path, evals: Path, *args: str) -> tuple[int, str]:
    got = runner.invoke(
        app, ["--suite", str(suite), "import", "skill-creator", str(evals), "--fixture", README,
              *args],
    )  # fmt: skip
    return got.exit_code, got.output


def written(suite: Path) -> list[Path]:
    return sorted(suite.glob("scenarios*/*.md")) + sorted(suite.glob(IMPORT_RECORD))


def test_each_query_becomes_one_scenario_of_the_run_set_in_its_class(
    suite: Path, tmp_path: Path
) -> None:
    code, out = import_set(suite, write_trigger_set(tmp_path / "set.json", 12, 12), *SMALL)
    run = load_catalog(suite).scenarios("run")
    assert code == 0, out
    assert sum(s.scenario.polarity == "positive" for s in run) == 12
    assert sum(s.scenario.polarity == "negative" for s in run) == 12
    assert all(re.fullmatch(r"[PN]-[0-9a-f]{10}", s.id) for s in run)
    assert all(s.id[0] == s.scenario.polarity[0].upper() for s in run)
    assert all(s.scenario.kind == "skill-trigger" for s in run)
    rules = [s.scenario.expect.get("a") or s.scenario.expect.get("fail") for s in run]
    assert all(rule == {"skill": SKILL, "reason": "skill-fired"} for rule in rules)


def test_each_scenario_hands_the_agent_its_query_whole(suite: Path, tmp_path: Path) -> None:
    wanted = {query(t, n) for t in (True, False) for n in range(12)}
    import_set(suite, write_trigger_set(tmp_path / "set.json", 12, 12), *SMALL)
    tasks = {read_task(s) for s in load_catalog(suite).scenarios("run")}
    assert tasks == wanted


def test_the_import_prints_ids_and_counts_and_never_a_query(suite: Path, tmp_path: Path) -> None:
    code, out = import_set(suite, write_trigger_set(tmp_path / "set.json", 12, 12), *SMALL)
    ids = [s.id for s in load_catalog(suite).scenarios("run")]
    assert code == 0
    assert "12 should trigger, 12 should not" in out and all(i in out for i in ids)
    assert not any(query(t, n) in out for t in (True, False) for n in range(12))
    assert "generated request" not in out


def test_the_same_query_gets_the_same_id_and_a_second_import_adds_only_the_new(
    suite: Path, tmp_path: Path
) -> None:
    import_set(suite, write_trigger_set(tmp_path / "a.json", 12, 12), *SMALL)
    first = {p.name: p.read_bytes() for p in (suite / "scenarios").iterdir()}
    code, out = import_set(suite, write_trigger_set(tmp_path / "b.json", 13, 14), *SMALL)
    after = {p.name: p.read_bytes() for p in (suite / "scenarios").iterdir()}
    assert code == 0, out
    assert "3 scenario(s) added to the run set, 24 held already" in out
    assert {k: after[k] for k in first} == first and len(after) == 27


def test_the_real_skill_creator_file_reads_as_its_author_wrote_it() -> None:
    queries = read_trigger_set(REAL)
    raw = json.loads(REAL.read_text(encoding="utf-8"))
    assert [q.should_trigger for q in queries] == [item["should_trigger"] for item in raw]
    assert sum(q.should_trigger for q in queries) == 10 and len(queries) == 18
    assert len({q.id for q in queries}) == 18


def test_the_real_file_is_refused_for_size_in_one_line_naming_the_numbers(suite: Path) -> None:
    code, out = import_set(suite, REAL)
    assert code == 2
    assert len(out.strip().splitlines()) == 1
    assert "10 with should_trigger true and 8 with should_trigger false" in out
    assert "need 15 a polarity" in out and "at least 50 queries" in out
    assert written(suite) == []


def test_smallest_class_leaves_enough_on_both_sides_of_every_split() -> None:
    for needed, share in ((6, 0.5), (6, 0.3), (15, 0.3), (8, 0.25)):
        n = smallest_class(needed, share)
        for seed in range(40):
            strata = {"positive": [f"P{i}" for i in range(n)],
                      "negative": [f"N{i}" for i in range(n + seed % 3)]}  # fmt: skip
            held = sum(r.startswith("P") for r in choose(strata, share, seed))
            assert held >= needed and n - held >= needed, (needed, share, n, seed)


def _set(tmp_path: Path, items: object) -> Path:
    path = tmp_path / "bad.json"
    path.write_text(items if isinstance(items, str) else json.dumps(items), encoding="utf-8")
    return path


def _many(extra: list[dict[str, object]]) -> list[dict[str, object]]:
    return trigger_set(12, 12) + extra


BAD = {
    "not JSON": ("[{'query': 'x'}", "not a JSON file"),
    "an object": ({"query": "x", "should_trigger": True}, "a JSON list"),
    "an empty list": ([], "a JSON list"),
    "a string item": (["generated request 99"], "item 1: expected an object"),
    "no should_trigger": (_many([{"query": "generated request 99"}]), "item 25: should_trigger"),
    "a quoted boolean": (_many([{"query": "generated request 99", "should_trigger": "false"}]),
                         "item 25: should_trigger: expected true or false"),
    "an empty query": (_many([{"query": "  ", "should_trigger": True}]), "item 25: query: empty"),
    "a number query": (_many([{"query": 7, "should_trigger": True}]), "item 25: query: expected"),
    "a duplicate": (_many([{"query": "generated  request 00: jot down why the sync job retries "
                            "three times ", "should_trigger": True}]), "the same as item 1"),
    "a flipped duplicate": (_many([{"query": query(True, 3), "should_trigger": False}]),
                            "the same as item 4, with the other should_trigger"),
    "a section line": (_many([{"query": "generated request 99\n## Notes\nmore", "should_trigger":
                               True}]), "item 25: query: a line starts with '## '"),
    "output checks": ([{"id": 1, "prompt": "generated request 99", "expectations": ["x"]}],
                      "evals.json of output checks"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input_is_refused_in_one_line_and_nothing_is_written(
    suite: Path, tmp_path: Path, name: str
) -> None:
    items, said = BAD[name]
    code, out = import_set(suite, _set(tmp_path, items), *SMALL)
    assert code == 2
    assert len(out.strip().splitlines()) == 1 and said in out, out
    assert "generated request" not in out
    assert written(suite) == []


def test_a_frozen_suite_is_refused_and_nothing_is_written(suite: Path, tmp_path: Path) -> None:
    (suite / "evalkit.lock").write_text("{}\n", encoding="utf-8")
    code, out = import_set(suite, write_trigger_set(tmp_path / "set.json", 12, 12), *SMALL)
    assert code == 2 and "frozen" in out and written(suite) == []


def test_a_suite_on_a_ladder_is_refused_naming_the_setting(suite: Path, tmp_path: Path) -> None:
    config = suite / "evalkit.yaml"
    config.write_text(config.read_text().replace("ladder: false\n", ""), encoding="utf-8")
    code, out = import_set(suite, write_trigger_set(tmp_path / "set.json", 12, 12), *SMALL)
    assert code == 2 and "ladder: false" in out and written(suite) == []


def test_a_subject_with_two_skills_needs_the_skill_named(suite: Path, tmp_path: Path) -> None:
    other = suite / "fixtures/plugins/notes/skills/other/SKILL.md"
    other.parent.mkdir()
    other.write_text("---\nname: other\ndescription: Other.\n---\n", encoding="utf-8")
    evals = write_trigger_set(tmp_path / "set.json", 12, 12)
    code, out = import_set(suite, evals, *SMALL)
    assert code == 2 and "--skill PLUGIN:SKILL" in out and written(suite) == []
    code, out = import_set(suite, evals, *SMALL, "--skill", "notes:other")
    assert code == 0, out
    assert all(s.scenario.expect == {"a": {"skill": "notes:other", "reason": "skill-fired"}}
               for s in load_catalog(suite).scenarios("run") if s.id.startswith("P"))  # fmt: skip


def test_a_fixture_outside_the_suite_is_refused(suite: Path, tmp_path: Path) -> None:
    evals = write_trigger_set(tmp_path / "set.json", 12, 12)
    (tmp_path / "outside.md").write_text("# outside\n", encoding="utf-8")
    got = runner.invoke(app, ["--suite", str(suite), "import", "skill-creator", str(evals),
                              "--fixture", "../outside.md", *SMALL])  # fmt: skip
    assert got.exit_code == 2 and "--fixture ../outside.md" in got.output
    assert written(suite) == []


def test_a_malformed_record_of_imports_is_refused_before_a_scenario_is_written(
    suite: Path, tmp_path: Path
) -> None:
    (suite / IMPORT_RECORD).write_text("[]\n", encoding="utf-8")
    code, out = import_set(suite, write_trigger_set(tmp_path / "set.json", 12, 12), *SMALL)
    assert code == 2 and IMPORT_RECORD in out
    assert not list(suite.glob("scenarios/*.md"))


def test_the_imported_sets_are_labelled_open_and_author_written(
    suite: Path, tmp_path: Path
) -> None:
    import_set(suite, write_trigger_set(tmp_path / "set.json", 12, 12), *SMALL)
    record = json.loads((suite / IMPORT_RECORD).read_text(encoding="utf-8"))
    assert record["imports"][0]["file"] == "set.json" and len(record["imports"][0]["ids"]) == 24
    assert labelled(suite, "run", "measurement") == OPEN
    assert labelled(suite, "reserve", "held") == AUTHOR_RESERVE


def test_an_imported_pair_proves_its_checker_in_self_test(suite: Path, tmp_path: Path) -> None:
    from evalkit.reference.selftest import self_test
    from evalkit.suite.config import load_suite

    import_set(suite, write_trigger_set(tmp_path / "set.json", 12, 12), *SMALL)
    kept = [min(suite.glob(f"scenarios/{c}-*.md")) for c in "PN"]
    for path in (suite / "scenarios").glob("*.md"):
        if path not in kept:
            path.unlink()
    cells = self_test(load_suite(suite))
    assert len(cells) > 10 and {c.scenario for c in cells} == {p.stem for p in kept}
    assert [c.case for c in cells if not c.ok] == []
