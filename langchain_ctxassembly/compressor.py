"""ContextAssemblyCompressor: ctxassembly as a LangChain document compressor.

An adapter only: documents become chunks (:mod:`langchain_ctxassembly.mapping`), the core
:class:`~ctxassembly.Assembler` decides what the model reads, and the kept chunks come
back as new documents with their assembly facts in flat ``assembly_*`` metadata keys
(:mod:`ctxassembly.metadata`, the convention both adapters share). The
full report goes to the callbacks as the custom event ``ctxassembly_report`` and stays on
the compressor as :attr:`ContextAssemblyCompressor.last_report`.

Usage::

    from langchain_classic.retrievers import ContextualCompressionRetriever
    from langchain_ctxassembly import ContextAssemblyCompressor

    compressor = ContextAssemblyCompressor(budget=1500)
    retriever = ContextualCompressionRetriever(base_compressor=compressor, base_retriever=base)
    docs = retriever.invoke("How do I ... in Django 4.2?")
    print(compressor.last_report.table())
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from typing import Any, NamedTuple

from langchain_core.callbacks import AsyncCallbackManager, CallbackManager, Callbacks
from langchain_core.documents import BaseDocumentCompressor, Document
from langchain_core.load.serializable import Serializable, SerializedConstructor, SerializedNotImplemented
from pydantic import ConfigDict, Field, PrivateAttr, field_serializer, field_validator

from ctxassembly.assembler import Assembled, Assembler
from ctxassembly.kinds import Format, Order
from ctxassembly.metadata import MetadataKeys, ScoreFrom, assembly_options, check_budget
from ctxassembly.options import Options
from ctxassembly.report import Report
from langchain_ctxassembly.mapping import to_documents, to_records
from langchain_ctxassembly.render import format_documents

__all__ = ["REPORT_EVENT", "Compressed", "ContextAssemblyCompressor"]

REPORT_EVENT = "ctxassembly_report"
"""Name of the custom callback event that carries ``Report.to_dict()`` after each call."""

_FIELDS_AS_OPTIONS = ("order", "format", "reranker", "embedder")


class Compressed(NamedTuple):
    """One call's documents in context order, the context the core rendered and counted, the report."""

    documents: list[Document]
    context: str
    report: Report


