"""Translate LlamaIndex nodes to ctxassembly chunks and the assembled chunks back to nodes.

Nodes in, chunks through the core, copies of the nodes out. The adapter only translates;
every decision is the core's.

* ``NodeWithScore.score`` is the chunk's score, both ways. ``None`` (fusion retrievers
  and keyword retrievers emit it) passes through as ``None``: the core ranks such chunks
  by their incoming order and the question's words, and skips the score threshold for
  them (``none_score="rank"``; pass ``none_score="drop"`` or ``"error"`` in ``options``
  for another policy). On the way out the score is the core's relevance score (the
  reranker's when one runs); the retriever's is kept in ``assembly_retriever_score``.
* ``node.node_id`` is the chunk id; the node text is ``get_content(MetadataMode.NONE)``.
* version, title, section, date and doc id come from metadata keys (configurable);
  the doc id falls back to ``ref_doc_id``. Without a version key the core finds the
  version where readers put it: ``file_path`` / ``file_name`` / ``url`` metadata (they
  travel in ``Chunk.meta``), then ``ref_doc_id``, the title, the text's change notes
  (``options={"location_keys": ...}`` changes the keys); a version found so is written
  back under the version key of the returned node. ``start_char_idx``/``end_char_idx`` are the
  offsets the core merges adjacent chunks by. Every other metadata key travels in
  ``Chunk.meta`` (so ``acl`` and scope keys reach the admit stage).
* Out: a deep copy of the input node (the caller's node is never touched), text replaced
  when the core merged, excerpted or cleaned it, metadata extended with the status label,
  the citation id ``cite`` (``"1"`` for the first node: a reply's ``[1]`` maps back to that
  node's ``node_id``), for a node without a title the ``source`` the core shows (the file
  name of ``file_path``, or the ``url``; a ``source`` the node already has stays as it is),
  and the ``assembly_*`` facts, which are hidden from the LLM and embedding views.
"""

from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from llama_index.core.schema import BaseNode, ImageNode, MetadataMode, Node, NodeWithScore, TextNode

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ChunkError
from ctxassembly.render import labels
from ctxassembly.report import Report

__all__ = ["CITE_KEY", "INTERNAL_KEYS", "MetadataKeys", "compact", "node_text", "nodes_to_chunks", "to_nodes"]

#: metadata key of the citation id a returned node shows the LLM (``"1"`` for the first;
#: the node's ``node_id`` is the real id it maps back to)
CITE_KEY = "cite"
#: metadata key of the source shown for a node without a title (a path's file name or a URL)
SOURCE_KEY = "source"

#: metadata keys the adapter adds besides the status label; never shown to the LLM or embedded
INTERNAL_KEYS = (
    "assembly_position",
    "assembly_relevance_rank",
    "assembly_retriever_score",
    "assembly_merged_from",
    "assembly_duplicates",
    "assembly_conflicts_with",
    "assembly_flags",
    "assembly_version_from",
    "assembly_report",
)
# chunk.meta key -> node metadata key, for the facts that exist only on some chunks
_LIST_FACTS = {
    "merged_from": "assembly_merged_from",
    "duplicates": "assembly_duplicates",
    "conflicts_with": "assembly_conflicts_with",
    "flags": "assembly_flags",
}


@dataclass(frozen=True)
class MetadataKeys:
    """Which node metadata keys hold the chunk labels, and where the status label goes."""

    version: str = "version"
    title: str = "title"
    section: str = "section"
    date: str = "date"
    doc_id: str = "doc_id"
    status: str = "status"

    def labels(self) -> tuple[str, ...]:
        """The keys the LLM sees, in the order it sees them (the core's label order)."""
        return (self.title, self.section, self.version, self.date, self.status)


def node_text(node: BaseNode) -> str:
    """The node's text without metadata.

    :raises ChunkError: a node with no text (an image, audio or video node without a
        caption); the message names the node and its type.
    """
    if isinstance(node, TextNode) and not (isinstance(node, ImageNode) and not node.text):
        return node.get_content(metadata_mode=MetadataMode.NONE)
    if isinstance(node, Node) and node.text_resource is not None and node.text_resource.text is not None:
        return node.get_content(metadata_mode=MetadataMode.NONE)
    raise ChunkError(
        f"{type(node).__name__} has no text; ctxassembly assembles text. Give the node a text "
        "caption or filter non-text nodes out before this postprocessor",
        field="text",
        chunk=repr(node.node_id),
    )


def nodes_to_chunks(nodes: Sequence[NodeWithScore], keys: MetadataKeys) -> list[dict[str, Any]]:
    """Chunk records (the mapping :meth:`Chunk.from_dict` reads) for ``nodes``, in order.

    The core validates them; its errors name the field and the node id.

    :raises ChunkError: an item that is not a ``NodeWithScore``, or a node without text.
    """
    records = []
    for i, item in enumerate(nodes):
        if not isinstance(item, NodeWithScore):
            raise ChunkError(
                f"expected a NodeWithScore, got {type(item).__name__}", field="<node>", chunk=f"at index {i}"
            )
        node = item.node
        meta = dict(node.metadata)
        # Missing metadata is no error: a chunk without a version is "unversioned" (kept,
        # never compared), one without a doc id cannot merge and is its own family.
        fields = {name: meta.pop(getattr(keys, name), None) for name in ("version", "title", "section", "date")}
        doc_id = meta.pop(keys.doc_id, None)
        fields["doc_id"] = doc_id if doc_id is not None else node.ref_doc_id
        if isinstance(fields["date"], (dt.date, dt.datetime)):
            fields["date"] = fields["date"].isoformat()  # the label the model reads is ISO 8601
        records.append(
            {
                "id": node.node_id,
                "text": node_text(node),
                "score": item.score,
                **fields,
                "start": getattr(node, "start_char_idx", None),
                "end": getattr(node, "end_char_idx", None),
                "meta": meta,
            }
        )
    return records


