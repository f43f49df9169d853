"""ContextAssemblyCompressor: ctxassembly as a LangChain document compressor.

An adapter only: documents become chunks (:mod:`langchain_ctxassembly.mapping`), the core
:class:`~ctxassembly.Assembler` decides what the model reads, and the kept chunks come
back as new documents with their assembly facts under ``metadata["ctxassembly"]``. The
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

import inspect
import os
from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManager, CallbackManager, Callbacks
from langchain_core.documents import BaseDocumentCompressor, Document
from langchain_core.load.serializable import Serializable, SerializedConstructor, SerializedNotImplemented
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_serializer

from ctxassembly.assembler import Assembled, Assembler
from ctxassembly.errors import ConfigError
from ctxassembly.render import Format
from ctxassembly.report import Report
from ctxassembly.stages.arrange import Order
from langchain_ctxassembly.mapping import METADATA_KEY, MetadataKeys, to_chunks, to_documents
from langchain_ctxassembly.render import format_documents

__all__ = ["REPORT_EVENT", "ContextAssemblyCompressor"]

REPORT_EVENT = "ctxassembly_report"
"""Name of the custom callback event that carries ``Report.to_dict()`` after each call."""

_FIELDS_AS_OPTIONS = ("order", "format", "reranker", "embedder")


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
    :param keys: which metadata keys feed which chunk field.
    :param metadata_key: the metadata key of the returned documents' assembly facts.

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

    :raises pydantic.ValidationError: a bad field, an unknown option, or an option given
        both as a field and in ``options`` (the message lists the valid options).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True, extra="forbid")

    budget: int = Field(gt=0)
    target_version: str | None = None
    order: Order = "bookend"
    format: Format = "xml"
    reranker: Any = None
    embedder: Any = None
    options: dict[str, Any] = Field(default_factory=dict)
    keys: MetadataKeys = Field(default_factory=MetadataKeys)
    metadata_key: str = METADATA_KEY

    _assembler: Assembler | None = PrivateAttr(default=None)
    _built_from: dict[str, Any] | None = PrivateAttr(default=None)
    _last_report: Report | None = PrivateAttr(default=None)

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
        by name or path only, nested settings as plain JSON."""
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
                if isinstance(value, BaseModel) and not isinstance(value, Serializable):
                    kwargs[name] = value.model_dump(mode="json")
        return data

    def model_post_init(self, context: Any, /) -> None:
        self.assembler  # noqa: B018 - build now, so that a bad option fails at construction

    @property
    def assembler(self) -> Assembler:
        """The cached core Assembler (rebuilt only if a ``model_copy`` changed the options)."""
        options = self.assembler_options()
        if self._assembler is None or not _same(self._built_from, options):
            self._assembler, self._built_from = _build_assembler(options), options
        return self._assembler

    def assembler_options(self) -> dict[str, Any]:
        """The keyword options the Assembler is built with (``reranker``/``embedder`` only when set).

        :raises ConfigError: an option given both as a field and in ``options``.
        """
        clash = sorted(set(self.options) & {*_FIELDS_AS_OPTIONS, "budget", "target_version"})
        if clash:
            raise ConfigError(f"set {', '.join(clash)} as a field of the compressor, not in options")
        kwargs: dict[str, Any] = {"order": self.order, "format": self.format}
        for name in ("reranker", "embedder"):
            value = getattr(self, name)
            if value is not None:
                kwargs[name] = value
        return {**kwargs, **self.options}

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

        :raises ChunkError: a malformed document (the message names it and the field).
        :raises ConfigError: a bad query.
        """
        chunks = to_chunks(documents, self.keys)
        result = self.assembler.run(query, chunks, budget=self.budget, target_version=self.target_version)
        manager = CallbackManager.configure(inheritable_callbacks=callbacks)
        # run_id=parent_run_id ties the event to the enclosing run, as dispatch_custom_event does
        manager.on_custom_event(REPORT_EVENT, result.report.to_dict(), run_id=manager.parent_run_id)
        return self._finish(result, documents)

    async def acompress_documents(
        self,
        documents: Sequence[Document],
        query: str,
        callbacks: Callbacks | None = None,
    ) -> Sequence[Document]:
        """Async :meth:`compress_documents`: inline when no model stage runs, else in a thread.

        :raises ChunkError: a malformed document (the message names it and the field).
        :raises ConfigError: a bad query.
        """
        chunks = to_chunks(documents, self.keys)
        result = await self.assembler.arun(query, chunks, budget=self.budget, target_version=self.target_version)
        manager = AsyncCallbackManager.configure(inheritable_callbacks=callbacks)
        await manager.on_custom_event(REPORT_EVENT, result.report.to_dict(), run_id=manager.parent_run_id)
        return self._finish(result, documents)

    def _finish(self, result: Assembled, documents: Sequence[Document]) -> list[Document]:
        self._last_report = result.report
        return to_documents(result.chunks, documents, result.report, self.metadata_key)

    def format_documents(self, documents: Sequence[Document]) -> str:
        """Render returned documents as the labelled context, in this compressor's format."""
        return format_documents(documents, fmt=self.format, keys=self.keys, metadata_key=self.metadata_key)


def _build_assembler(options: dict[str, Any]) -> Assembler:
    try:
        return Assembler(**options)
    except TypeError as e:
        valid = ", ".join(sorted(inspect.signature(Assembler).parameters))
        raise ConfigError(f"{e}; valid options: {valid}") from None


def _same(old: dict[str, Any] | None, new: dict[str, Any]) -> bool:
    # identity, not ==: options may hold models or arrays whose == is costly or ambiguous
    return old is not None and old.keys() == new.keys() and all(old[k] is new[k] for k in new)
