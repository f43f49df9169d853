"""Translate LangChain ``Document``s to ctxassembly chunks and back, never touching the caller's.

``page_content`` is the chunk text. Chunk fields are read from metadata keys that are
configurable (:class:`MetadataKeys`): each field names one or more keys, the first one
present wins, so the defaults cover both LangChain's loaders (``source``, ``start_index``)
and corpora that carry ``doc_id``/``start``. The chunk id is ``Document.id``, else
metadata ``id``, else ``#<position in the input>`` (stable for one call, like the core's
own fallback).

Policies, each chosen so that a retriever's ordinary output needs no cleaning:

* a missing score is ``None``, not 0: the core's ``none_score`` policy decides (by default
  such chunks are ranked by order and lexical match, and skip the score threshold);
* ``start_index == -1`` is what LangChain's splitters write when they could not find the
  chunk in its source: it means "no offset", so the chunk simply does not merge;
* with only a start offset, ``end = start + len(page_content)``;
* a ``date``/``datetime`` value becomes its ISO string; a numeric version its string.

The returned documents are new ``Document`` objects: the same ``id``, the assembled text
(merged, excerpted or sanitised by the pipeline), a deep copy of the source document's
metadata, and one extra key, ``ctxassembly`` (see :func:`to_documents`).
"""

from __future__ import annotations

import copy
import datetime as dt
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.documents import Document
from pydantic import BaseModel, ConfigDict, field_validator

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ChunkError
from ctxassembly.render import cite_id, labels
from ctxassembly.report import Report

__all__ = ["METADATA_KEY", "MetadataKeys", "to_chunk", "to_chunks", "to_documents"]

METADATA_KEY = "ctxassembly"
"""The metadata key under which returned documents carry their assembly facts."""

Keys = tuple[str, ...]


