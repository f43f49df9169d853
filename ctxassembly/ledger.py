"""The ledger: what one stage tells another about each input, typed, keyed by input index.

Stages never pass facts to each other through ``Chunk.meta`` (that holds the caller's
own metadata, untouched) nor by assigning the call's :class:`~ctxassembly.pipeline.Context`.
They write :class:`Facts` here (one frozen record per input index, replaced with
:meth:`Ledger.update`) and the call-wide facts (:class:`Call`: the target version, the
horizon's cut, select's spending); each stage declares in its ``reads`` and ``writes``
which fields it touches (checked when an Assembler is built).

At the end of a call the assembler derives the returned chunks' documented metadata keys
from the ledger (:meth:`Ledger.output`: ``status``, ``relevance_rank``, ``duplicates``,
``source_span`` ...): the same keys and values the stages used to write, now written once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from ctxassembly.chunk import Chunk
from ctxassembly.kinds import Status
from ctxassembly.twin import unfrozen_twin
from ctxassembly.versioning import Provenance

__all__ = ["FACTS", "Blocks", "Call", "Cut", "Facts", "Ledger", "Reranked", "Selection", "Verdict"]


@dataclass(frozen=True, slots=True)
class Verdict:
    """The version stage's verdict on a kept chunk: its status and where its version came from."""

    status: Status
    source: Provenance | None = None  # field / path / title / text (None: no version anywhere)
    key: str | None = None  # the field or metadata key read
    floor: str | None = None  # text only: the newest change note ("New in 5.1")
    ceiling: str | None = None  # text only: the oldest announced change ("removed in 6.0")
    labels: tuple[tuple[str, Any], ...] = ()  # version_policy="label": superseded_by, describes ...

    def meta(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status, **dict(self.labels)}
        if self.source == "text":
            out["version_from"] = "text"
            if self.key is not None:  # "heading": a changelog section's release heading
                out["version_key"] = self.key
            if self.floor is not None:
                out["version_floor"] = self.floor
            if self.ceiling is not None:
                out["version_ceiling"] = self.ceiling
        elif self.source is not None:
            out["version_from"] = self.source
            out["version_key"] = self.key
        return out


@dataclass(frozen=True, slots=True)
class Reranked:
    """What the rerank stage measured: the model's score, and the score and rank before it."""

    score: float
    pre_score: float | None
    pre_rank: int


@dataclass(frozen=True, slots=True)
class Cut:
    """A chunk whose text was cut or rewritten: its offsets in the document (the chunk's
    own ``start``/``end`` are cleared) and which stages did it."""

    source_span: tuple[int | None, int | None]
    by: tuple[str, ...] = ()  # excerpt, tables, extract (each a ``True`` output key)
    spans: Any = None  # extract, llm extract: the kept (start, end) offsets in the chunk text
    injection_removed: int | None = None  # safety: sentences removed


@dataclass(frozen=True, slots=True)
class Blocks:
    """The excerpt stage's block scores of a chunk's text, for select's fit and grow, and
    which of the blocks the chunk holds once the excerpt (or fit) cut it."""

    text: str  # the text they score (a later cut makes them stale)
    scores: np.ndarray
    gone: frozenset[int]  # the rival entry's blocks, never kept
    kept: tuple[int, ...] | None = None  # the blocks a cut of ``text`` holds (None: not cut here)


@dataclass(frozen=True, slots=True)
class Given:
    """The score a chunk came with, before a ranking replaced it (``None``: it had none)."""

    score: float | None


@dataclass(frozen=True, slots=True)
class Facts:
    """Everything a stage recorded about one input."""

    rank: int | None = None  # relevance, rerank: 0 = best
    retriever_score: Given | None = None  # relevance, rerank: the score replaced
    rerank: Reranked | None = None
    version: Verdict | None = None
    status_note: str | None = None  # llm summarize: appended to the shown status
    flags: tuple[str, ...] = ()  # safety (policy flag): the finding codes
    duplicates: tuple[str, ...] = ()  # dedup, semantic: ids of the copies dropped for it
    conflicts_with: tuple[str, ...] = ()  # dedup, semantic: ids that say otherwise
    merged_from: tuple[str, ...] = ()  # merge: the ids spliced into it
    cut: Cut | None = None
    blocks: Blocks | None = None
    llm_extract: Mapping[str, Any] | None = None
    summary: Mapping[str, Any] | None = None

    @property
    def status(self) -> Status | None:
        return None if self.version is None else self.version.status

    def shown_status(self, own: object = None) -> str | None:
        """The status label the context shows: the verdict (else ``own``, the caller's own
        ``status`` metadata), and a summary's note."""
        base = str(self.version.status) if self.version is not None else own if isinstance(own, str) else None
        if self.status_note is None:
            return base
        return self.status_note if not base else f"{base}; {self.status_note}"


