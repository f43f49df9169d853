"""LlamaIndex integration of ctxassembly: a node postprocessor and its instrumentation event.

Install with ``pip install 'ctxassembly[llamaindex]'``. See docs/llamaindex.md.
"""

from ctxassembly.errors import MissingExtraError

try:
    import llama_index.core  # noqa: F401 - the check that the extra is installed
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("llama-index-core", "llamaindex") from e

from llamaindex_ctxassembly.events import ContextAssemblyEvent
from llamaindex_ctxassembly.mapping import MetadataKeys, nodes_to_chunks, to_nodes
from llamaindex_ctxassembly.postprocessor import ContextAssemblyPostprocessor

__all__ = [
    "ContextAssemblyEvent",
    "ContextAssemblyPostprocessor",
    "MetadataKeys",
    "nodes_to_chunks",
    "to_nodes",
]