class MetadataKeys(BaseModel):
    """Which metadata keys feed which chunk field; each field lists keys, first present wins.

    A single string is accepted for a one-key field: ``MetadataKeys(version="release")``.

    :raises pydantic.ValidationError: an empty key list or a non-string key.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: Keys = ("id",)
    doc_id: Keys = ("doc_id", "source")
    title: Keys = ("title",)
    section: Keys = ("section",)
    version: Keys = ("version",)
    date: Keys = ("date",)
    start: Keys = ("start_index", "start")
    end: Keys = ("end_index", "end")
    score: Keys = ("score", "relevance_score")

    @field_validator("*", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        if isinstance(value, str):
            return (value,)
        if isinstance(value, Sequence) and not value:
            raise ValueError("give at least one metadata key (a str or a tuple of str)")
        return value


def _lookup(metadata: Mapping[str, Any], keys: Keys) -> tuple[str | None, Any]:
    for key in keys:
        if key in metadata and metadata[key] is not None:
            return key, metadata[key]
    return None, None


def _where(position: int, doc_id: object) -> str:
    return f"document {position} (id {doc_id!r})"


def to_chunk(doc: Document, position: int, keys: MetadataKeys) -> Chunk:
    """The chunk for ``doc`` at ``position`` of the input (its ``index``; ``#position`` if id-less).

    :raises ChunkError: see :func:`to_chunks`.
    """
    if not isinstance(doc, Document):
        got, where = type(doc).__name__, f"document {position}"
        raise ChunkError(f"expected a langchain_core Document, got {got}", field="<document>", chunk=where)
    where = _where(position, doc.id)
    text = doc.page_content
    if not isinstance(text, str):
        hint = "; decode it first, e.g. text.decode('utf-8')" if isinstance(text, bytes) else ""
        raise ChunkError(f"expected str, got {type(text).__name__}{hint}", field="page_content", chunk=where)
    metadata = doc.metadata if doc.metadata is not None else {}
    if not isinstance(metadata, Mapping):
        raise ChunkError(f"expected a mapping, got {type(metadata).__name__}", field="metadata", chunk=where)

    used: dict[str, str] = {}  # chunk field -> the metadata key it came from (for error messages)
    values: dict[str, Any] = {}
    for name in ("id", "doc_id", "title", "section", "version", "date", "start", "end", "score"):
        key, value = _lookup(metadata, getattr(keys, name))
        if key is None:
            continue
        used[name] = key
        if name == "date" and isinstance(value, (dt.date, dt.datetime)):
            value = value.isoformat()
        elif name in ("start", "end") and isinstance(value, numbers.Integral) and not isinstance(value, bool):
            value = int(value)
            if value < 0:  # LangChain splitters write -1 for "not found in the source"
                continue
        elif name == "score" and isinstance(value, numbers.Real) and not isinstance(value, bool):
            value = float(value)  # numpy scalars from vector stores
        values[name] = value
    if doc.id is not None:
        values["id"], used["id"] = doc.id, "Document.id"
    elif "id" not in values:
        values["id"] = f"#{position}"
    if isinstance(values.get("start"), int) and "end" not in values:
        values["end"] = values["start"] + len(text)

    # Chunk.from_dict validates every field; re-raise naming the document and the key.
    try:
        return Chunk.from_dict({**values, "text": text, "meta": dict(metadata)}, index=position)
    except ChunkError as e:
        key = used.get(e.field, e.field)
        prefix = f"chunk {e.chunk}: field {e.field!r}: "
        message = str(e).removeprefix(prefix)
        where = _where(position, doc.id)
        raise ChunkError(f"{message} (from metadata key {key!r})", field=e.field, chunk=where) from None


def to_chunks(documents: Sequence[Document], keys: MetadataKeys | None = None) -> list[Chunk]:
    """One chunk per document, in order (``chunk.index`` is the document's position).

    :raises ChunkError: a non-Document item, a non-string ``page_content`` or a
        wrong-typed metadata value; the message names the document and the field or key.
    """
    keys = MetadataKeys() if keys is None else keys
    if isinstance(documents, (str, bytes, Document)):
        got = type(documents).__name__
        raise ChunkError(f"expected a sequence of Documents, got a single {got}", field="documents", chunk="<all>")
    return [to_chunk(doc, i, keys) for i, doc in enumerate(documents)]


def _json_list(value: object) -> list[Any]:
    return list(value) if isinstance(value, (tuple, list)) else []


def summary(report: Report) -> dict[str, Any]:
    """The call-level facts every returned document carries (the full report goes to callbacks)."""
    data = report.to_dict()
    keep = ("question", "budget", "target_version", "tokens_before", "tokens_after", "kept", "dropped", "reasons")
    return {k: data[k] for k in keep}


def facts(chunk: Chunk, position: int, report: Report, call: dict[str, Any] | None = None) -> dict[str, Any]:
    """What the assembler did to one kept chunk, JSON-ready (``call``: a precomputed :func:`summary`)."""
    decision = report.decisions[chunk.index] if chunk.index is not None else None
    meta = chunk.meta
    return {
        "position": position,
        "cite": cite_id(position),
        "chunk_id": chunk.id,
        "score": chunk.score,
        "retriever_score": meta.get("retriever_score"),
        "relevance_rank": meta.get("relevance_rank"),
        "status": meta.get("status"),
        "version_from": meta.get("version_from"),
        "conflicts_with": _json_list(meta.get("conflicts_with")),
        "merged_from": _json_list(meta.get("merged_from")),
        "duplicates": _json_list(meta.get("duplicates")),
        "excerpt": bool(meta.get("excerpt", False)),
        "flags": _json_list(meta.get("flags")),
        "span": [chunk.start, chunk.end] if chunk.start is not None else None,
        "labels": labels(chunk, position),
        "decision": decision.to_dict() if decision is not None else None,
        "report": copy.deepcopy(summary(report) if call is None else call),
    }


def to_documents(
    chunks: Sequence[Chunk],
    documents: Sequence[Document],
    report: Report,
    metadata_key: str = METADATA_KEY,
) -> list[Document]:
    """New documents for the assembled ``chunks``, in their final order.

    Each keeps the ``id`` of the input document the chunk came from (``chunk.index``),
    takes the assembled text as ``page_content`` and a deep copy of that document's
    metadata plus ``metadata[metadata_key]``: ``position``, ``cite`` (the citation id the
    context shows, ``"1"`` for the first block: a reply's ``[1]`` maps back to ``chunk_id``),
    ``chunk_id``, ``score`` (the
    assembler's relevance score), ``retriever_score``, ``relevance_rank``, ``status``
    (``current``/``unversioned``, or ``superseded``/``other_version`` under
    ``version_policy="label"``), ``version_from`` (where the version label came from:
    ``field``, ``path``, ``title``, ``text`` or ``None``), ``conflicts_with``, ``merged_from``, ``duplicates``,
    ``excerpt``, ``flags``, ``span``, ``labels`` (what the context shows), ``decision``
    (this chunk's line of the report) and ``report`` (the call's summary).
    """
    out = []
    call = summary(report)  # once per call: to_dict() walks every decision
    for position, chunk in enumerate(chunks):
        if chunk.index is None:
            raise RuntimeError(f"chunk {chunk.id!r} has no input index; it did not come from to_chunks")
        source = documents[chunk.index]
        metadata = copy.deepcopy(dict(source.metadata or {}))
        metadata[metadata_key] = facts(chunk, position, report, call)
        out.append(Document(id=source.id, page_content=chunk.text, metadata=metadata))
    return out
