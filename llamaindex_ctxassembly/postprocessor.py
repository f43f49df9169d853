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

import inspect
import os
from collections.abc import Sequence
from typing import Any

from llama_index.core.bridge.pydantic import Field, PrivateAttr, field_serializer, field_validator
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle

from ctxassembly.assembler import Assembled, Assembler
from ctxassembly.errors import ConfigError
from ctxassembly.render import SEPARATOR, cite_id
from ctxassembly.report import Decision, Report
from ctxassembly.stages.arrange import Order
from llamaindex_ctxassembly.events import ContextAssemblyEvent
from llamaindex_ctxassembly.mapping import CITE_KEY, MetadataKeys, compact, nodes_to_chunks, to_nodes

__all__ = ["ContextAssemblyPostprocessor"]

dispatcher = get_dispatcher(__name__)

# fields that configure the Assembler: changing one after construction rebuilds it
_ASSEMBLER_FIELDS = frozenset({"order", "reranker", "embedder", "options"})
_OWN_FIELDS = frozenset({"budget", "target_version", "order", "reranker", "embedder"})


class ContextAssemblyPostprocessor(BaseNodePostprocessor):
    """Filter, de-duplicate, version-check, merge, budget, order and label retrieved nodes.

    The returned nodes are copies (the caller's nodes are never changed). Their metadata
    gains ``status`` (``current``, ``unversioned``; ``superseded``/``other_version`` under
    ``version_policy="label"``) and the ``assembly_*`` facts (position, relevance rank,
    retriever score, merged_from, duplicates, conflicts_with, flags, a compact report).
    The LLM view shows only the labels (title, section, version, date, status) unless
    ``labels_only=False``; the ``assembly_*`` keys are never shown or embedded.

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
    :raises ConfigError: an unknown or invalid option (the message lists valid ones).

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
    version_key: str = Field(default="version", description="Metadata key of the version label.")
    title_key: str = Field(default="title", description="Metadata key of the title label.")
    section_key: str = Field(default="section", description="Metadata key of the section label.")
    date_key: str = Field(default="date", description="Metadata key of the date label.")
    doc_id_key: str = Field(default="doc_id", description="Metadata key of the document id (else ref_doc_id).")
    status_key: str = Field(default="status", description="Metadata key the status label is written to.")
    labels_only: bool = Field(default=True, description="Show the LLM only the label keys of the metadata.")
    text_template: str | None = Field(default=None, description="text_template set on returned nodes.")
    metadata_template: str | None = Field(default=None, description="metadata_template set on returned nodes.")

    _assembler: Assembler = PrivateAttr()
    _last_report: Report | None = PrivateAttr(default=None)

    @field_validator("budget", mode="before")
    @classmethod
    def _check_budget(cls, value: object) -> object:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"budget must be a positive int (tokens), got {value!r}")
        return value

    @field_serializer("reranker", "embedder")
    def _model_spec(self, value: Any) -> str | None:
        # a name or path is data; a model object is not (see the class docstring)
        return os.fspath(value) if isinstance(value, (str, os.PathLike)) else None

    def __init__(self, **data: Any) -> None:
        super().__init__(**data)
        # built here, not in a validator, so ConfigError reaches the caller unwrapped
        self._assembler = self._build()

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if name in _ASSEMBLER_FIELDS:
            self._assembler = self._build()

    def _build(self) -> Assembler:
        clash = sorted(_OWN_FIELDS & set(self.options))
        if clash:
            raise ConfigError(f"options {clash} are fields of ContextAssemblyPostprocessor; pass them as fields")
        kwargs: dict[str, Any] = {"order": self.order, **self.options}
        # reranker/embedder are Assembler options only in newer cores: pass them when set
        if self.reranker is not None:
            kwargs["reranker"] = self.reranker
        if self.embedder is not None:
            kwargs["embedder"] = self.embedder
        try:
            return Assembler(**kwargs)
        except TypeError as e:
            valid = sorted(inspect.signature(Assembler).parameters)
            raise ConfigError(f"{e}; valid Assembler options: {', '.join(valid)}") from None

    @classmethod
    def class_name(cls) -> str:
        return "ContextAssemblyPostprocessor"

    @property
    def last_report(self) -> Report | None:
        """The report of the most recent call (``None`` before the first)."""
        return self._last_report

    @property
    def keys(self) -> MetadataKeys:
        return MetadataKeys(
            version=self.version_key,
            title=self.title_key,
            section=self.section_key,
            date=self.date_key,
            doc_id=self.doc_id_key,
            status=self.status_key,
        )

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        question = _question(query_bundle)
        records = nodes_to_chunks(nodes, self.keys)
        assembled = self._assembler.run(question, records, budget=self.budget, target_version=self.target_version)
        out, event = self._finish(assembled, nodes)
        dispatcher.event(event)
        return out

    async def _apostprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        question = _question(query_bundle)
        records = nodes_to_chunks(nodes, self.keys)
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
            labels_only=self.labels_only,
            text_template=self.text_template,
            metadata_template=self.metadata_template,
        )
        out = self._fit(out, [c.index for c in assembled.chunks], assembled.report)
        self._last_report = assembled.report
        event = ContextAssemblyEvent(
            question=assembled.question,
            report=assembled.report.to_dict(),
            node_ids=[n.node.node_id for n in out],
        )
        return out, event

    def _fit(self, out: list[NodeWithScore], indices: list[int | None], report: Report) -> list[NodeWithScore]:
        """Keep the budget on what LlamaIndex shows the LLM, not only on what the core counted.

        The core counts its own labelled blocks; the LLM view is the node's template.
        With the defaults the view is the shorter of the two, so nothing happens; a
        longer ``text_template`` or ``labels_only=False`` can make it longer, and then the
        lowest-ranked nodes leave with reason ``over_budget`` at stage ``llamaindex``.
        """
        count = self._assembler.count_tokens
        limit = self.budget - sum(getattr(s, "reserve", 0) for s in self._assembler.stages)
        kept = list(zip(out, indices, strict=True))
        dropped = False
        while kept:
            tokens = count(SEPARATOR.join(n.node.get_content(metadata_mode=MetadataMode.LLM) for n, _ in kept))
            if tokens <= limit:
                report.note("llamaindex", "llm_view", tokens=tokens, limit=limit)
                break
            worst = max(range(len(kept)), key=lambda i: _rank(kept[i][0], i))
            _, index = kept.pop(worst)
            gone = report.decisions[_checked(index)]
            report.decisions[gone.index] = Decision(
                gone.index, gone.id, "llamaindex", "over_budget", {"why": "the node's LLM view is over budget"}
            )
            dropped = True
        if dropped:
            summary = compact(report)
            for position, (n, index) in enumerate(kept):
                d = report.decisions[_checked(index)]
                report.decisions[d.index] = Decision(d.index, d.id, d.stage, d.reason, d.detail, position)
                n.node.metadata["assembly_position"] = position
                n.node.metadata[CITE_KEY] = cite_id(position)
                n.node.metadata["assembly_report"] = summary
        return [n for n, _ in kept]


def _checked(index: int | None) -> int:
    if index is None:
        raise RuntimeError("an assembled chunk lost its input index in the core")
    return index


def _rank(node: NodeWithScore, fallback: int) -> int:
    rank = node.node.metadata.get("assembly_relevance_rank")
    return fallback if rank is None else int(rank)


def _question(query_bundle: QueryBundle | None) -> str:
    if query_bundle is None:
        raise ConfigError(
            "ContextAssemblyPostprocessor needs the question: pass query_bundle=QueryBundle(q) or query_str=q"
        )
    return query_bundle.query_str
