"""A results folder with evidence, fabricated: rows, transcripts in the CLI's stream-json
shape, diffs, check/process/judge files. Hostile strings are planted where an agent under
test could put them. Used by the HTML report tests and its benchmark."""

from __future__ import annotations

import json
import random
from hashlib import sha256
from pathlib import Path
from typing import Any

from evalkit.models import PlanCell, ResultRow
from evalkit.records.folder.results import append_row
from evalkit.records.folder.workdir import safe_name
from evalkit.run.context import RunContext, record_plan
from evalkit.run.grid import variant_rep
from evalkit.suite.config import Suite

XSS_NOTE = "<script>window.__evalkitXss = 'note'</script>"
XSS_DIFF = "<img src=x onerror=\"window.__evalkitXss='diff'\">"
XSS_TRANSCRIPT = "</script><script>window.__evalkitXss='transcript'</script><!--"
XSS_JUDGE = "<b onmouseover=\"window.__evalkitXss='judge'\">YES</b>"
TOOL_MARK = "fabricated-tool-input-7f3a"
WORDS = (
    "the export writer keeps cents as integers while csv keeps decimal amounts and the "
    "pipeline still routes through the legacy path until the migration lands next week "
    "oauth tokens expire after fifteen minutes so the client refreshes them before each "
    "batch request and retries once on a 401 response from the upstream service"
).split()


def _line(event: dict[str, Any]) -> str:
    return json.dumps(event, ensure_ascii=False)


def _prose(rng: random.Random, words: int) -> str:
    return " ".join(rng.choices(WORDS, k=words))


_BODIES: list[str] = []


def _body(rng: random.Random) -> str:
    """A file's worth of text for a Read result, from a pool of 400 made once: fabricating
    gigabytes word by word would take longer than the benchmark it feeds."""
    if not _BODIES:
        pool = random.Random(99)
        _BODIES.extend(
            "\n".join(_prose(pool, 14) for _ in range(pool.randint(20, 120))) for _ in range(400)
        )
    return rng.choice(_BODIES)


def transcript(
    rng: random.Random,
    note: str,
    *,
    size: int = 0,
    quoted: str | None = None,
    error: bool = False,
) -> str:
    """A stream-json transcript: hooks, init, tool calls with results, text, the result line.
    `size` pads it with further Read/Bash round trips to about that many bytes."""
    out = [
        _line(
            {
                "type": "system",
                "subtype": "hook_started",
                "hook_name": "SessionStart:startup",
                "hook_event": "SessionStart",
            }
        ),
        _line(
            {
                "type": "system",
                "subtype": "hook_response",
                "hook_name": "SessionStart:startup",
                "hook_event": "SessionStart",
                "output": "vault at $OS_VAULT_PATH " + XSS_DIFF,
                "exit_code": 0,
                "outcome": "success",
            }
        ),
        _line(
            {
                "type": "system",
                "subtype": "init",
                "cwd": "/sandbox/project",
                "model": "m-1",
                "session_id": "s",
                "claude_code_version": "2.1.328",
                "tools": ["Bash", "Read", "Write"],
                "plugins": [{"name": "os-vault"}],
            }
        ),
        _line(
            {
                "type": "assistant",
                "message": {
                    "id": "m0",
                    "content": [
                        {"type": "text", "text": "Looking at the project. " + XSS_TRANSCRIPT}
                    ],
                },
            }
        ),
    ]
    if quoted is not None:
        out.append(
            _line(
                {
                    "type": "assistant",
                    "message": {
                        "id": "mq",
                        "content": [
                            {
                                "type": "text",
                                "text": "You asked:\n" + quoted + "\nso I will start there.",
                            }
                        ],
                    },
                }
            )
        )
    calls = 0

    def call(name: str, data: dict[str, Any], result: str) -> None:
        nonlocal calls
        calls += 1
        cid = f"toolu_{calls:05d}"
        out.append(
            _line(
                {
                    "type": "assistant",
                    "message": {
                        "id": f"m{calls}",
                        "content": [{"type": "tool_use", "id": cid, "name": name, "input": data}],
                    },
                }
            )
        )
        out.append(
            _line(
                {
                    "type": "user",
                    "message": {
                        "role": "user",
                        "content": [{"type": "tool_result", "tool_use_id": cid, "content": result}],
                    },
                }
            )
        )

    call(
        "Write",
        {"file_path": f"/sandbox/vault/{TOOL_MARK}.md", "content": note},
        "File created successfully",
    )
    total = sum(len(x) + 1 for x in out)
    while total < size:
        before = len(out)
        if rng.random() < 0.5:
            call(
                "Read", {"file_path": f"/sandbox/project/lib/f{rng.randint(1, 400)}.rb"}, _body(rng)
            )
        else:
            call(
                "Bash",
                {"command": f"git log --oneline -n {rng.randint(5, 40)}"},
                "\n".join(f"{rng.getrandbits(28):07x} {_prose(rng, 8)}" for _ in range(30)),
            )
        out.append(
            _line(
                {
                    "type": "assistant",
                    "message": {
                        "id": f"t{calls}",
                        "content": [{"type": "text", "text": _prose(rng, rng.randint(10, 60))}],
                    },
                }
            )
        )
        total += sum(len(x) + 1 for x in out[before:])
    result = {
        "type": "result",
        "subtype": "success",
        "is_error": error,
        "terminal_reason": "api_error" if error else "completed",
        "result": "Saved the note. " + XSS_TRANSCRIPT,
        "num_turns": calls + 1,
        "duration_ms": 4200,
        "total_cost_usd": 0.0123,
    }
    out.append(_line(result))
    return "\n".join(out) + "\n"


