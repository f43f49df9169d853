"""Render documents as the labelled context a prompt shows (ctxassembly.render).

Documents returned by :class:`~langchain_ctxassembly.ContextAssemblyCompressor` render
exactly as the assembler counted them against the budget: their labels are read from
their ``assembly_labels`` metadata. Any other document is mapped with
:class:`~langchain_ctxassembly.mapping.MetadataKeys`, so a plain retriever's output can be
rendered the same way. Bodies and attributes are escaped: no document can close its own
tag or forge another's labels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda

from ctxassembly.chunk import Chunk, FrozenMeta
from ctxassembly.metadata import LABELS, MetadataKeys
from ctxassembly.render import Format, Renderer
from langchain_ctxassembly.mapping import to_chunk

__all__ = ["format_documents", "render_documents"]


def _labelled(doc: Document, position: int, keys: MetadataKeys) -> Chunk:
    shown = (doc.metadata or {}).get(LABELS)
    if not isinstance(shown, Mapping) or "id" not in shown or not isinstance(doc.page_content, str):
        return to_chunk(doc, position, keys)
    return Chunk(
        id=str(shown["id"]),
        text=doc.page_content,
        title=shown.get("title"),
        section=shown.get("section"),
        version=shown.get("version"),
        date=shown.get("date"),
        meta=FrozenMeta({"status": shown["status"]} if shown.get("status") else {}),
        index=position,
    )


def format_documents(
    documents: Sequence[Document],
    fmt: Format = "xml",
    keys: MetadataKeys | None = None,
) -> str:
    """The context block for ``documents``, in their order.

    :param fmt: ``xml`` (``<document id=.. title=.. version=.. status=..>``), ``evidence``
        or ``plain``; use the compressor's format so the budget holds.
    :raises ChunkError: a document that cannot be mapped (names the document and field).
    :raises ConfigError: an unknown format.
    """
    renderer = Renderer(fmt)
    keys = MetadataKeys() if keys is None else keys
    return renderer.render([_labelled(d, i, keys) for i, d in enumerate(documents)])


render_documents: RunnableLambda[Sequence[Document], str] = RunnableLambda(format_documents, name="format_documents")
"""``format_documents`` as a runnable: ``retriever | render_documents`` gives the context string."""
