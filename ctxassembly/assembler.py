"""Assembler: runs the stages in order and returns the context with its report."""

from __future__ import annotations

import asyncio
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ctxassembly import pipeline
from ctxassembly.chunk import Chunk, _from_mapping
from ctxassembly.errors import ChunkError, ConfigError
from ctxassembly.kinds import Reason
from ctxassembly.options import Options
from ctxassembly.pipeline import Context, Stage
from ctxassembly.render import Renderer, Spotlight, prompt
from ctxassembly.report import Report
from ctxassembly.tokens import get_counter

__all__ = ["Assembled", "Assembler", "assemble", "to_chunks"]


@dataclass(frozen=True)
class Assembled:
    """The result of one call: the chunks in final order, the rendered context, the report."""

    chunks: list[Chunk]
    text: str
    report: Report
    question: str
    #: how the documents' text was marked (option ``spotlight``), ``None`` when it was not
    spotlight: Spotlight | None = None

    def prompt(self, instructions: str | None = None) -> str:
        """Documents first, then instructions (with the spotlighting note), then the question."""
        return prompt(self.text, self.question, instructions, "" if self.spotlight is None else self.spotlight.note())


def to_chunks(items: Iterable[Chunk | Mapping[str, Any]], report: Report | None = None) -> list[Chunk]:
    """Validate and index the caller's candidates (never mutating them).

    With a ``report``, one malformed candidate does not fail the call: it gets the fate
    ``input``/``invalid`` (the field and the message in the detail) and the others go on;
    a label value coerced to a string (a number, a path, a date, a one-item list) is noted
    (``input``/``coerced``); a candidate with no visible text (empty, whitespace or
    invisible format characters only) gets the fate ``input``/``empty``: it has nothing to
    tell the model and would render as an empty block. Without a report, the first
    malformed candidate raises, and an empty one is kept (the strict utility only checks
    the types).

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
    coerced: list[tuple[str, str]] = []  # the label fields _from_mapping coerced, per item
    for i, item in enumerate(items):
        coerced.clear()
        try:
            if type(item) is dict:  # the common case first: the ABC check below costs more than the build
                c = _from_mapping(Chunk, item, i, coerced)
            elif isinstance(item, Chunk):
                if not isinstance(item.text, str):
                    raise ChunkError(f"expected str, got {type(item.text).__name__}", field="text", chunk=repr(item.id))
                c = item.evolve(index=i)
            elif isinstance(item, Mapping):
                c = _from_mapping(Chunk, item, i, coerced)
            else:
                raise ChunkError(
                    f"expected a Chunk or a mapping, got {type(item).__name__}", field="<chunk>", chunk=f"at index {i}"
                )
        except ChunkError as e:
            if report is None:
                raise
            raw_id = item.get("id") if isinstance(item, Mapping) else getattr(item, "id", None)
            cid = raw_id if isinstance(raw_id, str) else f"#{i}"
            report.drop_index(i, cid, "input", Reason.INVALID, field=e.field, error=str(e))
            continue
        if report is not None and _is_blank(c.text):
            report.drop_index(i, c.id, "input", Reason.EMPTY, chars=len(c.text))
            continue
        if report is not None:
            for name, got in coerced:
                report.note("input", "coerced", id=c.id, index=i, field=name, got=got)
        out.append(c)
    return out


class Assembler:
    """The default pipeline, run over the candidates of each call, then rendered.

    The stages, in run order: admit, depth, version, relevance, horizon, safety, rerank, dedup,
    semantic, merge, excerpt (or tables + extract), the LLM stage, select, arrange
    (:meth:`Options.build_stages <ctxassembly.options.Options.build_stages>`). Pass
    ``stages=[...]`` to run your own list instead (a
    :class:`~ctxassembly.stages.horizon.Horizon` in it widens the same way); ``format``
    and ``tokenizer`` still apply, and every option is validated either way.

    Options: an :class:`~ctxassembly.options.Options`, keyword arguments, or both (the
    keywords override). Every option is described in docs/options.md.

    :raises ConfigError: a bad option value (naming the field), or a stage in ``stages``
        without a name and a ``run(chunks, ctx)`` method.
    :raises UnknownOption: an unknown option name (a ``ConfigError`` and a ``TypeError``;
        the message lists the valid names).
    """

    def __init__(self, options: Options | None = None, *, stages: Sequence[Stage] | None = None, **kw: Any) -> None:
        if options is None:
            options = Options.from_mapping(kw)
        elif not isinstance(options, Options):
            raise ConfigError(f"options must be an Options (or pass keyword options), got {type(options).__name__}")
        elif kw:
            options = options.replace(**kw)
        self.options = options
        self.renderer = Renderer(options.format, options.spotlight)
        self.count_tokens = get_counter(options.tokenizer)
        if stages is not None:
            for s in stages:
                if not isinstance(s, Stage):
                    raise ConfigError(f"stage {s!r} has no name and run(chunks, ctx) method")
            self.stages: list[Stage] = list(stages)
        else:
            self.stages = options.build_stages(self.renderer, self.count_tokens)
        pipeline.check_declared(self.stages)

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
        ledger = report.ledger
        renderer = self.renderer.for_call()  # a datamark drawn for this call

        def render(chunks: Sequence[Chunk]) -> list[str]:
            return renderer.render_parts(chunks, statuses=[ledger.status(c) for c in chunks])

        final, text, tokens = pipeline.fit_rendered(current, ctx, render, limit)
        report.finish(final, n_inputs)
        report.tokens_after = tokens if final else 0
        top = [i for i, c in enumerate(final) if ledger[c.index].rank == 0]
        report.top_ranked_position = top[0] if top else None
        ledger.settle()
        return Assembled(
            chunks=[ledger.returned(c) for c in final],
            text=text,
            report=report,
            question=question,
            spotlight=renderer.spotlight,
        )

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


def _is_blank(text: str) -> bool:
    """``text`` shows nothing: empty, or only whitespace and invisible format characters
    (zero-width spaces and joiners, a byte-order mark: Unicode category ``Cf``)."""
    first = text[:1]
    if first and not first.isspace() and unicodedata.category(first) != "Cf":
        return False  # the common case, without copying the text to strip it
    stripped = text.strip()
    if not stripped:
        return True
    if unicodedata.category(stripped[0]) != "Cf":  # the common case: a visible first character
        return False
    return all(ch.isspace() or unicodedata.category(ch) == "Cf" for ch in stripped)


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
    return Assembler(Options.from_mapping(options))
