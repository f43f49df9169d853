"""Render documents as the labelled context a prompt shows (ctxassembly.render).

Documents returned by :class:`~langchain_ctxassembly.ContextAssemblyCompressor` render
exactly as the assembler counted them against the budget: their labels are read from
their ``assembly_labels`` metadata, and each keeps its citation id (``assembly_cite``:
``id="2"`` stays ``2`` even when a subset or another order is rendered, so a reply's
``[2]`` still maps to ``assembly_chunk_id``; documents of several calls, whose ids would
repeat, are numbered afresh in the order given). Any other document is mapped with
:class:`~langchain_ctxassembly.mapping.MetadataKeys` and cited by its position, so a plain
retriever's output can be rendered the same way. Bodies and attributes are escaped: no
document can close its own tag or forge another's labels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda

from ctxassembly.chunk import Chunk, FrozenMeta
from ctxassembly.kinds import Format
from ctxassembly.metadata import CHUNK_ID, CITE, LABELS, MetadataKeys
from ctxassembly.render import Renderer
from langchain_ctxassembly.mapping import to_chunk

__all__ = ["format_documents", "render_documents"]


def _labelled(doc: Document, position: int, keys: MetadataKeys) -> tuple[Chunk, int]:
    """The chunk to render for ``doc`` and the position it is cited by."""
    metadata = doc.metadata if isinstance(doc.metadata, Mapping) else {}
    shown = metadata.get(LABELS)
    if not isinstance(shown, Mapping) or not isinstance(doc.page_content, str):
        return to_chunk(doc, position, keys), position
    cite = str(metadata.get(CITE) or shown.get("id", ""))
    chunk = Chunk(
        id=str(metadata.get(CHUNK_ID) or cite),
        text=doc.page_content,
        title=shown.get("title"),
        section=shown.get("section"),
        version=shown.get("version"),
        date=shown.get("date"),
        meta=FrozenMeta({k: shown[k] for k in ("status", "source") if shown.get(k)}),
        index=position,
    )
    return chunk, int(cite) - 1 if cite.isdigit() and int(cite) > 0 else position


def format_documents(
    documents: Sequence[Document],
    fmt: Format = "xml",
    keys: MetadataKeys | None = None,
) -> str:
    """The context block for ``documents``, in their order.

    :param fmt: ``xml`` (``<document id="1" title=.. version=.. status=..>``), ``evidence``
        or ``plain``; use the compressor's format so the budget holds.
    :raises ChunkError: a document that cannot be mapped (names the document and field).
    :raises ConfigError: an unknown format.
    """
    renderer = Renderer(fmt)
    keys = MetadataKeys() if keys is None else keys
    pairs = [_labelled(d, i, keys) for i, d in enumerate(documents)]
    positions = [p for _, p in pairs]
    if len(set(positions)) < len(positions):  # documents of several calls: number them afresh
        positions = list(range(len(pairs)))
    return renderer.render([c for c, _ in pairs], positions)


render_documents: RunnableLambda[Sequence[Document], str] = RunnableLambda(format_documents, name="format_documents")
"""``format_documents`` as a runnable: ``retriever | render_documents`` gives the context string."""
