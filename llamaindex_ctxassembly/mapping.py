"""Translate LlamaIndex nodes to ctxassembly chunk records and the assembled chunks back to nodes.

Nodes in, chunks through the core, copies of the nodes out. The adapter only translates;
every decision is the core's. The metadata convention is the one both adapters share
(:mod:`ctxassembly.metadata`):

* ``node.node_id`` is the chunk id, ``get_content(MetadataMode.NONE)`` its text,
  ``start_char_idx``/``end_char_idx`` the offsets the core merges neighbours by (the
  adapters' default ``merge_gap``, :data:`~ctxassembly.metadata.ADJACENT_GAP`, bridges the
  whitespace a splitter drops between its chunks), and ``NodeWithScore.score`` its score
  (``None`` stays ``None``: the core's ``none_score`` policy ranks such chunks by
  incoming order and the question's words).
* doc id, title, section, version and date come from metadata keys
  (:class:`~ctxassembly.metadata.MetadataKeys`); the doc id falls back to ``ref_doc_id``.
  Every metadata key travels in ``Chunk.meta`` (``file_path`` / ``url`` carry versions,
  ``acl`` reaches the admit stage). A value the core cannot use drops that node with the
  fate ``input``/``invalid``, never the call.
* Nodes without offsets that a splitter linked as neighbours (``prev``/``next``
  relationships, both among the candidates, same document) are placed one character
  apart in their chain's order, so the core merges them as it merges splitter neighbours
  (see :func:`place_linked`); these positions are not written back to the nodes.
* Out: a deep copy of the input node (the caller's node is never touched), its text
  replaced when the core merged, excerpted or cleaned it, its score the retriever's
  (``score_from="assembly"``: the assembly's), its metadata extended with the labels the
  LLM reads (the citation id under ``cite``, ``"1"`` for the first node: a reply's ``[1]``
  maps back to that node's ``node_id`` and ``assembly_chunk_id``; for a node without a title
  the ``source`` the core shows, the file name of ``file_path`` or the ``url``; a version
  the core found in a path or URL; the status) and the ``assembly_*`` facts, which are
  hidden from the LLM and embedding views. The label keys hold the labels as the core
  shows them (one line, no bidi controls, a URL without credentials or secret query
  parameters, a path as its file name, what the safety stage cut gone): a node's own
  absolute ``source`` path or a ``title`` that forges ``cite:`` lines never reaches the
  LLM view. With ``labels_only=False`` the other keys are shown as given, each on one line.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Sequence
from typing import Any

from llama_index.core.schema import BaseNode, Document, ImageNode, MetadataMode, Node, NodeWithScore, TextNode

from ctxassembly import metadata as convention
from ctxassembly.chunk import Chunk
from ctxassembly.errors import ChunkError
from ctxassembly.metadata import OUTPUT_KEYS, MetadataKeys, ScoreFrom
from ctxassembly.render import LABELS, labels
from ctxassembly.report import Report

__all__ = ["MetadataKeys", "node_text", "nodes_to_chunks", "to_nodes"]


def node_text(node: BaseNode) -> str:
    """The node's text without metadata; ``""`` for a text document that is empty (a
    reader's empty file: the core drops it as ``input``/``empty``).

    :raises ChunkError: a node with no text (an image, audio or video node without a
        caption); the message names the node and its type.
    """
    if isinstance(node, TextNode) and not (isinstance(node, ImageNode) and not node.text):
        return node.get_content(metadata_mode=MetadataMode.NONE)
    if isinstance(node, Node) and node.text_resource is not None and node.text_resource.text is not None:
        return node.get_content(metadata_mode=MetadataMode.NONE)
    if isinstance(node, Document) and all(
        getattr(node, name, None) is None for name in ("image_resource", "audio_resource", "video_resource")
    ):
        return ""  # a Document built from an empty text keeps no text resource at all
    raise ChunkError(
        f"{type(node).__name__} has no text; ctxassembly assembles text. Give the node a text "
        "caption or filter non-text nodes out before this postprocessor",
        field="text",
        chunk=repr(node.node_id),
    )


def nodes_to_chunks(
    nodes: Sequence[NodeWithScore], keys: MetadataKeys, *, embeddings: bool = False
) -> list[dict[str, Any]]:
    """Chunk records (the mapping :meth:`Chunk.from_dict` reads) for ``nodes``, in order.

    The core validates them: a malformed one is a decision naming the field and the node.
    With ``embeddings``, a node's ``embedding`` (the vector its store matched it with)
    becomes the record's ``embedding``, which the model stages use instead of embedding
    the text (a metadata ``embedding`` key stays first).

    :raises ChunkError: an item that is not a ``NodeWithScore``, or a node without text.
    """
    records = []
    for i, item in enumerate(nodes):
        if not isinstance(item, NodeWithScore):
            raise ChunkError(
                f"expected a NodeWithScore, got {type(item).__name__}", field="<node>", chunk=f"at index {i}"
            )
        node = item.node
        native = {
            "id": node.node_id,
            "score": item.score,
            "start": getattr(node, "start_char_idx", None),
            "end": getattr(node, "end_char_idx", None),
        }
        fallback = {"doc_id": node.ref_doc_id}
        record = convention.to_record(node.metadata, node_text(node), keys, native=native, fallback=fallback)
        if embeddings and node.embedding is not None and "embedding" not in record:
            record["embedding"] = node.embedding
        records.append(record)
    return place_linked(nodes, records)


#: between two chains of linked nodes of one document: their distance is unknown, so far
#: more than any merge gap (they never merge; within a chain the order is the splitter's)
_CHAIN_SPACING = 1_000_000


def place_linked(nodes: Sequence[NodeWithScore], records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Offsets for the nodes whose only adjacency is their ``prev``/``next`` relationships.

    The core merges by ``doc_id`` and offsets alone (it knows no framework type). A node
    without ``start_char_idx`` that is the ``next`` of another such node of the same
    document among the candidates gets ``start`` one character after that one's ``end``
    (a splitter's neighbours are that close; the merge bridges the gap with a blank line).
    Only documents with no offsets at all among the candidates are placed, so positions
    never mix with real ones. Returns ``records`` with those offsets set.
    """
    docs = [_doc_id(r) for r in records]
    with_offsets = {d for d, r in zip(docs, records, strict=True) if "start" in r}
    eligible = {
        item.node.node_id: i
        for i, item in enumerate(nodes)
        if "start" not in records[i] and docs[i] is not None and docs[i] not in with_offsets
    }
    after: dict[int, int] = {}  # position -> position of its linked next neighbour
    for i in eligible.values():
        node = nodes[i].node
        for info, forward in ((node.next_node, True), (node.prev_node, False)):
            j = eligible.get(info.node_id) if info is not None else None
            if j is None or j == i or docs[j] != docs[i]:
                continue
            after.setdefault(*((i, j) if forward else (j, i)))
    followers = set(after.values())
    done: set[int] = set()
    ends: dict[Any, int] = {}  # doc_id -> where its next chain may start
    for head in sorted(i for i in after if i not in followers):
        doc_id = docs[head]
        position = ends.get(doc_id, 0)
        link: int | None = head
        while link is not None and link not in done:
            i = link
            done.add(i)
            length = len(records[i]["text"])
            records[i] = {**records[i], "start": position, "end": position + length}
            position += length + 1
            link = after.get(i)
        ends[doc_id] = position + _CHAIN_SPACING
    return records


