"""The pipeline stages, listed in the order the default pipeline runs them.

admit, depth, version, relevance, horizon, safety, rerank (with ``reranker``), dedup, semantic
dedup (with ``embedder``), merge, then excerpt, or prune (with ``pruner``), or tables +
extract (with ``extract=True``), the LLM stage (with ``llm_stage``), select, arrange
(:meth:`ctxassembly.options.Options.build_stages`). The stage contract is in
:mod:`ctxassembly.pipeline`.
"""

from ctxassembly.stages.admit import Admit
from ctxassembly.stages.arrange import Arrange
from ctxassembly.stages.dedup import Dedup
from ctxassembly.stages.excerpt import Excerpt
from ctxassembly.stages.extract import Extract
from ctxassembly.stages.horizon import Horizon
from ctxassembly.stages.merge import Merge
from ctxassembly.stages.prune import Prune
from ctxassembly.stages.relevance import Relevance
from ctxassembly.stages.rerank import Rerank
from ctxassembly.stages.safety import Safety
from ctxassembly.stages.select import Select
from ctxassembly.stages.semantic import SemanticDedup
from ctxassembly.stages.tables import Tables
from ctxassembly.stages.version import VersionFilter

# run order, not alphabetical (see the docstring)
__all__ = [  # noqa: RUF022
    "Admit",
    "VersionFilter",
    "Relevance",
    "Horizon",
    "Safety",
    "Rerank",
    "Dedup",
    "SemanticDedup",
    "Merge",
    "Excerpt",
    "Prune",
    "Tables",
    "Extract",
    "Select",
    "Arrange",
]