class ContextAssemblyCompressor(BaseDocumentCompressor, Serializable):
    """Filter, de-duplicate, version-check, budget, order and label retrieved documents.

    :param budget: tokens the rendered context may use (counted on the real XML text).
    :param target_version: the version to answer for; ``None`` reads it from the query
        ("... in Django 4.2 ...") or takes the latest per document.
    :param order: ``bookend`` (default), ``edges``, ``relevance`` or ``reading``.
    :param format: how the context is rendered and counted: ``xml``, ``evidence``, ``plain``.
    :param reranker, embedder: model components for the core's rerank and semantic
        de-duplication; passed to the Assembler only when set.
    :param options: any other :class:`~ctxassembly.Assembler` keyword option
        (``min_score``, ``near_threshold``, ``version_policy``, ``principals`` ...).
    :param keys: which metadata keys feed which chunk field
        (:class:`ctxassembly.metadata.MetadataKeys`).
    :param score_from: ``retriever`` (default): the input's score key (``score`` /
        ``relevance_score``) keeps the retriever's score and the assembly's goes to
        ``assembly_score``; ``assembly``: the reverse.

    The model is frozen: the Assembler is built once, at construction (so a bad option
    fails there), and reused by every call. A ``model_copy(update=...)`` variant builds
    its own on first use.

    Serialisation: the compressor pickles (multiprocessing, joblib, Ray workers; the
    Assembler is rebuilt in the worker) and round-trips through ``model_dump_json()`` /
    ``model_validate_json()`` and LangChain's ``dumpd`` / ``dumps`` / ``loads``
    (``loads(s, allowed_objects=[ContextAssemblyCompressor], valid_namespaces=
    ["langchain_ctxassembly"])``: LangChain loads only the classes it is told to trust). A ``reranker`` or ``embedder``
    given by name or path serialises as that string and loads again from it; a model
    object is not data (weights, a device) and serialises as ``None``: pass it again after
    loading, ``model_copy(update={"reranker": model})``. Pickle keeps model objects.

    :raises pydantic.ValidationError: a bad field (a budget that is not a positive int,
        ``"1500"`` included), an unknown field, an unknown option, or an option given both
        as a field and in ``options`` (the message lists the valid options).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True, extra="forbid")

    budget: int
    target_version: str | None = None
    order: Order = "bookend"
    format: Format = "xml"
    reranker: Any = None
    embedder: Any = None
    options: dict[str, Any] = Field(default_factory=dict)
    keys: MetadataKeys = Field(default_factory=MetadataKeys)
    score_from: ScoreFrom = "retriever"

    _assembler: Assembler | None = PrivateAttr(default=None)
    _built_from: dict[str, Any] | None = PrivateAttr(default=None)
    _last_report: Report | None = PrivateAttr(default=None)

    @field_validator("budget", mode="before")
    @classmethod
    def _check_budget(cls, value: object) -> int:
        return check_budget(value)

    @field_serializer("reranker", "embedder")
    def _model_spec(self, value: Any) -> str | None:
        # a name or path is data; a model object is not (see the class docstring)
        return os.fspath(value) if isinstance(value, (str, os.PathLike)) else None

    @classmethod
    def is_lc_serializable(cls) -> bool:
        return True

    @classmethod
    def get_lc_namespace(cls) -> list[str]:
        return ["langchain_ctxassembly"]

    def to_json(self) -> SerializedConstructor | SerializedNotImplemented:
        """LangChain's serialised form: the fields that differ from their defaults, models
        by name or path only, nested settings (``keys``) as plain JSON."""
        data = super().to_json()
        if data["type"] == "constructor":
            kwargs = data["kwargs"]
            for name in ("reranker", "embedder"):
                if name in kwargs:
                    spec = self._model_spec(kwargs[name])
                    if spec is None:
                        del kwargs[name]
                    else:
                        kwargs[name] = spec
            for name, value in list(kwargs.items()):
                if dataclasses.is_dataclass(value) and not isinstance(value, type):
                    kwargs[name] = dataclasses.asdict(value)
        return data

    def model_post_init(self, context: Any, /) -> None:
        self.assembler  # noqa: B018 - build now, so that a bad option fails at construction

    @property
    def assembler(self) -> Assembler:
        """The cached core Assembler (rebuilt only if a ``model_copy`` changed the options)."""
        given = self._given()
        if self._assembler is None or not _same(self._built_from, given):
            self._assembler, self._built_from = Assembler(self.assembler_options()), given
        return self._assembler

    def assembler_options(self) -> Options:
        """The validated options the Assembler is built with.

        :raises ConfigError: an option given both as a field and in ``options``, an unknown
            option (listing the valid ones) or a bad value.
        """
        return assembly_options({k: getattr(self, k) for k in _FIELDS_AS_OPTIONS}, self.options, owner="the compressor")

    def _given(self) -> dict[str, Any]:
        return {**{k: getattr(self, k) for k in _FIELDS_AS_OPTIONS}, **self.options}

    @property
    def last_report(self) -> Report | None:
        """The report of the most recently *finished* call (``None`` before the first).

        Thread-safety: concurrent calls each produce their own report and the attribute
        is replaced by one atomic assignment, so it is always a whole report, the one of
        whichever call finished last. For the report of a particular call, read its documents' metadata or
        handle the ``ctxassembly_report`` event.
        """
        return self._last_report

    def compress_documents(
        self,
        documents: Sequence[Document],
        query: str,
        callbacks: Callbacks | None = None,
    ) -> Sequence[Document]:
        """Assemble ``documents`` for ``query``; return new documents in context order.

        A document whose metadata the core cannot use is dropped with the fate
        ``input``/``invalid`` (field and message in the report), never the whole call.

        :raises ChunkError: ``documents`` is not a sequence of ``Document``s.
        :raises ConfigError: a bad query.
        """
        return self.assemble(documents, query, callbacks).documents

    async def acompress_documents(
        self,
        documents: Sequence[Document],
        query: str,
        callbacks: Callbacks | None = None,
    ) -> Sequence[Document]:
        """Async :meth:`compress_documents`: inline when no model stage runs, else in a thread."""
        return (await self.aassemble(documents, query, callbacks)).documents

    def assemble(self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None) -> Compressed:
        """:meth:`compress_documents`, with the context the core rendered (and counted) and the report."""
        records = to_records(documents, self.keys)
        result = self.assembler.run(query, records, budget=self.budget, target_version=self.target_version)
        manager = CallbackManager.configure(inheritable_callbacks=callbacks)
        # run_id=parent_run_id ties the event to the enclosing run, as dispatch_custom_event does
        manager.on_custom_event(REPORT_EVENT, result.report.to_dict(), run_id=manager.parent_run_id)
        return self._finish(result, documents)

    async def aassemble(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> Compressed:
        """Async :meth:`assemble`."""
        records = to_records(documents, self.keys)
        result = await self.assembler.arun(query, records, budget=self.budget, target_version=self.target_version)
        manager = AsyncCallbackManager.configure(inheritable_callbacks=callbacks)
        await manager.on_custom_event(REPORT_EVENT, result.report.to_dict(), run_id=manager.parent_run_id)
        return self._finish(result, documents)

    def _finish(self, result: Assembled, documents: Sequence[Document]) -> Compressed:
        self._last_report = result.report
        docs = to_documents(result.chunks, documents, result.report, self.keys, self.score_from)
        return Compressed(docs, result.text, result.report)

    def format_documents(self, documents: Sequence[Document]) -> str:
        """Render returned documents as the labelled context, in this compressor's format."""
        return format_documents(documents, fmt=self.format, keys=self.keys)


def _same(old: dict[str, Any] | None, new: dict[str, Any]) -> bool:
    # identity, not ==: options may hold models or arrays whose == is costly or ambiguous
    return old is not None and old.keys() == new.keys() and all(old[k] is new[k] for k in new)
