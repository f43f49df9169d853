"""ctxassembly: the stage between retrieval and generation.

It filters, de-duplicates, version-checks, budgets, orders and labels retrieved chunks,
and records the fate of every one of them.
"""

from ctxassembly.assembler import Assembled, Assembler, assemble
from ctxassembly.chunk import Chunk
from ctxassembly.errors import AbsentVersionError, AbsentVersionWarning, ChunkError, ConfigError, MissingExtraError
from ctxassembly.kinds import Reason
from ctxassembly.ledger import Facts, Ledger
from ctxassembly.options import Options, UnknownOption
from ctxassembly.pipeline import Context, Stage, StageBase
from ctxassembly.render import parse, prompt, render
from ctxassembly.report import Decision, Report
from ctxassembly.stages import (
    Admit,
    Arrange,
    Dedup,
    Excerpt,
    Extract,
    Horizon,
    Merge,
    Relevance,
    Rerank,
    Safety,
    Select,
    SemanticDedup,
    Tables,
    VersionFilter,
)

__version__ = "0.1.0"

__all__ = [
    "AbsentVersionError",
    "AbsentVersionWarning",
    "Admit",
    "Arrange",
    "Assembled",
    "Assembler",
    "Chunk",
    "ChunkError",
    "ConfigError",
    "Context",
    "Decision",
    "Dedup",
    "Excerpt",
    "Extract",
    "Facts",
    "Horizon",
    "Ledger",
    "Merge",
    "MissingExtraError",
    "Options",
    "Reason",
    "Relevance",
    "Report",
    "Rerank",
    "Safety",
    "Select",
    "SemanticDedup",
    "Stage",
    "StageBase",
    "Tables",
    "UnknownOption",
    "VersionFilter",
    "assemble",
    "parse",
    "prompt",
    "render",
]