def compact(report: Report) -> dict[str, Any]:
    """The part of the report every returned node carries: counts, not decisions."""
    return {
        "budget": report.budget,
        "target_version": report.target_version,
        "tokens_before": report.tokens_before,
        "tokens_after": report.tokens_after,
        "kept": len(report.kept),
        "dropped": len(report.dropped),
        "reasons": dict(report.reasons),
    }


def to_nodes(
    chunks: Iterable[Chunk],
    nodes: Sequence[NodeWithScore],
    report: Report,
    keys: MetadataKeys,
    *,
    labels_only: bool = True,
    text_template: str | None = None,
    metadata_template: str | None = None,
) -> list[NodeWithScore]:
    """Copies of the input nodes behind ``chunks`` (the assembled ones), in final order.

    ``chunk.index`` is the input position the core kept for every chunk, merged ones
    included (a merged chunk is its best-ranked part with the joined text).
    """
    summary = compact(report)
    out = []
    for position, chunk in enumerate(chunks):
        if chunk.index is None:
            raise RuntimeError(f"chunk {chunk.id!r} lost its input index in the core")
        node = _copy(nodes[chunk.index].node)
        original = nodes[chunk.index]
        if chunk.text != node_text(original.node):  # merged, excerpted or cleaned by the core
            node.set_content(chunk.text)
            node.embedding = None  # it embedded the old text
            if isinstance(node, TextNode):
                node.start_char_idx, node.end_char_idx = chunk.start, chunk.end
        shown = labels(chunk, position)
        node.metadata = _metadata(node.metadata, chunk, position, summary, keys, shown=shown)
        visible = {CITE_KEY, *keys.labels(), *((SOURCE_KEY,) if "source" in shown else ())}
        if labels_only:
            # What the LLM reads is what the core counted against the budget: the labels.
            node.excluded_llm_metadata_keys = [k for k in node.metadata if k not in visible]
        else:
            node.excluded_llm_metadata_keys = _union(node.excluded_llm_metadata_keys, INTERNAL_KEYS)
        hidden = (*INTERNAL_KEYS, keys.status, CITE_KEY)  # the citation id is a position, not content
        node.excluded_embed_metadata_keys = _union(node.excluded_embed_metadata_keys, hidden)
        if text_template is not None:
            node.text_template = text_template
        if metadata_template is not None:
            node.metadata_template = metadata_template
        out.append(NodeWithScore(node=node, score=chunk.score))
    return out


def _metadata(
    old: Mapping[str, Any],
    chunk: Chunk,
    position: int,
    summary: dict[str, Any],
    keys: MetadataKeys,
    *,
    shown: Mapping[str, str],
) -> dict[str, Any]:
    meta = dict(old)
    meta[CITE_KEY] = shown["id"]
    if "source" in shown and meta.get(SOURCE_KEY) is None:
        meta[SOURCE_KEY] = shown["source"]  # file name of file_path, or the url (a given source stays)
    if chunk.version is not None and meta.get(keys.version) is None:
        # the core found the version in the file path, URL, title or text: the label it
        # counted against the budget is the one the LLM reads
        meta[keys.version] = chunk.version
    if chunk.meta.get("status") is not None:
        meta[keys.status] = chunk.meta["status"]
    meta["assembly_position"] = position
    meta["assembly_relevance_rank"] = chunk.meta.get("relevance_rank")
    meta["assembly_retriever_score"] = chunk.meta.get("retriever_score", chunk.score)
    if chunk.meta.get("version_from") is not None:
        meta["assembly_version_from"] = chunk.meta["version_from"]  # field / path / title / text
    for src, dst in _LIST_FACTS.items():
        if chunk.meta.get(src):
            meta[dst] = list(chunk.meta[src])
    meta["assembly_report"] = dict(summary)
    # labels first, in the core's order, so the LLM view reads like the core's labels
    order = (CITE_KEY, keys.title, keys.section, *((SOURCE_KEY,) if "source" in shown else ()), *keys.labels()[2:])
    first = {k: meta[k] for k in order if k in meta}
    return {**first, **{k: v for k, v in meta.items() if k not in first}}


def _copy(node: BaseNode) -> BaseNode:
    # An IndexNode's ``obj`` is a retriever or query engine, not data: shared, not cloned.
    obj = getattr(node, "obj", None)
    memo = {} if obj is None else {id(obj): obj}
    return copy.deepcopy(node, memo)


def _union(first: Iterable[str], second: Iterable[str]) -> list[str]:
    return list(dict.fromkeys([*first, *second]))