def _doc_id(record: dict[str, Any]) -> str | int | float | None:
    """The record's doc id when it is a plain value (one of another type is the core's to
    judge, and its ``__eq__`` or ``__hash__`` is not to be trusted here)."""
    value = record.get("doc_id")
    return value if type(value) in (str, int, float) else None


def to_nodes(
    chunks: Iterable[Chunk],
    nodes: Sequence[NodeWithScore],
    report: Report,
    keys: MetadataKeys,
    *,
    score_from: ScoreFrom = "retriever",
    labels_only: bool = True,
    text_template: str | None = None,
    metadata_template: str | None = None,
) -> list[NodeWithScore]:
    """Copies of the input nodes behind ``chunks`` (the assembled ones), in final order.

    ``chunk.index`` is the input position the core kept for every chunk, merged ones
    included (a merged chunk is its best-ranked part with the joined text).
    """
    call = convention.summary(report)
    out = []
    for position, chunk in enumerate(chunks):
        if chunk.index is None:
            raise RuntimeError(f"chunk {chunk.id!r} lost its input index in the core")
        original = nodes[chunk.index]
        node = _copy(original.node, report, chunk)
        if chunk.text != node_text(original.node):  # merged, excerpted or cleaned by the core
            node.set_content(chunk.text)
            node.embedding = None  # it embedded the old text
            if isinstance(node, TextNode) and node.start_char_idx is not None:
                node.start_char_idx, node.end_char_idx = chunk.start, chunk.end
        shown = labels(chunk, position)  # what the core rendered and counted for this chunk
        meta = dict(node.metadata)
        meta[keys.cite] = shown["id"]
        if "source" in shown and meta.get(keys.source) is None:
            meta[keys.source] = shown["source"]  # file name of file_path, or the url (a given source stays)
        if chunk.version is not None and meta.get(keys.version[0]) is None:
            # the core found the version in the file path, URL, title or text: the label it
            # counted against the budget is the one the LLM reads
            meta[keys.version[0]] = chunk.version
        if chunk.meta.get("status") is not None:
            meta[keys.status] = chunk.meta["status"]
        meta.update(convention.facts(chunk, position, report, call, original.score))
        # The label keys hold the labels as the core rendered and counted them (one line,
        # no bidi controls, a URL without credentials, a path as its file name, the part
        # the safety stage cut gone); a label the core does not show is hidden from the LLM
        # (a titled node's source, a title that was all injection).
        label_keys = dict(zip(LABELS, keys.labels(), strict=True))
        for name, key in label_keys.items():
            if name in shown and key in meta:
                meta[key] = _one_line(shown[name])
        visible = [k for n, k in label_keys.items() if n in shown]
        unshown = [k for n, k in label_keys.items() if n not in shown]
        first = {k: meta[k] for k in visible if k in meta}
        node.metadata = {**first, **{k: v for k, v in meta.items() if k not in first}}
        if labels_only:
            # What the LLM reads is what the core counted against the budget: the labels.
            node.excluded_llm_metadata_keys = [k for k in node.metadata if k not in visible]
        else:
            excluded = _union(node.excluded_llm_metadata_keys, (*OUTPUT_KEYS, *unshown))
            node.excluded_llm_metadata_keys = excluded
            # the caller's other keys are shown as given, on one line each: a value cannot
            # start a forged ``cite:`` or ``status:`` line
            node.metadata = {k: (_one_line(v) if k not in excluded else v) for k, v in node.metadata.items()}
        hidden = (*OUTPUT_KEYS, keys.status, keys.cite)  # the citation id is a position, not content
        node.excluded_embed_metadata_keys = _union(node.excluded_embed_metadata_keys, hidden)
        if text_template is not None and isinstance(node, (TextNode, Node)):  # the node kinds that have one
            node.text_template = text_template
        if metadata_template is not None:
            node.metadata_template = metadata_template
        score = original.score if score_from == "retriever" else chunk.score
        out.append(NodeWithScore(node=node, score=score))
    return out


def _copy(node: BaseNode, report: Report, chunk: Chunk) -> BaseNode:
    # An IndexNode's ``obj`` is a retriever or query engine, not data: shared, not cloned.
    obj = getattr(node, "obj", None)
    memo = {} if obj is None else {id(obj): obj}
    try:
        return copy.deepcopy(node, dict(memo))
    except Exception:  # a metadata value that cannot be deep-copied: shared, and noted
        shared = convention.copy_memo(node.metadata.values())
        convention.note_shallow(report, chunk, [k for k, v in node.metadata.items() if id(v) in shared])
        return copy.deepcopy(node, {**memo, **shared})


_BREAKS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _one_line(value: object) -> object:
    """``value`` as LlamaIndex's ``{key}: {value}`` template may show it: unchanged when its
    text is one line, else that text with every line break and control character a space."""
    try:
        text = value if isinstance(value, str) else str(value)
    except Exception:
        return f"<{type(value).__name__}>"
    return _BREAKS.sub(" ", text) if _BREAKS.search(text) else value


def _union(first: Iterable[str], second: Iterable[str]) -> list[str]:
    return list(dict.fromkeys([*first, *second]))