#: the names of the per-input facts (what ``reads`` / ``writes`` may name besides :data:`CALL`)
FACTS: frozenset[str] = frozenset(f.name for f in fields(Facts))
_EMPTY = Facts()


#: a :class:`Facts` under construction (:func:`~ctxassembly.twin.unfrozen_twin`)
_UnfrozenFacts = unfrozen_twin(Facts)


def _replaced(facts: Facts, changes: Mapping[str, Any]) -> Facts:
    """``dataclasses.replace(facts, **changes)`` at a fraction of its cost (a call records
    a fact or two for every chunk it reads): each slot stored on the twin, which then
    becomes the Facts it is (a test checks that every field is copied).

    :raises TypeError: a name that is not a fact.
    """
    if not changes.keys() <= FACTS:
        raise TypeError(f"Facts has no field(s) {sorted(changes.keys() - FACTS)}")
    get = changes.get
    out: Any = _new(_UnfrozenFacts)
    out.rank = get("rank", facts.rank)
    out.retriever_score = get("retriever_score", facts.retriever_score)
    out.rerank = get("rerank", facts.rerank)
    out.version = get("version", facts.version)
    out.status_note = get("status_note", facts.status_note)
    out.flags = get("flags", facts.flags)
    out.duplicates = get("duplicates", facts.duplicates)
    out.conflicts_with = get("conflicts_with", facts.conflicts_with)
    out.merged_from = get("merged_from", facts.merged_from)
    out.cut = get("cut", facts.cut)
    out.blocks = get("blocks", facts.blocks)
    out.llm_extract = get("llm_extract", facts.llm_extract)
    out.summary = get("summary", facts.summary)
    out.__class__ = Facts
    replaced: Facts = out
    return replaced


_new = object.__new__


@dataclass(frozen=True, slots=True)
class Selection:
    """What the select stage spent: the horizon reads it to tell a full selection from
    a starved one."""

    tokens: int  # tokens of the chunks kept
    available: int  # the budget select had (budget minus its reserve)
    overflow: int  # chunks that did not fit


@dataclass(frozen=True, slots=True)
class Call:
    """Facts about the call as a whole. ``widened`` is the pipeline's (how many times the
    horizon was doubled); a stage writes the others."""

    target_version: str | None = None  # version: the target (caller's, or named in the question)
    widened: int = 0
    depth_total: int | None = None  # depth: chunks that reached it
    depth_cut: int | None = None  # depth: how many of them it passed on
    target_unseen: str | None = None  # version: the target no chunk within the depth carries
    horizon_total: int | None = None  # horizon: chunks that reached it
    horizon_cut: int | None = None  # horizon: how many of them it passed on
    # relevance: how many of the retriever's first HEAD texts are also BM25's first HEAD
    # (None: the order or the lexical signal was not weighed)
    head_agreement: int | None = None
    selection: Selection | None = None  # select: what it spent (None: no select ran)
    # safety: the inputs it scans (None: every one it is given; the pipeline starts with
    # none and adds those the context would show) and the chunks it passed on unscanned
    scanned: frozenset[int] | None = None
    unscanned: tuple[Chunk, ...] = ()

    @property
    def unread(self) -> bool:
        """Candidates wait beyond the depth (the depth stage cut the list short)."""
        return self.depth_cut is not None and self.depth_total is not None and self.depth_cut < self.depth_total


#: the call-wide facts (:class:`Call`'s fields)
CALL: frozenset[str] = frozenset(f.name for f in fields(Call))


#: a :class:`Call` under construction (:func:`~ctxassembly.twin.unfrozen_twin`)
_UnfrozenCall = unfrozen_twin(Call)


def _replaced_call(call: Call, changes: Mapping[str, Any]) -> Call:
    """``dataclasses.replace(call, **changes)`` at a fraction of its cost (the stages and
    the pipeline write call facts a dozen times a call).

    :raises TypeError: a name that is not a call fact.
    """
    if not changes.keys() <= CALL:
        raise TypeError(f"Call has no field(s) {sorted(changes.keys() - CALL)}")
    out: Any = _new(_UnfrozenCall)
    for name in Call.__slots__:
        setattr(out, name, changes[name] if name in changes else getattr(call, name))
    out.__class__ = Call
    replaced: Call = out
    return replaced


