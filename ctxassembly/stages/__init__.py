"""The pipeline stages, in the order the default Assembler runs them."""

from ctxassembly.stages.admit import Admit
from ctxassembly.stages.arrange import Arrange
from ctxassembly.stages.base import Context, Stage
from ctxassembly.stages.dedup import Dedup
from ctxassembly.stages.excerpt import Excerpt
from ctxassembly.stages.extract import Extract
from ctxassembly.stages.horizon import Horizon
from ctxassembly.stages.merge import Merge
from ctxassembly.stages.relevance import Relevance
from ctxassembly.stages.rerank import Rerank
from ctxassembly.stages.safety import Safety
from ctxassembly.stages.select import Select
from ctxassembly.stages.semantic import SemanticDedup
from ctxassembly.stages.tables import Tables
from ctxassembly.stages.version import VersionFilter

__all__ = [
    "Admit",
    "Arrange",
    "Context",
    "Dedup",
    "Excerpt",
    "Extract",
    "Horizon",
    "Merge",
    "Relevance",
    "Rerank",
    "Safety",
    "Select",
    "SemanticDedup",
    "Stage",
    "Tables",
    "VersionFilter",
]
