"""`policy:propose:<plan>`: a scripted proposer that edits the wording through the CLI's tools.

`evalkit tune` needs a proposer it can run offline through the real agent CLI, so the whole
proposer path (sandbox, brief on stdin, confinement, the CLI's own Read, Edit and Write, the
changes read back) is exercised without a model. This one plays a fixed plan: each round's
edits of the first `SKILL.md` under the paths it may change (sorted by path), as the copy of
the wording it was handed holds it. It reads the file, then edits one front-matter line with
Edit, or writes the whole file with Write when the line is not there once; the Responses and
Gemini wires tell these calls as Codex's and Gemini's own tools, so every agent plays it.

The plan is spelled in the policy's name: rounds joined by `/`, a round's edits by `,`, an
edit `FIELD=WORDS` (the front-matter field set to the words) or `FIELD+=WORDS` (the words
added at its end), words joined by `+` as in `policy:phrase`, and `-` for a round with no
edit. A round past the plan proposes nothing, which ends that round.
Example: `policy:propose:description=Always+keep+notes/description=Keep+a+note` proposes
one wording in round 1 and another in round 2.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from evalkit.errors import ConfigError
from evalkit.models import Script, Step, ToolUseBlock

NAME = "propose:"
SKILL_FILE = "SKILL.md"
NO_EDIT = "-"
NOTHING = "I have no further change to propose."
_FIELD = r"[a-z][a-z0-9_-]*"
_WORDS = r"[A-Za-z0-9][A-Za-z0-9'.-]*(?:\+[A-Za-z0-9][A-Za-z0-9'.-]*)*"
_EDIT = re.compile(rf"^({_FIELD})(\+?=)({_WORDS})$")
USAGE = (
    "expected policy:propose:ROUND[/ROUND...], a ROUND being FIELD=WORDS or FIELD+=WORDS "
    "(several joined by ',', or - for none) and WORDS joined by '+', e.g. "
    "policy:propose:description=Keep+a+note+of+what+outlives+the+task."
)


@dataclass(frozen=True)
class Edit:
    field: str
    words: str
    append: bool = False

    def apply(self, text: str) -> str:
        """`text` with this edit's front-matter line set (a front matter made if it has none)."""
        head, body = _front_matter(text)
        line = f"{self.field}: {self.words}"
        if head is None:
            return f"---\n{line}\n---\n\n{text}"
        found = re.search(rf"^{re.escape(self.field)}:[ \t]*(.*)$", head, re.MULTILINE)
        if found is None:
            return f"---\n{head}{line}\n---\n{body}"
        if self.append:
            line = f"{self.field}: {found.group(1).rstrip()} {self.words}".rstrip()
        return f"---\n{head[: found.start()]}{line}{head[found.end() :]}---\n{body}"


def _front_matter(text: str) -> tuple[str | None, str]:
    """(the front matter's lines, each ending in a newline; what follows its closing line),
    or (None, text) when the text opens with none."""
    if not text.startswith("---\n"):
        return None, text
    end = text.find("\n---\n", 3)
    if end < 0:
        return None, text
    return text[4 : end + 1], text[end + 5 :]


@dataclass(frozen=True)
class ProposePlan:
    rounds: tuple[tuple[Edit, ...], ...]

    @classmethod
    def parse(cls, policy: str) -> ProposePlan | None:
        """The plan a policy name spells; None for any other policy."""
        if not policy.startswith(NAME):
            return None
        raw = policy[len(NAME) :]
        rounds: list[tuple[Edit, ...]] = []
        for part in raw.split("/") if raw else [""]:
            if part == NO_EDIT:
                rounds.append(())
                continue
            edits = []
            for piece in part.split(","):
                match = _EDIT.match(piece)
                if match is None:
                    raise ConfigError(f"policy:{policy}: {piece!r} is no edit; {USAGE}")
                field, how, words = match.groups()
                edits.append(Edit(field, words.replace("+", " "), how == "+="))
            rounds.append(tuple(edits))
        return cls(tuple(rounds))

    def edits(self, round_no: int) -> tuple[Edit, ...]:
        return self.rounds[round_no - 1] if 0 < round_no <= len(self.rounds) else ()

    def script(self, round_no: int, wording: Path, paths: list[str]) -> Script:
        """What the scripted model plays in round `round_no` on the copy at `wording`: a Read
        of the target, then an Edit of each changed line (a Write of the whole file when the
        line is not there exactly once), then a word of what it did."""
        edits = self.edits(round_no)
        target = skill_target(wording, paths)
        if not edits or target is None:
            return Script(final_text=NOTHING)
        path = str(target)
        text = target.read_text(encoding="utf-8")
        steps = [Step(blocks=[ToolUseBlock(name="Read", input={"file_path": path})])]
        for edit in edits:
            after = edit.apply(text)
            old, new = _changed_line(text, after)
            if old is not None and new is not None and text.count(old) == 1:
                call = ToolUseBlock(name="Edit", input={"file_path": path, "old_string": old,
                                                         "new_string": new})  # fmt: skip
            else:
                call = ToolUseBlock(name="Write", input={"file_path": path, "content": after})
            steps.append(Step(blocks=[call]))
            text = after
        fields = ", ".join(dict.fromkeys(e.field for e in edits))
        return Script(steps=steps, final_text=f"I changed the skill's {fields}.")


def _changed_line(before: str, after: str) -> tuple[str | None, str | None]:
    """The one line that differs between two texts of the same line count, else (None, None)."""
    old, new = before.splitlines(), after.splitlines()
    if len(old) != len(new):
        return None, None
    changed = [(a, b) for a, b in zip(old, new, strict=True) if a != b]
    return changed[0] if len(changed) == 1 else (None, None)


def skill_target(wording: Path, paths: list[str]) -> Path | None:
    """The first `SKILL.md` under the paths the proposer may change, in the wording's copy."""
    found = []
    for rel in paths:
        start = wording / rel
        if start.is_file() and start.name == SKILL_FILE:
            found.append(start)
        elif start.is_dir():
            found += [p for p in start.rglob(SKILL_FILE) if p.is_file() and not p.is_symlink()]
    return min(found, key=lambda p: p.relative_to(wording).as_posix(), default=None)