@dataclass
class Ledger:
    """The facts of one assembly call (the one writable part of a stage's context)."""

    call: Call = field(default_factory=Call)
    _facts: dict[int, Facts] = field(default_factory=dict, repr=False)
    #: the stage running and the facts it declares it writes (set by the pipeline's run loop)
    writer: tuple[str, frozenset[str]] | None = field(default=None, repr=False, compare=False)

    def __getitem__(self, index: int | None) -> Facts:
        """The facts of input ``index`` (all empty when nothing was recorded)."""
        return _EMPTY if index is None else self._facts.get(index, _EMPTY)

    def status(self, chunk: Chunk) -> str | None:
        """The status label ``chunk`` is shown with (:meth:`Facts.shown_status`)."""
        return self[chunk.index].shown_status(chunk.meta.get("status"))

    def update(self, index: int | None, **changes: Any) -> None:
        """Replace facts of input ``index`` (``dataclasses.replace``: an unknown name raises)."""
        if index is None:
            raise RuntimeError("a chunk without an input index has no facts; run it through an Assembler")
        self._check(changes)
        self._facts[index] = _replaced(self._facts.get(index, _EMPTY), changes)

    def cut(
        self,
        chunk: Chunk,
        by: str | None = None,
        *,
        spans: Any = None,
        keep_span: bool = False,
        injection_removed: int | None = None,
    ) -> None:
        """Record that ``chunk``'s text was cut (``by`` names the stage's output key): its
        offsets become the cut's ``source_span`` (``keep_span``: an earlier cut's stays);
        ``spans`` and ``injection_removed`` replace earlier values when given."""
        old = self[chunk.index].cut
        span = old.source_span if keep_span and old is not None else (chunk.start, chunk.end)
        names = () if old is None else old.by
        if by is not None and by not in names:
            names = (*names, by)
        self.update(
            chunk.index,
            cut=Cut(
                span,
                names,
                spans if spans is not None or old is None else old.spans,
                injection_removed if injection_removed is not None or old is None else old.injection_removed,
            ),
        )

    def update_call(self, **changes: Any) -> None:
        """Replace call-wide facts (an unknown name raises)."""
        self._check(changes)
        self.call = _replaced_call(self.call, changes)

    def _check(self, changes: Mapping[str, Any]) -> None:
        if self.writer is None:
            return
        stage, writes = self.writer
        if changes.keys() <= writes:
            return
        undeclared = sorted(changes.keys() - writes)
        if undeclared:
            raise RuntimeError(f"stage {stage!r} writes {undeclared} but declares writes={sorted(writes)}")

    def mark(self) -> tuple[Call, dict[int, Facts]]:
        """A point to return to (:meth:`rollback`)."""
        return self.call, dict(self._facts)

    def rollback(self, mark: tuple[Call, dict[int, Facts]]) -> None:
        """Forget what was recorded since ``mark`` (the horizon widens and the stages after
        it run again); block scores stay, as the text they score says when they apply."""
        self.call = mark[0]
        blocks = {i: f.blocks for i, f in self._facts.items() if f.blocks is not None}
        self._facts = dict(mark[1])
        for i, b in blocks.items():
            self._facts[i] = replace(self._facts.get(i, _EMPTY), blocks=b)

    def output(self, index: int | None, given: Mapping[str, Any]) -> dict[str, Any]:
        """The metadata keys a returned chunk carries for its facts (the output format;
        ``given`` is the chunk's own metadata: a ``retriever_score`` given stays)."""
        f = self[index]
        out: dict[str, Any] = {}
        if f.version is not None:
            out.update(f.version.meta())
        shown = f.shown_status(given.get("status"))
        if shown is not None and (f.version is not None or f.status_note is not None):
            out["status"] = shown
        if f.rank is not None:
            out["relevance_rank"] = f.rank
        if f.retriever_score is not None and "retriever_score" not in given:
            out["retriever_score"] = f.retriever_score.score
        if f.rerank is not None:
            out.update(
                rerank_score=f.rerank.score, pre_rerank_score=f.rerank.pre_score, pre_rerank_rank=f.rerank.pre_rank
            )
        if f.flags:
            out["flags"] = f.flags
        if f.duplicates:
            out["duplicates"] = f.duplicates
        if f.conflicts_with:
            out["conflicts_with"] = f.conflicts_with
        if f.merged_from:
            out["merged_from"] = f.merged_from
        if f.cut is not None:
            out.update(dict.fromkeys(f.cut.by, True))
            out["source_span"] = f.cut.source_span
            if f.cut.injection_removed is not None:
                out["injection_removed"] = f.cut.injection_removed
            if f.cut.spans is not None:
                out["spans"] = f.cut.spans
        if f.llm_extract is not None:
            out["llm_extract"] = f.llm_extract
        if f.summary is not None:
            out["summary"] = f.summary
        return out

    def returned(self, chunk: Chunk) -> Chunk:
        """``chunk`` as an assembly returns it: the caller's metadata, then the documented
        keys of its facts (:meth:`output`)."""
        facts = self.output(chunk.index, chunk.meta)
        return chunk.with_meta(**facts) if facts else chunk

    def settle(self) -> None:
        """Forget the working facts no reader of a finished call needs (block scores)."""
        for i, f in self._facts.items():
            if f.blocks is not None:
                self._facts[i] = replace(f, blocks=None)

    def indexes(self) -> Iterable[int]:
        return self._facts.keys()
