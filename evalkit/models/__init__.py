"""The one set of data contracts every evalkit command shares, a module per audience.

Models read from files people write forbid unknown fields, so a typo fails loudly
instead of silently meaning nothing. Models written to disk carry ``schema_version``.
"""

from __future__ import annotations

from evalkit.models.base import (
    NAME_PATTERN as NAME_PATTERN,
)
from evalkit.models.base import (
    RESERVED_VARIANTS as RESERVED_VARIANTS,
)
from evalkit.models.base import (
    SCHEMA_VERSION as SCHEMA_VERSION,
)
from evalkit.models.base import (
    Level as Level,
)
from evalkit.models.base import (
    Model as Model,
)
from evalkit.models.base import (
    Polarity as Polarity,
)
from evalkit.models.base import (
    ScenarioSet as ScenarioSet,
)
from evalkit.models.base import (
    Strict as Strict,
)
from evalkit.models.base import (
    StrictAliased as StrictAliased,
)
from evalkit.models.base import (
    VerdictValue as VerdictValue,
)
from evalkit.models.base import (
    is_name as is_name,
)
from evalkit.models.config import (
    Bounds as Bounds,
)
from evalkit.models.config import (
    BuildStep as BuildStep,
)
from evalkit.models.config import (
    CheckerConfig as CheckerConfig,
)
from evalkit.models.config import (
    ExpectedBar as ExpectedBar,
)
from evalkit.models.config import (
    FixturesConfig as FixturesConfig,
)
from evalkit.models.config import (
    GateConfig as GateConfig,
)
from evalkit.models.config import (
    HistoryCommit as HistoryCommit,
)
from evalkit.models.config import (
    JudgeConfig as JudgeConfig,
)
from evalkit.models.config import (
    NeighbourConfig as NeighbourConfig,
)
from evalkit.models.config import (
    Rate01 as Rate01,
)
from evalkit.models.config import (
    RequiredHook as RequiredHook,
)
from evalkit.models.config import (
    SuiteConfig as SuiteConfig,
)
from evalkit.models.config import (
    TierBar as TierBar,
)
from evalkit.models.config import (
    VariantConfig as VariantConfig,
)
from evalkit.models.config import (
    WorldConfig as WorldConfig,
)
from evalkit.models.records import (
    DIFF_SUFFIX as DIFF_SUFFIX,
)
from evalkit.models.records import (
    EVIDENCE_FILES as EVIDENCE_FILES,
)
from evalkit.models.records import (
    CellExpectation as CellExpectation,
)
from evalkit.models.records import (
    EvidenceLine as EvidenceLine,
)
from evalkit.models.records import (
    ImportRecord as ImportRecord,
)
from evalkit.models.records import (
    Plan as Plan,
)
from evalkit.models.records import (
    PlanCell as PlanCell,
)
from evalkit.models.records import (
    ServedRequest as ServedRequest,
)
from evalkit.models.records import (
    VerificationRecord as VerificationRecord,
)
from evalkit.models.scenarios import (
    Launch as Launch,
)
from evalkit.models.scenarios import (
    Premise as Premise,
)
from evalkit.models.scenarios import (
    Scenario as Scenario,
)
from evalkit.models.scenarios import (
    ScenarioFile as ScenarioFile,
)
from evalkit.models.scripts import (
    Block as Block,
)
from evalkit.models.scripts import (
    Quote as Quote,
)
from evalkit.models.scripts import (
    Script as Script,
)
from evalkit.models.scripts import (
    Step as Step,
)
from evalkit.models.scripts import (
    TextBlock as TextBlock,
)
from evalkit.models.scripts import (
    ToolUseBlock as ToolUseBlock,
)
from evalkit.models.transcript import (
    ApiErrorMessage as ApiErrorMessage,
)
from evalkit.models.transcript import (
    ApiRetry as ApiRetry,
)
from evalkit.models.transcript import (
    HookEvent as HookEvent,
)
from evalkit.models.transcript import (
    InitEvent as InitEvent,
)
from evalkit.models.transcript import (
    ResultEvent as ResultEvent,
)
from evalkit.models.transcript import (
    SandboxManifest as SandboxManifest,
)
from evalkit.models.transcript import (
    ToolCall as ToolCall,
)
from evalkit.models.transcript import (
    Transcript as Transcript,
)
from evalkit.models.verdicts import (
    GuardEntry as GuardEntry,
)
from evalkit.models.verdicts import (
    GuardPath as GuardPath,
)
from evalkit.models.verdicts import (
    GuardRecord as GuardRecord,
)
from evalkit.models.verdicts import (
    JudgeRecord as JudgeRecord,
)
from evalkit.models.verdicts import (
    JudgeVote as JudgeVote,
)
from evalkit.models.verdicts import (
    Reach as Reach,
)
from evalkit.models.verdicts import (
    Rerun as Rerun,
)
from evalkit.models.verdicts import (
    ResultRow as ResultRow,
)
from evalkit.models.verdicts import (
    Verdict as Verdict,
)
from evalkit.models.verdicts import (
    WorldView as WorldView,
)
