"""LangChain integration of ctxassembly: a document compressor plus prompt helpers.

``ContextAssemblyCompressor`` drops into ``ContextualCompressionRetriever`` and
``DocumentCompressorPipeline``; ``format_documents`` / ``render_documents`` give the
labelled context; :func:`langchain_ctxassembly.chains.build_chain` wires
``retriever | assembler | prompt | llm``. Install with ``pip install 'ctxassembly[langchain]'``.

:raises MissingExtraError: on import, when langchain-core is not installed.
"""

from ctxassembly.errors import MissingExtraError

try:
    import langchain_core  # noqa: F401 - checked here so the error names the extra
except ImportError:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("langchain-core", "langchain") from None

from langchain_ctxassembly.chains import PROMPT, build_chain
from langchain_ctxassembly.compressor import REPORT_EVENT, ContextAssemblyCompressor
from langchain_ctxassembly.mapping import MetadataKeys, to_chunks, to_documents
from langchain_ctxassembly.render import format_documents, render_documents

__all__ = [
    "PROMPT",
    "REPORT_EVENT",
    "ContextAssemblyCompressor",
    "MetadataKeys",
    "build_chain",
    "format_documents",
    "render_documents",
    "to_chunks",
    "to_documents",
]
