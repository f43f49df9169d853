"""Assembler: runs the stages in order and returns the context with its report."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ctxassembly import pipeline
from ctxassembly.chunk import LABEL_FIELDS, Chunk
from ctxassembly.errors import ChunkError, ConfigError
from ctxassembly.pipeline import Context, Stage
from ctxassembly.render import SEPARATOR, Format, Renderer, prompt
from ctxassembly.report import Report
from ctxassembly.stages.admit import Admit
from ctxassembly.stages.arrange import Arrange, Order
from ctxassembly.stages.dedup import Dedup
from ctxassembly.stages.excerpt import Excerpt
from ctxassembly.stages.extract import Extract
from ctxassembly.stages.horizon import Horizon
from ctxassembly.stages.merge import Merge
from ctxassembly.stages.relevance import NonePolicy, Relevance
from ctxassembly.stages.rerank import Rerank
from ctxassembly.stages.safety import Policy as SafetyPolicy
from ctxassembly.stages.safety import Safety
from ctxassembly.stages.select import Select
from ctxassembly.stages.semantic import SemanticDedup
from ctxassembly.stages.tables import Tables
from ctxassembly.stages.version import Policy as VersionPolicy
from ctxassembly.stages.version import VersionFilter
from ctxassembly.tokens import get_counter
from ctxassembly.versioning import LOCATION_KEYS, VERSION_KEYS

__all__ = ["Assembled", "Assembler", "assemble", "to_chunks"]


@dataclass(frozen=True)
class Assembled:
    """The result of one call: the chunks in final order, the rendered context, the report."""

    chunks: list[Chunk]
    text: str
    report: Report
    question: str

    def prompt(self, instructions: str | None = None) -> str:
        """Documents first, then instructions, then the question restated last."""
        return prompt(self.text, self.question, instructions)


def to_chunks(items: Iterable[Chunk | Mapping[str, Any]], report: Report | None = None) -> list[Chunk]:
    """Validate and index the caller's candidates (never mutating them).

    With a ``report``, one malformed candidate does not fail the call: it gets the fate
    ``input``/``invalid`` (the field and the message in the detail) and the others go on;
    a label value coerced to a string (a number, a path, a date, a one-item list) is noted
    (``input``/``coerced``). Without one, the first malformed candidate raises.

    :raises ChunkError: ``items`` is a single chunk, mapping or string rather than a
        sequence of them; without a report, also an item that is neither a Chunk nor a
        mapping, or a bad field.
    """
    if isinstance(items, (str, bytes, Mapping)):
        raise ChunkError(
            f"expected an iterable of chunks, got a single {type(items).__name__}", field="chunks", chunk="<all>"
        )
    if not isinstance(items, Iterable):
        raise ChunkError(f"expected an iterable of chunks, got {type(items).__name__}", field="chunks", chunk="<all>")
    out = []
    from_dict = Chunk.from_dict
    for i, item in enumerate(items):
        try:
            if type(item) is dict:  # the common case first: the ABC check below costs more than the build
                c = from_dict(item, index=i)
            elif isinstance(item, Chunk):
                if not isinstance(item.text, str):
                    raise ChunkError(f"expected str, got {type(item.text).__name__}", field="text", chunk=repr(item.id))
                c = item.evolve(index=i)
            elif isinstance(item, Mapping):
                c = Chunk.from_dict(item, index=i)
            else:
                raise ChunkError(
                    f"expected a Chunk or a mapping, got {type(item).__name__}", field="<chunk>", chunk=f"at index {i}"
                )
        except ChunkError as e:
            if report is None:
                raise
            raw_id = item.get("id") if isinstance(item, Mapping) else getattr(item, "id", None)
            cid = raw_id if isinstance(raw_id, str) else f"#{i}"
            report.drop_index(i, cid, "input", "invalid", field=e.field, error=str(e))
            continue
        if report is not None and isinstance(item, Mapping):
            for name in LABEL_FIELDS:
                raw = item.get(name)
                if raw is not None and type(raw) is not str:
                    report.note("input", "coerced", id=c.id, index=i, field=name, got=type(raw).__name__)
        out.append(c)
    return out


class Assembler:
    """The default pipeline: admit, version, relevance, horizon, safety, dedup, merge,
    excerpt, select, arrange; then render. Pass ``stages=[...]`` to run your own list
    instead (a :class:`~ctxassembly.stages.horizon.Horizon` in it works the same way).

    Options (each also accepted by :func:`assemble`):

    :param order: ``bookend`` (default), ``edges``, ``relevance`` or ``reading``.
    :param format: ``xml`` (default), ``evidence`` or ``plain``.
    :param tokenizer: ``None`` (cl100k_base), an encoding name, a tiktoken Encoding, a
        Hugging Face tokenizer or a callable ``text -> int``.
    :param reserve: tokens of the budget kept back for the rest of the prompt.
    :param max_per_doc: at most this many chunks per document.
    :param principals, acl_field, permit, enforce_acl, scope: see :class:`Admit`.
    :param version_policy: ``drop`` (default) or ``label`` other-version chunks.
    :param subject_versions: treat release notes of another version as other-version.
    :param version_keys, location_keys: metadata keys read for a chunk's version and for
        the URL / file path that carries it (see :class:`VersionFilter`).
    :param min_score, weights, rrf_k, none_score, top_k: see :class:`Relevance`.
    :param horizon: a cascade for long candidate lists: after the relevance ranking only
        the best chunks holding about ``horizon`` x ``budget`` tokens (estimated from
        their length; never fewer than 20 chunks) go on to the costly stages (injection
        scan, rerank, dedup, merge, compression, select); the rest get the fate
        ``beyond_horizon`` with their rank. If the head loses so much to duplicates or
        injections that the budget is left unspent, the horizon doubles and the stages
        after it run again. Default 4; ``None`` sends every candidate through every stage.
        On the Django benchmark (40 and 1,000 candidates, 500 to 2,000 tokens, with and
        without models) a head of 4 budgets / 20 chunks gave the same answers as no
        horizon at all, and so did 8 budgets / 50 chunks (benchmarks/README.md).
    :param near_threshold: shingle Jaccard for near duplicates (``None``: exact only).
    :param safety: ``remove`` (default), ``drop`` or ``flag`` injection-like text.
    :param merge_gap: characters between chunks that still merge (``None``: no merge).
    :param max_share: largest budget share one chunk may fill whole before it is cut to
        its best passages (``None``: never cut); never below 200 tokens (the Excerpt's
        floor). 0.25 was best on both dev corpora at 500 and 1,000 tokens (0.2-0.4 within
        one question on Django; 0.3 and above lost one on pytest at 1,000).
    :param reranker: ``None`` (no model), or a ``CrossEncoder``/``SentenceTransformer``
        (instance, local path or hub name) or a callable ``(query, texts) -> scores``;
        runs after relevance (see :class:`~ctxassembly.stages.rerank.Rerank`).
    :param rerank_fuse: weight of the incoming (relevance) order fused with the model's
        (``None``: the model alone). 6 measured best with a MiniLM bi-encoder on the Django
        dev set: ranking by the bi-encoder alone lost 20 points there (benchmarks/adapters.py).
    :param embedder: ``None``, or a ``SentenceTransformer`` (instance, path or name) or a
        callable ``texts -> vectors``: semantic dedup after dedup, and a semantic signal
        for extraction. A reranker and an embedder of the same model share one cache.
    :param semantic_threshold: cosine at or above which chunks are semantic duplicates.
    :param extract: query-focused sentence extraction and table compression in place of
        the excerpt stage; ``None`` (default): off (measured: it cost answers on the pytest
        dev corpus, see ``_compress``); ``True`` turns it on, with the embedder's semantic
        signal when one is configured.
    :param fill: spend what whole chunks leave of the budget on the next chunk cut to its
        best-matching blocks (:meth:`~ctxassembly.stages.excerpt.Excerpt.fit`).
    :param extract_share: largest budget share a chunk fills whole before extraction.
    :param llm_stage: ``None`` (default), or an LLM-assisted stage run after compression and
        before select: :class:`~ctxassembly.stages.llm_extract.LLMExtract`,
        :class:`~ctxassembly.stages.mapreduce.MapReduce` or
        :class:`~ctxassembly.stages.summarize.Summarize` (opt-in; see docs/llm.md).
    """

    def __init__(
        self,
        *,
        order: Order = "bookend",
        format: Format = "xml",  # noqa: A002 - the user-facing name of the option
        tokenizer: object = None,
        reserve: int = 0,
        max_per_doc: int | None = None,
        principals: Iterable[str] | None = None,
        acl_field: str = "acl",
        permit: Callable[[Chunk, frozenset[str]], bool] | None = None,
        enforce_acl: bool | None = None,
        scope: Mapping[str, object] | None = None,
        version_policy: VersionPolicy = "drop",
        subject_versions: bool = True,
        version_keys: Sequence[str] | str = VERSION_KEYS,
        location_keys: Sequence[str] | str = LOCATION_KEYS,
        min_score: float | None = None,
        weights: Mapping[str, float] | None = None,
        rrf_k: float = 60.0,
        none_score: NonePolicy = "rank",
        top_k: int | None = None,
        horizon: float | None = 4.0,
        near_threshold: float | None = 0.8,
        safety: SafetyPolicy = "remove",
        merge_gap: int | None = 0,
        max_share: float | None = 0.25,
        reranker: object = None,
        rerank_fuse: float | None = 6.0,
        embedder: object = None,
        semantic_threshold: float = 0.95,
        extract: bool | None = None,
        extract_share: float = 0.25,
        llm_stage: Stage | None = None,
        fill: bool = True,
        stages: Sequence[Stage] | None = None,
    ) -> None:
        self.renderer = Renderer(format)
        self.count_tokens = get_counter(tokenizer)
        if stages is not None:
            for s in stages:
                if not isinstance(s, Stage):
                    raise ConfigError(f"stage {s!r} has no name and run(chunks, ctx) method")
            self.stages: list[Stage] = list(stages)
            return
        pipeline: list[Stage | None] = [
            Admit(principals, acl_field=acl_field, permit=permit, enforce_acl=enforce_acl, scope=scope),
            VersionFilter(
                version_policy,
                subject_versions=subject_versions,
                version_keys=version_keys,
                location_keys=location_keys,
            ),
            # relevance ranks before the injection scan so that the scan (and every stage
            # that costs per chunk) runs on the head alone; Safety moves a chunk it had to
            # clean behind the clean ones, so stuffed words cannot lift it (see Safety)
            Relevance(min_score=min_score, weights=weights, k=rrf_k, none_score=none_score, top_k=top_k),
            Horizon(horizon) if horizon is not None else None,
            Safety(safety),
            Rerank(reranker, fuse=rerank_fuse) if reranker is not None else None,
            Dedup(threshold=near_threshold),
            SemanticDedup(embedder, threshold=semantic_threshold) if embedder is not None else None,
            Merge(merge_gap, max_share=1.0 if max_share is None else max_share) if merge_gap is not None else None,
            *(compress := self._compress(extract, reranker, embedder, max_share, extract_share)),
            llm_stage,
            Select(
                reserve=reserve,
                max_per_doc=max_per_doc,
                render=self.renderer.parts,
                separator_tokens=self.count_tokens(SEPARATOR),
                fit=_fitter(compress) if fill else None,
            ),
            Arrange(order),
        ]
        self.stages = [s for s in pipeline if s is not None]

    @staticmethod
    def _compress(
        extract: bool | None, reranker: object, embedder: object, max_share: float | None, extract_share: float
    ) -> list[Stage | None]:
        """Tables + Extract when extraction is asked for, else the structure-aware Excerpt.

        ``extract=None`` (the default) is the Excerpt, with or without models: on both dev
        corpora (Django and pytest docs) the MiniLM pipeline with sentence extraction cut
        the answer out of kept chunks (pytest: 15% of questions at 500 tokens, 8% at 1,000)
        and kept fewer answers than the model-free pipeline, while with the Excerpt it keeps
        at least as many everywhere (benchmarks/README.md). A model stage that cannot help
        stays out of the way."""
        on = False if extract is None else extract
        if on:
            return [Tables(max_share=extract_share), Extract(embedder, max_share=extract_share)]
        return [Excerpt(max_share) if max_share is not None else None]

    def run(
        self,
        question: str,
        chunks: Iterable[Chunk | Mapping[str, Any]],
        *,
        budget: int,
        target_version: str | None = None,
        principals: Iterable[str] | None = None,
    ) -> Assembled:
        """Assemble ``chunks`` for ``question`` within ``budget`` tokens.

        :raises ConfigError: a bad budget, question or version.
        :raises ChunkError: ``chunks`` is not a sequence of chunks. One malformed chunk is no
            error: it gets the fate ``invalid`` (field and message in the detail).
        """
        if not isinstance(question, str):
            raise ConfigError(f"question must be a str, got {type(question).__name__}")
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
            raise ConfigError(f"budget must be a positive int (tokens), got {budget!r}")
        if target_version is not None and (not isinstance(target_version, str) or not target_version.strip()):
            raise ConfigError(f"target_version must be a non-empty str or None, got {target_version!r}")
        if isinstance(principals, str):
            raise ConfigError(f"principals must be a collection of strings, got the string {principals!r}")
        # one pass over the caller's candidates, whatever iterable they came in
        # (anything else, a single mapping or no iterable at all, to_chunks refuses)
        given = list(chunks) if isinstance(chunks, Iterable) and not isinstance(chunks, (Sequence, Mapping)) else chunks
        report = Report(question=question, budget=budget, target_version=target_version)
        items = to_chunks(given, report)
        n_inputs = len(given)
        report.inputs, report.count_tokens = tuple(items), self.count_tokens
        _note_id_conflicts(items, report)
        ctx = Context(
            question=question,
            budget=budget,
            report=report,
            count_tokens=self.count_tokens,
            target_version=target_version,
            principals=None if principals is None else frozenset(principals),
        )
        current = pipeline.run(self.stages, items, ctx)
        limit = budget - sum(pipeline.traits(s).reserve for s in self.stages)
        final, text = pipeline.fit_rendered(current, ctx, self.renderer.render, limit)
        report.finish(final, n_inputs)
        report.tokens_after = self.count_tokens(text) if final else 0
        top = [i for i, c in enumerate(final) if c.meta.get("relevance_rank") == 0]
        report.top_ranked_position = top[0] if top else None
        return Assembled(chunks=final, text=text, report=report, question=question)

    async def arun(
        self,
        question: str,
        chunks: Iterable[Chunk | Mapping[str, Any]],
        *,
        budget: int,
        target_version: str | None = None,
        principals: Iterable[str] | None = None,
    ) -> Assembled:
        """Async :meth:`run`. The model-free pipeline is CPU-light and runs inline;
        a pipeline with model stages runs in a worker thread so the event loop stays free."""
        if any(pipeline.traits(s).uses_model for s in self.stages):
            return await asyncio.to_thread(
                self.run, question, chunks, budget=budget, target_version=target_version, principals=principals
            )
        return self.run(question, chunks, budget=budget, target_version=target_version, principals=principals)


def _fitter(compress: Sequence[Stage | None]) -> Callable[[Chunk, int, Context], Chunk | None] | None:
    """The compression stage's ``fit`` (cut a chunk to a token limit), if it has one."""
    for s in compress:
        if isinstance(s, Excerpt):
            return s.fit
    return None


