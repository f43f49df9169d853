"""ContextAssemblyPostprocessor: ctxassembly as a LlamaIndex node postprocessor.

Put it last in ``node_postprocessors``; it returns the nodes the LLM should read, in the
order it should read them, labelled through LlamaIndex's own metadata rendering::

    from llamaindex_ctxassembly import ContextAssemblyPostprocessor

    engine = index.as_query_engine(
        similarity_top_k=40,
        node_postprocessors=[ContextAssemblyPostprocessor(budget=3000)],
    )
    response = engine.query("Which SQLite versions does Django 4.2 support?")
    # response.source_nodes: de-duplicated, Django 4.2 only, within 3000 tokens,
    # each node's LLM view starting with its title, section, version and status.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from llama_index.core.bridge.pydantic import ConfigDict, Field, PrivateAttr, field_serializer, field_validator
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle

from ctxassembly.assembler import Assembled, Assembler
from ctxassembly.errors import ConfigError
from ctxassembly.kinds import Order
from ctxassembly.metadata import (
    MetadataKeys,
    ScoreFrom,
    assembly_options,
    check_budget,
)
from ctxassembly.render import Spotlight
from ctxassembly.report import Report
from llamaindex_ctxassembly.events import ContextAssemblyEvent
from llamaindex_ctxassembly.mapping import nodes_to_chunks, to_nodes

__all__ = ["ContextAssemblyPostprocessor"]

dispatcher = get_dispatcher(__name__)

# fields that are assembly options; assigning one of them (or ``options``) rebuilds the Assembler
_FIELDS_AS_OPTIONS = ("order", "reranker", "embedder")


class ContextAssemblyPostprocessor(BaseNodePostprocessor):
    """Filter, de-duplicate, version-check, merge, budget, order and label retrieved nodes.

    The returned nodes are copies (the caller's nodes are never changed) and keep the
    retriever's score (``score_from="assembly"``: the assembly's). Their metadata gains
    ``status`` (``current``, ``unversioned``; ``superseded``/``other_version`` under
    ``version_policy="label"``) and the ``assembly_*`` facts of
    :mod:`ctxassembly.metadata`, the convention the LangChain adapter shares.
    The LLM view shows only the labels the core rendered and counted (``cite``, the
    citation id: ``"1"`` for the first node, a reply's ``[1]``; title, section; ``source``
    for a node without a title; version, date, status) unless ``labels_only=False``; the
    ``assembly_*`` keys (``assembly_cite`` and ``assembly_chunk_id`` among them) are
    never shown or embedded.

    The full report of the last call is :attr:`last_report`; every call also fires a
    :class:`~llamaindex_ctxassembly.events.ContextAssemblyEvent` on LlamaIndex
    instrumentation.

    :param budget: tokens the returned nodes' LLM view may fill (counted with the
        assembler's tokenizer, cl100k_base by default).
    :param target_version: the version to answer for; ``None`` reads it from the
        question, else the latest version per document.
    :param order: ``bookend`` (default), ``edges``, ``relevance`` or ``reading``.
    :param reranker: passed to ``Assembler(reranker=...)`` when not ``None``.
    :param embedder: passed to ``Assembler(embedder=...)`` when not ``None``.
    :param options: any other :class:`ctxassembly.Assembler` keyword option.
    :param keys: which metadata keys feed which chunk field, and the key the status
        label is written to (:class:`ctxassembly.metadata.MetadataKeys`).
    :param score_from: ``retriever`` (default) or ``assembly``: the score returned nodes carry.
    :param node_embeddings: the reranker's bi-encoder and the semantic dedup use each
        node's ``embedding`` (the vector its store matched it with) instead of embedding
        its text again; the report notes how many were reused (``embeddings``/``supplied``).
        Only for a store whose embedding model is the ``embedder``'s: a vector of another
        size fails the call (a ``ChunkError`` naming the node and ``meta.embedding``), one
        of another model of the same size would compare unlike with like. Off by default.
    :raises pydantic.ValidationError: a bad field (a budget that is not a positive int,
        ``"1500"`` included), an unknown field, an unknown option, or an option given both
        as a field and in ``options`` (the message lists the valid options).

    Serialisation: the postprocessor pickles (multiprocessing, Ray workers) and
    round-trips through ``to_dict`` / ``from_dict`` and ``to_json`` / ``from_json``. A
    ``reranker`` or ``embedder`` given by name or path serialises as that string and
    loads again from it; a model object is not data (weights, a device) and serialises
    as ``None``: set it again after loading. Pickle keeps model objects.
    """

    budget: int = Field(description="Token budget of the assembled context.")
    target_version: str | None = Field(default=None, description="Version to answer for (None: from the question).")
    order: Order = Field(default="bookend", description="bookend, edges, relevance or reading.")
    reranker: Any = Field(default=None, description="Assembler reranker (optional; serialised by name or path).")
    embedder: Any = Field(default=None, description="Assembler embedder (optional; serialised by name or path).")
    options: dict[str, Any] = Field(default_factory=dict, description="Other ctxassembly.Assembler options.")
    keys: MetadataKeys = Field(default_factory=MetadataKeys, description="Metadata keys of the chunk fields.")
    score_from: ScoreFrom = Field(default="retriever", description="Score of returned nodes: retriever or assembly.")
    labels_only: bool = Field(default=True, description="Show the LLM only the label keys of the metadata.")
    node_embeddings: bool = Field(default=False, description="Reuse node.embedding (the store's model = embedder's).")
    text_template: str | None = Field(default=None, description="text_template set on returned nodes.")
    metadata_template: str | None = Field(default=None, description="metadata_template set on returned nodes.")

    model_config = ConfigDict(extra="forbid")

    _assembler: Assembler = PrivateAttr()
    _last_report: Report | None = PrivateAttr(default=None)

    @field_validator("budget", mode="before")
    @classmethod
    def _check_budget(cls, value: object) -> int:
        return check_budget(value)

    @field_serializer("reranker", "embedder")
    def _model_spec(self, value: Any) -> str | None:
        # a name or path is data; a model object is not (see the class docstring)
        return os.fspath(value) if isinstance(value, (str, os.PathLike)) else None

    def model_post_init(self, context: Any, /) -> None:
        self._assembler = self._build()  # a bad option fails at construction

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if name in (*_FIELDS_AS_OPTIONS, "options"):
            self._assembler = self._build()

    def _build(self) -> Assembler:
        fields = {k: getattr(self, k) for k in _FIELDS_AS_OPTIONS}
        return Assembler(assembly_options(fields, self.options, owner="ContextAssemblyPostprocessor"))

    @classmethod
    def class_name(cls) -> str:
        return "ContextAssemblyPostprocessor"

    @property
    def assembler(self) -> Assembler:
        """The core Assembler every call runs (built from the fields and ``options``)."""
        return self._assembler

    @property
    def last_report(self) -> Report | None:
        """The report of the most recent call (``None`` before the first)."""
        return self._last_report

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        question = _question(query_bundle)
        records = nodes_to_chunks(nodes, self.keys, embeddings=self.node_embeddings)
        assembled = self._assembler.run(question, records, budget=self.budget, target_version=self.target_version)
        out, event = self._finish(assembled, nodes)
        dispatcher.event(event)
        return out

    async def _apostprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        question = _question(query_bundle)
        records = nodes_to_chunks(nodes, self.keys, embeddings=self.node_embeddings)
        assembled = await self._assembler.arun(
            question, records, budget=self.budget, target_version=self.target_version
        )
        out, event = self._finish(assembled, nodes)
        await dispatcher.aevent(event)
        return out

    def _finish(
        self, assembled: Assembled, nodes: Sequence[NodeWithScore]
    ) -> tuple[list[NodeWithScore], ContextAssemblyEvent]:
        out = to_nodes(
            assembled.chunks,
            nodes,
            assembled.report,
            self.keys,
            score_from=self.score_from,
            labels_only=self.labels_only,
            text_template=self.text_template,
            metadata_template=self.metadata_template,
        )
        if assembled.spotlight is not None:
            spotlight_nodes(out, assembled.spotlight)
        self._last_report = assembled.report
        event = ContextAssemblyEvent(
            question=assembled.question,
            report=assembled.report.to_dict(),
            node_ids=[n.node.node_id for n in out],
        )
        return out, event


#: the metadata key of the first node that tells the LLM what the marking means
SPOTLIGHT_KEY = "data_marking"


def spotlight_nodes(nodes: Sequence[NodeWithScore], spotlight: Spotlight) -> None:
    """Mark the text of the (copied) ``nodes`` as the core marked its context, and put what
    the marking means before it: a label of the first node the LLM view shows."""
    for i, item in enumerate(nodes):
        node = item.node
        node.set_content(spotlight.mark(node.get_content(metadata_mode=MetadataMode.NONE)))
        node.embedding = None
        if i == 0:
            node.metadata = {SPOTLIGHT_KEY: spotlight.note(), **node.metadata}
            node.excluded_embed_metadata_keys = [*node.excluded_embed_metadata_keys, SPOTLIGHT_KEY]
            node.excluded_llm_metadata_keys = [k for k in node.excluded_llm_metadata_keys if k != SPOTLIGHT_KEY]


def _question(query_bundle: QueryBundle | None) -> str:
    if query_bundle is None:
        raise ConfigError(
            "ContextAssemblyPostprocessor needs the question: pass query_bundle=QueryBundle(q) or query_str=q"
        )
    return query_bundle.query_str
