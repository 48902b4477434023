"""evalkit's JavaScript regexes against Node's own `RegExp`, on a generated corpus: every
pattern evalkit accepts answers `test()` as Node does on every input (CRLF, no-break
spaces, U+2028/9, astral characters, the Kelvin sign, the long s), and every pattern it
refuses is refused naming the construct, at suite load as well."""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from evalkit.checkers.rules.jsregex import JsRegexError, js_test
from evalkit.errors import ConfigError
from evalkit.suite.config import load_suite
from tests.unit.suite.test_plugin_evals import case_yaml, plugin

pytestmark = pytest.mark.heavy

ATOMS = [
    "a", ".", "\\s", "\\S", "\\w", "\\W", "\\d", "k", "K", "s", "S", "\\u212A", "\u017f",
    "[a-z]", "[^a-z]", "[\\s\\S]", "[^\\s]", "[k-s]", "[^k]", "\\u{1F600}", "\U0001f600",
    "[\U0001f600]", "\\uD83D", "\\uD83D\\uDE00", "\\r", "\\n", "\\u2028", "[\\u2028\\u2029]",
    "\\xA0", "\\ufeff", "(?:a|b)", "x{2}", "x{", "]", "\\p{L}", "\\cJ", "[\\b]", "\\bx",
    "[\\w-]", "\u00df", "\u03c9",
]  # fmt: skip
SHAPES = ["{}", "^{}$", "^{}", "{}$", "x{}y", "(?:{})+", "{}*z", "(?<n>{})|q"]
FLAGS = ["", "i", "m", "s", "u", "iu", "mu", "su", "ims", "y", "imsu", "gd"]
REFUSED = [
    ("a(?=b)", "", "look-around"), ("(?<!a)b", "", "look-around"),
    ("(a)\\1", "", "back-reference"), ("(?<x>a)\\k<x>", "", "back-reference"),
    ("a", "v", "flag 'v'"), ("x\\n^y", "m", "under flag m"), ("a$b", "m", "under flag m"),
    ("\\bx", "iu", "under flags u and i"), ("\\p{L}", "u", "\\p"), ("a{2000}", "", "count"),
    ("\\uD83D", "u", "lone surrogate"),
]  # fmt: skip
INPUTS = [
    "a\r\nb", "x\r\ny", "a\rb", "x\u00a0y", "\u00a0", "\ufeff", "\u2028", "x\u2029y",
    "\U0001f600", "x\U0001f600y", "\ud83d", "\u212a", "\u017f", "k", "K", "S", "s", "xy",
    "xxy", "xx", "", "a\n", "\n", "\b", "ab", "q", "\u1e9e", "\u2126", "-", "p{L}", "z",
]  # fmt: skip
NODE = """let d='';process.stdin.on('data',c=>d+=c).on('end',()=>{
const out=JSON.parse(d).map(([p,f,t])=>{try{return new RegExp(p,f).test(t)}catch(e){return 'x'}});
process.stdout.write(JSON.stringify(out))})"""


def corpus() -> list[tuple[str, str]]:
    shaped = [s.format(a) for a, s in itertools.product(ATOMS, SHAPES)]
    return (
        [(p, FLAGS[n % len(FLAGS)]) for n, p in enumerate(shaped)]
        + [(p, "i" if "k" in p else "") for p in ATOMS]
        + [(p, f) for p, f, _ in REFUSED]
    )


def node_answers(items: list[tuple[str, str, str]]) -> list[bool | str]:
    node = shutil.which("node")
    assert node is not None, "the regex differential needs the machine's node"
    done = subprocess.run([node, "-e", NODE], input=json.dumps(items), capture_output=True,
                          text=True, timeout=120, check=True)  # fmt: skip
    answers: list[bool | str] = json.loads(done.stdout)
    return answers


def test_every_accepted_pattern_answers_as_node_and_every_refusal_names_its_construct() -> None:
    patterns = corpus()
    refused: list[tuple[str, str, str]] = []
    accepted: list[tuple[str, str]] = []
    for pattern, flags in patterns:
        try:
            js_test(pattern, flags, "")
            accepted.append((pattern, flags))
        except JsRegexError as exc:
            refused.append((pattern, flags, str(exc)))
    items = [(p, f, t) for p, f in accepted for t in INPUTS]
    answers = node_answers(items)
    differ = [(p, f, t) for (p, f, t), a in zip(items, answers, strict=True)
              if a != "x" and js_test(p, f, t) is not a]  # fmt: skip
    assert len(items) >= 500 and len(refused) >= len(REFUSED)
    assert differ == [], differ[:10]
    unnamed = [(p, f) for p, f, why in refused if "offset" not in why and "flag" not in why]
    assert unnamed == []
    for pattern, flags, words in REFUSED:
        assert words in next(why for p, f, why in refused if (p, f) == (pattern, flags))


@pytest.mark.parametrize(("pattern", "flags", "words"), REFUSED[::2])
def test_a_refused_pattern_is_refused_when_the_suite_loads(
    tmp_path: Path, pattern: str, flags: str, words: str
) -> None:
    root = plugin(tmp_path)
    case = {
        "schema_version": "1.0",
        "name": "probe",
        "execution": {"prompt": "Do it."},
        "graders": [{"name": "r", "type": "regex", "pattern": pattern, "flags": flags}],
    }
    case_yaml(root / "evals", "probe", json.dumps(case))
    with pytest.raises(ConfigError, match="grader 'r'") as refused:
        load_suite(root)
    assert words in str(refused.value)
