"""Translate LangChain ``Document``s to ctxassembly chunk records and back, never touching the caller's.

``page_content`` is the chunk text; the other fields come from metadata through the
shared convention (:mod:`ctxassembly.metadata`: :class:`MetadataKeys`, the first present
key wins, so LangChain's ``source`` / ``start_index`` and corpora's ``doc_id`` / ``start``
both work). The chunk id is ``Document.id``, else metadata ``id``, else ``#<position>``.
A metadata value the core cannot use drops that one document (fate ``input``/``invalid``
in the report), never the call.

The returned documents are new ``Document`` objects: the same ``id``, the assembled text
(merged, excerpted or sanitised by the pipeline), a deep copy of the input document's
metadata (a value that cannot be deep-copied is shared, and the report notes it:
``shallow_copy``) and the flat ``assembly_*`` keys (:data:`ctxassembly.metadata.OUTPUT_KEYS`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.documents import Document

from ctxassembly import metadata as convention
from ctxassembly.chunk import Chunk
from ctxassembly.errors import ChunkError
from ctxassembly.metadata import MetadataKeys, ScoreFrom
from ctxassembly.report import Report

__all__ = ["MetadataKeys", "to_chunk", "to_chunks", "to_documents", "to_records"]


def to_records(documents: Sequence[Document], keys: MetadataKeys) -> list[dict[str, Any]]:
    """One chunk record per document, in order, for the core to validate.

    :raises ChunkError: ``documents`` is a single document or string, or an item is not a
        ``Document`` (a caller's type error, not odd metadata).
    """
    if isinstance(documents, (str, bytes, Document)):
        got = type(documents).__name__
        raise ChunkError(f"expected a sequence of Documents, got a single {got}", field="documents", chunk="<all>")
    records = []
    for i, doc in enumerate(documents):
        if not isinstance(doc, Document):
            got = type(doc).__name__
            raise ChunkError(
                f"expected a langchain_core Document, got {got}", field="<document>", chunk=f"document {i}"
            )
        metadata = doc.metadata if isinstance(doc.metadata, dict) else {}
        records.append(convention.to_record(metadata, doc.page_content, keys, native={"id": doc.id}))
    return records


def to_chunk(doc: Document, position: int, keys: MetadataKeys) -> Chunk:
    """The chunk for ``doc`` at ``position`` of the input (strict: see :func:`to_chunks`)."""
    return Chunk.from_dict(to_records([doc], keys)[0], index=position)


def to_chunks(documents: Sequence[Document], keys: MetadataKeys | None = None) -> list[Chunk]:
    """One chunk per document, in order (``chunk.index`` is the document's position).

    Strict, for code that builds chunks itself; the compressor passes the records to the
    core instead, which drops a malformed document as a decision on that document.

    :raises ChunkError: a non-Document item or a metadata value the core cannot use; the
        message names the document (its id, else its position) and the field.
    """
    records = to_records(documents, MetadataKeys() if keys is None else keys)
    return [Chunk.from_dict(r, index=i) for i, r in enumerate(records)]


def to_documents(
    chunks: Sequence[Chunk],
    documents: Sequence[Document],
    report: Report,
    keys: MetadataKeys | None = None,
    score_from: ScoreFrom = "retriever",
) -> list[Document]:
    """New documents for the assembled ``chunks``, in their final order.

    Each keeps the ``id`` of the input document its chunk came from (``chunk.index``),
    takes the assembled text as ``page_content``, a deep copy of that document's metadata
    and the ``assembly_*`` keys
    (``assembly_cite`` is the citation id the context shows, ``"1"`` for the first block:
    a reply's ``[1]`` maps back to ``assembly_chunk_id``). The input's score key (the first of ``keys.score``
    present) keeps the retriever's score unless ``score_from="assembly"``, which writes the
    assembly's score there (and ``relevance_score`` when the input had none).
    """
    keys = MetadataKeys() if keys is None else keys
    call = convention.summary(report)
    out = []
    for position, chunk in enumerate(chunks):
        if chunk.index is None:
            raise RuntimeError(f"chunk {chunk.id!r} has no input index; it did not come from to_chunks")
        source = documents[chunk.index]
        metadata = convention.copy_metadata(source.metadata or {}, report, chunk)
        score_key = next((k for k in keys.score if metadata.get(k) is not None), None)
        given = metadata.get(score_key) if score_key is not None else None
        metadata.update(convention.facts(chunk, position, report, call, given))
        if score_from == "assembly":
            metadata[score_key or "relevance_score"] = chunk.score
        out.append(Document(id=source.id, page_content=chunk.text, metadata=metadata))
    return out