def _note_id_conflicts(items: list[Chunk], report: Report) -> None:
    seen: dict[str, str] = {}
    for c in items:
        prev = seen.setdefault(c.id, c.text)
        if prev != c.text:
            why = "same id, different text; both kept as separate candidates"
            report.note("input", "id_conflict", id=c.id, index=c.index, why=why)


_ASSEMBLERS: dict[tuple[tuple[str, Any], ...], Assembler] = {}


def assemble(
    question: str,
    chunks: Iterable[Chunk | Mapping[str, Any]],
    *,
    budget: int,
    target_version: str | None = None,
    **options: Any,
) -> Assembled:
    """Assemble a labelled, de-duplicated, version-correct context within ``budget``.

    ``options`` are :class:`Assembler`'s keyword arguments, plus ``principals``.
    Assemblers are cached per hashable option set, so repeated calls pay set-up once.

    :raises ConfigError: an unknown option or a bad value (the message lists valid ones).
    :raises ChunkError: ``chunks`` is not a sequence of chunks (one malformed chunk is a decision).
    """
    principals = options.pop("principals", None)
    try:
        key = tuple(sorted(options.items()))
        hash(key)
    except TypeError:
        assembler = _build(options)
    else:
        assembler = _ASSEMBLERS.get(key) or _ASSEMBLERS.setdefault(key, _build(options))
        if len(_ASSEMBLERS) > 64:
            _ASSEMBLERS.clear()
    return assembler.run(question, chunks, budget=budget, target_version=target_version, principals=principals)


def _build(options: dict[str, Any]) -> Assembler:
    try:
        return Assembler(**options)
    except TypeError as e:
        import inspect

        valid = sorted(p for p in inspect.signature(Assembler).parameters)
        raise ConfigError(f"{e}; valid options: {', '.join(valid)}") from None
