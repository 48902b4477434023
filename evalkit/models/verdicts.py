"""What scoring decides and records: verdicts, results rows, and the guarded paths' reach."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from evalkit.models.base import SCHEMA_VERSION, Model, Polarity, VerdictValue


class JudgeVote(Model):
    """One ask of a judge asked more than once: its raw answer, and its own error (a
    timeout, an exit) when it gave none."""

    raw_output: str
    error: str | None = None


class JudgeRecord(Model):
    schema_version: int = SCHEMA_VERSION
    prompt_sha256: str
    raw_output: str
    """The raw answer; a judge asked several times keeps them joined here for a reader."""
    answer: Literal["YES", "NO"] | None = None
    error: str | None = None
    votes: list[JudgeVote] = []
    """One per ask of a judge asked several times, in order: the i-th answers the i-th ask,
    so a replay re-derives every vote and the majority from what was kept."""


class Verdict(Model):
    schema_version: int = SCHEMA_VERSION
    scenario: str
    model: str
    polarity: Polarity
    axis_a: str = Field(description="A:PASS, A:FAIL, A:yes, A:no or A:ERROR")
    axis_b: str = Field(description="B:PASS, B:FAIL or B:ERROR")
    verdict: VerdictValue
    reasons: list[str] = Field(default_factory=list)
    flags: list[str] = Field(default_factory=list, description="informational, never decisive")
    judge: JudgeRecord | None = None


class ResultRow(Model):
    """One line of a results TSV; the first six columns are the ones autoresearch loops read."""

    scenario: str
    model: str
    a: str
    b: str
    verdict: VerdictValue
    reasons: str = Field(description="decisive reasons, then flags, ';'-separated")
    flags: str = Field("-", description="the informational flags alone")
    rep: int = 0
    run_id: str = ""
    time: str = ""
    evalkit_version: str = ""
    cli_version: str = ""
    model_id: str = ""
    bundle_id: str = ""
    turns: int = 0
    duration_ms: int = 0
    cost_usd_estimate: float = Field(
        0.0, description="the CLI's own estimate, from the price table it bundles; not a bill"
    )
    schema_version: int = SCHEMA_VERSION
    attempt: int = Field(1, description="which attempt of the rep this row is; 1 unless retried")
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    variant: str = Field("", description="the subject's variant name; 'suite' for its own")
    subject_hash: str = Field(
        "",
        pattern=r"^(sha256:[0-9a-f]{64})?$",
        description="hash of the subject (wording) the rep ran with; whole, so a torn row fails",
    )


class Reach(Model):
    """What a rep's agent could reach, kept with its process record: the rule that names
    escapes (scoring/escapes.py) reads it, never the machine, so verify re-derives it."""

    confined: bool
    """False for a rep run with --unconfined: nothing stopped it, and its row says so."""
    writable: list[str] = []
    """The rep's own folders: the project and side stores, config dir, plugin copies, HOME."""
    private: list[str] = []
    """Folders private to the sandbox (its /tmp): the rep's own, except where they would
    shadow a hidden path."""
    readable: list[str] = []
    """Read-only mounts: system folders, the CLI install, language runtimes, credentials."""
    hidden: list[str] = []
    """Absent from the sandbox: the suite, the results folder, the scratch of every rep, the
    user's HOME, the guarded paths."""
    partial: list[str] = []
    """Channels of the machine the rep could still see under its backend (srt: its real
    folder names, the proxy variable of its door); empty where the world holds."""
    aliases: dict[str, str] = {}
    """Folders the system names two ways, the long spelling to the short (macOS: `/private/var`
    is `/var`, `/private/tmp` is `/tmp`, `/private/etc` is `/etc`), so a path is one path
    however the agent or evalkit spelt it; empty on Linux."""


class Rerun(Model):
    """One observed script run again by evalkit, outside the rep's sandbox and after its
    agent's process tree was gone, on a copy of the final tree (the tree the kept diff
    shows), confined as the rep was: what the logged runs that ended on that tree are held
    to (`scoring/tampering/reproduced.py`). Kept in the process record, which evalkit alone
    writes."""

    script: str
    args: list[str] = []
    cwd: str = "."
    """Project-relative folder it ran in: the first matching logged run's, where it lay inside."""
    tree: str | None = None
    """Git's tree hash of the copy it ran on: the final tree's, or the row is an ERROR."""
    exits: list[int] = []
    """Each re-run's exit status, in order: a second is run when the first disagrees with a
    logged run, to tell a script whose outcome varies from a logged outcome it never had."""
    stopped: str | None = None
    """Why it gave no status: `timeout` (the rep's own time limit), `interrupted` (the run
    was stopped), `unrunnable` (it could not be started or its tree not copied whole)."""


class WorldView(Model):
    """Where the rep's folders appeared in the agent's world, by role (`project`,
    `store:<name>`, `config`, `plugins`, `home`, `guarded:<env>`), never by a host path: scoring
    maps the world paths a transcript names back onto whichever folder holds the rep now (the
    run's own, or verify's replay)."""

    user: str
    home: str
    hostname: str = ""
    roles: dict[str, str] = {}
    partial: list[str] = []
    """Channels the backend could not make look like the world (`ownership`)."""
    beside: dict[str, str] = {}
    """Where each role beside the sandbox sits in the rep's scratch folder, as the agent's
    adapter laid it out (`config`: Claude's `claude-config`, Codex's `codex-home`, Gemini's
    `gemini-home/.gemini`); a record without it reads the roles' first places."""


class GuardEntry(Model):
    """One path under a guarded root: [size, mtime_ns] (size -1 for a folder), and the
    sha256 of a file that changed during the rep."""

    before: list[int] | None = None
    after: list[int] | None = None
    sha256: str | None = None


class GuardPath(Model):
    """A guarded real-world path observed before and after one rep."""

    root: str
    before_count: int = 0
    before_digest: str = ""
    after_count: int = 0
    after_digest: str = ""
    changed: dict[str, GuardEntry] = Field(
        default_factory=dict, description="path relative to root ('.' for root) -> its entry"
    )


class GuardRecord(Model):
    """guard.json: what every guarded real-world path looked like around the rep. Only the
    entries that differ are kept whole; the rest are named by count and digest."""

    schema_version: int = SCHEMA_VERSION
    paths: list[GuardPath] = Field(default_factory=list)

    def changes(self) -> list[str]:
        """Every changed path, absolute, in a stable order."""
        found = []
        for path in self.paths:
            for rel in sorted(path.changed):
                found.append(path.root if rel == "." else f"{path.root.rstrip('/')}/{rel}")
        return found