def vault_diff(note: str) -> str:
    lines = note.splitlines() or [""]
    body = "\n".join("+" + line for line in lines)
    return (
        f"diff --git a/{TOOL_MARK}.md b/{TOOL_MARK}.md\nnew file mode 100644\n"
        f"--- /dev/null\n+++ b/{TOOL_MARK}.md\n@@ -0,0 +1,{len(lines)} @@\n{body}\n"
        f"diff --git a/old.md b/old.md\n--- a/old.md\n+++ b/old.md\n@@ -1 +1 @@\n"
        f"-before\n+{XSS_DIFF}\n"
    )


def make_folder(
    suite: Suite,
    work: Path,
    *,
    models: tuple[str, ...] = ("sonnet", "haiku"),
    scenarios: tuple[str, ...] = ("P1", "N1", "P2", "N2"),
    reps: int = 2,
    size: tuple[int, int] = (0, 0),
    quoted: str | None = None,
    seed: int = 7,
    variants: tuple[str, ...] = ("suite",),
    inner_loop: bool = False,
) -> list[ResultRow]:
    """rows × evidence; the first rep of the first cell carries a breach, the last an ERROR.
    `quoted` is put into every transcript, as a model quoting its prompt would. Several
    `variants` are interleaved rep by rep, each with its own subject hash, as a grid runs them."""
    rng = random.Random(seed)
    work.mkdir(parents=True, exist_ok=True)
    run_id = "r20260101T000000Z-fab001"
    ids = [suite.resolve(s).id for s in scenarios]
    ctx = RunContext(suite=suite, workdir=work, results=work / "results.tsv", run_id=run_id)
    many = len(variants) > 1
    cells = [
        PlanCell(
            scenario=i,
            model=m,
            reps=reps,
            variant=v,
            rep_numbers=[variant_rep(k, n, len(variants)) for k in range(1, reps + 1)]
            if many
            else [],
        )
        for i in ids
        for m in models
        for n, v in enumerate(variants)
    ]
    record_plan(ctx, cells, "grid", inner_loop)
    rows: list[ResultRow] = []
    count = len(ids) * len(models) * reps * len(variants)
    for sid in ids:
        positive = suite.resolve(sid).scenario.polarity == "positive"
        for model in models:
            for rep, variant in (
                (variant_rep(k, n, len(variants)), v)
                for k in range(1, reps + 1)
                for n, v in enumerate(variants)
            ):
                index = len(rows)
                error = index == count - 1
                breach = index == 0
                verdict = "ERROR" if error else rng.choice(["PASS", "PASS", "FAIL"])
                reasons = []
                if breach:
                    reasons.append("real-vault-breach:Write:/real/vault/x.md")
                    verdict = "FAIL"
                if error:
                    reasons.append("agent-error:api_error:500")
                elif verdict == "PASS":
                    reasons.append("A-via:written" if positive else "no-vault-write")
                else:
                    reasons.append("A-fail:no-topic-note" if positive else "vault-write:x.md")
                flag = rng.choice(["project-write:yes", "project-write:no"])
                row = ResultRow(
                    scenario=sid,
                    model=model,
                    a="A:ERROR" if error else "A:PASS",
                    b="B:ERROR" if error else "B:PASS",
                    verdict=verdict,  # type: ignore[arg-type]
                    reasons=";".join(reasons + [flag]),
                    flags=flag,
                    rep=rep,
                    run_id=run_id,
                    time="2026-01-01T00:00:00+00:00",
                    bundle_id=f"evb-{model}-fab",
                    turns=3,
                    duration_ms=4200,
                    cost_usd_estimate=0.0123,
                    model_id=f"{model}-id",
                    cli_version="2.1.328",
                    variant=variant,
                    subject_hash="sha256:" + sha256(variant.encode()).hexdigest(),
                )
                append_row(ctx.results, row)
                rows.append(row)
                folder = work / "evidence" / run_id / sid / safe_name(model) / f"rep-{rep}"
                folder.mkdir(parents=True)
                note = f"---\ntitle: fabricated {index}\n---\n\n{XSS_NOTE}\n"
                target = rng.randint(*size) if size[1] else 0
                (folder / "transcript.jsonl").write_text(
                    transcript(rng, note, size=target, quoted=quoted, error=error),
                    encoding="utf-8",
                )
                (folder / "vault.diff").write_text(vault_diff(note), encoding="utf-8")
                (folder / "project.diff").write_text("", encoding="utf-8")
                (folder / "stderr.txt").write_text("", encoding="utf-8")
                (folder / "process.json").write_text(
                    json.dumps(
                        {
                            "exit_code": 1 if error else 0,
                            "stopped": None,
                            "timeout": 900.0,
                            "seconds": 5.5,
                        }
                    )
                )
                check = {
                    "scenario": sid,
                    "model": model,
                    "verdict": verdict,
                    "reasons": reasons,
                    "flags": [flag],
                }
                (folder / "check.json").write_text(json.dumps(check))
                (folder / "judge.json").write_text(
                    json.dumps(
                        {"prompt_sha256": "sha256:0", "raw_output": XSS_JUDGE, "answer": "YES"}
                    )
                )
    return rows
