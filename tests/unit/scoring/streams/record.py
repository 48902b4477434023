"""Records the pinned Codex and Gemini CLIs' streams for the routes the normalisers read.

`python -m tests.unit.scoring.streams.record` runs each capture below through the real
pinned CLI (found as a rep finds it) against evalkit's scripted server, in a scratch folder
of its own, and writes the CLI's stdout as it came, followed by the lines evalkit appends
after a Codex run (`patch_moves`), with only the scratch folder's path replaced by
``/tmp/rec`` so the files do not depend on where they were recorded. The
recorded files are test data: the tests read them, never this script.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from evalkit.models import Script, Step, ToolUseBlock
from evalkit.reference.scripted_server import ScriptedServer
from evalkit.reference.wire.gemini import GeminiServer
from evalkit.reference.wire.responses import PATCH_END, ResponsesServer
from evalkit.run.agents.clis import find_agent_cli
from evalkit.run.agents.codex import patch_moves, prepare_codex, skills_root
from evalkit.run.agents.gemini import home as gemini_home
from evalkit.run.agents.gemini import prepare_gemini

HERE = Path(__file__).parent
SKILL = "---\nname: write\ndescription: how to write a note\n---\nWrite notes with a summary.\n"
Paths = dict[str, str]


def bash(command: str) -> ToolUseBlock:
    return ToolUseBlock(name="Bash", input={"command": command})


def patch(body: str) -> ToolUseBlock:
    return bash(f"apply_patch <<'{PATCH_END}'\n*** Begin Patch\n{body}*** End Patch\n{PATCH_END}\n")


def script(*steps: ToolUseBlock) -> Script:
    return Script(steps=[Step(blocks=[s]) for s in steps], final_text="Done.")


def patches(p: Paths) -> Script:
    """apply_patch's add, update, delete, move (out of the project into the vault) and a
    patch that fails, then a shell command that fails."""
    project, vault = p["project"], p["vault"]
    return script(
        ToolUseBlock(name="Write", input={"file_path": f"{project}/new.md", "content": "# New\n"}),
        ToolUseBlock(
            name="Edit",
            input={"file_path": f"{project}/notes.md", "old_string": "old line", "new_string": "x"},
        ),
        patch(f"*** Delete File: {project}/gone.md\n"),
        patch(f"*** Update File: {project}/moved.md\n*** Move to: {vault}/moved.md\n@@\n-m\n+m2\n"),
        patch(f"*** Update File: {project}/absent.md\n@@\n-a\n+b\n"),
        bash("false"),
    )


def skill_reads(p: Paths) -> Script:
    """Every form of reading one skill's SKILL.md, then listing and searching across skills."""
    skill = shlex.quote(p["skill"])
    skills = shlex.quote(p["skills"])
    code = f"print(open({p['skill']!r}).read())"
    return script(
        *[
            bash(c)
            for c in (
                f"cat {skill}",
                f"cat -n {skill}",
                f"sed -n '1,200p' {skill}",
                f"head -n 50 {skill}",
                f"tail -n +1 {skill}",
                f"nl -ba {skill}",
                f"awk '{{print}}' {skill}",
                f"less {skill}",
                f"python3 -c {shlex.quote(code)}",
                f"ls {skills}",
                f"find {skills} -name SKILL.md",
                f"grep -l name {skills}/*/SKILL.md",
                f"rg -l description {skills}",
            )
        ]
    )


def gemini_edits(p: Paths) -> Script:
    """write_file, replace, a replace whose text is not there, and a shell command that
    fails."""
    project = p["project"]
    return script(
        ToolUseBlock(name="Write", input={"file_path": f"{project}/new.md", "content": "# New\n"}),
        ToolUseBlock(
            name="Edit",
            input={"file_path": f"{project}/notes.md", "old_string": "old line", "new_string": "x"},
        ),
        ToolUseBlock(
            name="Edit",
            input={"file_path": f"{project}/notes.md", "old_string": "absent", "new_string": "y"},
        ),
        ToolUseBlock(name="Skill", input={"skill": "demo:write"}),
        bash("false"),
    )


CAPTURES: dict[str, tuple[str, Callable[[Paths], Script]]] = {
    "codex/exec-patches.jsonl": ("codex", patches),
    "codex/exec-skill-reads.jsonl": ("codex", skill_reads),
    "gemini/stream-edits.jsonl": ("gemini", gemini_edits),
    "gemini/stream-skill-reads.jsonl": ("gemini", skill_reads),
}


def world(scratch: Path, agent: str) -> Paths:
    """The project, the vault stand-in and the skill, as a rep of `agent` places them."""
    project = scratch / "sandbox" / "project"
    project.mkdir(parents=True)
    (scratch / "sandbox" / "vault").mkdir()
    files = {"notes.md": "first line\nold line\n", "gone.md": "g\n", "moved.md": "m\n"}
    for name, text in files.items():
        (project / name).write_text(text)
    plugin = scratch / "plugin-demo" / "skills" / "write"
    plugin.mkdir(parents=True)
    (plugin / "SKILL.md").write_text(SKILL)
    gemini = gemini_home(scratch) / ".gemini" / "skills"
    skills = skills_root(scratch) if agent == "codex" else gemini
    folder = "demo:write" if agent == "codex" else "write"
    return {
        "project": str(project),
        "vault": str(scratch / "sandbox" / "vault"),
        "skills": str(skills),
        "skill": str(skills / folder / "SKILL.md"),
        "plugin": str(scratch / "plugin-demo"),
    }


def record(name: str, agent: str, make: Callable[[Paths], Script]) -> None:
    with tempfile.TemporaryDirectory(prefix="rec-") as tmp:
        scratch = Path(tmp)
        paths = world(scratch, agent)
        served = make(paths)
        plugins = [Path(paths["plugin"])]
        env = {"PATH": os.environ["PATH"], "HOME": str(scratch / "home"), "LC_ALL": "C.UTF-8"}
        server: ScriptedServer
        if agent == "codex":
            server = ResponsesServer(served, skills=Path(paths["skills"])).start()
            launch = prepare_codex(
                find_agent_cli("codex"), scratch, server.base_url, "evalkit-demo", plugins, env
            )
            command, run_env = launch.command, launch.env
        else:
            server = GeminiServer(served).start()
            command, run_env = prepare_gemini(
                find_agent_cli("gemini"), scratch, server.base_url, "evalkit-demo", plugins, env
            )
        try:
            done = subprocess.run(
                command, input=b"Do the task.", cwd=paths["project"], env=run_env,
                capture_output=True, timeout=180,
            )  # fmt: skip
        finally:
            server.stop()
        after = patch_moves(scratch) if agent == "codex" else ""
        text = (done.stdout.decode() + after).replace(str(scratch), "/tmp/rec")
        (HERE / name).write_text(text, encoding="utf-8")
        print(f"{name}: exit {done.returncode}, {len(text.splitlines())} lines")


def main(names: list[str]) -> None:
    for name, (agent, make) in CAPTURES.items():
        if not names or name in names:
            record(name, agent, make)


if __name__ == "__main__":
    main(sys.argv[1:])
