"""Relevance stage: a score threshold, then one ranking from several signals.

A retriever's *order* carries information its raw score does not: a hybrid list fused by
reciprocal rank already agrees between BM25 and embeddings, while the score printed on
each hit is one retriever's alone. So the default ranks by reciprocal-rank fusion of the
incoming order, a BM25 score of the question over the candidates themselves and a BM25
score over the names each candidate defines; the raw score is a signal you can add
(the measurements behind the default: benchmarks/README.md).

``score=None`` (fusion retrievers, keyword hits) is a policy, not an accident:
``"rank"`` (default) ranks such chunks by the other signals and skips the threshold for
them; ``"drop"`` removes them (reason ``missing_score``); ``"error"`` raises.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ChunkError, ConfigError
from ctxassembly.kinds import NONE_POLICIES, SIGNALS, NonePolicy, Reason
from ctxassembly.ledger import Given
from ctxassembly.pipeline import Context, StageBase
from ctxassembly.text.lexical import Lexical, phrases, text_classes, without_markup
from ctxassembly.text.structure import definitions

__all__ = ["SIGNALS", "Relevance"]

# Chosen leave-one-corpus-out on two documentation corpora and re-checked on five
# (``ctxassembly calibrate-weights``; the tables: benchmarks/README.md): four of five folds
# prefer lexical 1 / define 1 on full-metadata recall, but across metadata modes it costs
# three corpora and triples the wrong-version exposure, so this conservative default stays.
# Re-checked on sixteen corpora and two retrievers (``benchmarks/loco_weights.py``): the folds
# choose order 2 / lexical 3 / define 1, +23 held-out points on the benchmark's hybrid lists,
# -3 on dense-only lists, pytest -41, Django -15 and PyMdown -15: the corpora disagree, it stays.
# The phrase signal (the question's neighbouring words said together), weights 0.5-2 on
# sixteen corpora: every fold left one corpus out chooses it; above 1 Django, pytest and
# Werkzeug lose answers, so 1, the largest weight no corpus loses with (benchmarks/README.md).
DEFAULT_WEIGHTS: Mapping[str, float] = {"order": 1.0, "lexical": 2.0, "define": 2.0, "phrase": 1.0}


class Relevance(StageBase):
    """Threshold on the score, then rank by weighted reciprocal-rank fusion of signals.

    :param min_score: drop chunks whose (retriever) score is below it (``below_threshold``).
    :param weights: signal -> weight, signals from ``order`` (incoming position),
        ``score`` (the chunk's score), ``lexical`` (BM25 of the question over title,
        section and text), ``define`` (BM25 of the question over the names the chunk
        defines: headings, directive arguments, definition terms, first table cells,
        with word rarity from the whole texts; without the target version the question
        names, when most chunks' versions come from their labels) and ``phrase`` (the
        question's neighbouring words said together in title, section and text, each pair
        weighted by its rarity: :func:`~ctxassembly.text.lexical.phrases`). ``{"score": 1}``
        ranks by score alone.
        Default: order 1, lexical 2, define 2, phrase 1 (chosen leave-one-corpus-out on sixteen corpora).
    :param rrf_k: the reciprocal-rank constant: ``sum(w / (rrf_k + rank))``. A small one
        trusts the head of each list more (the default 60 is measured in benchmarks/README.md).
    :param order_k: the constant of the ``order`` signal alone, its weight scaled by
        ``order_k / rrf_k`` so that its first place counts ``w / rrf_k`` whatever the
        constant: a smaller one trusts the retriever's head more than the places below it.
        ``None`` (default): ``rrf_k``, as for every other signal. 30 lifts a hybrid
        (BM25 + embeddings) retriever's lists on twelve corpora and costs a dense-only
        retriever's (benchmarks/README.md): set it when your retriever is strong.
    :param none_score: policy for chunks whose score is ``None``.
    :param top_k: keep at most this many after ranking (``rank_cutoff``).
    :raises ConfigError: an unknown signal, negative weight or policy.
    """

    name = "relevance"
    reads = frozenset({"retriever_score", "target_version", "version"})
    writes = frozenset({"rank", "retriever_score", "head_agreement"})

    def __init__(
        self,
        *,
        min_score: float | None = None,
        weights: Mapping[str, float] | None = None,
        rrf_k: float = 60.0,
        order_k: float | None = None,
        none_score: NonePolicy = "rank",
        top_k: int | None = None,
    ) -> None:
        weights = dict(DEFAULT_WEIGHTS if weights is None else weights)
        for signal, w in weights.items():
            if signal not in SIGNALS:
                raise ConfigError(f"unknown relevance signal {signal!r}; expected one of {SIGNALS}")
            if not isinstance(w, (int, float)) or w < 0:
                raise ConfigError(f"weight of {signal!r} must be a non-negative number, got {w!r}")
        if not any(weights.values()):
            raise ConfigError(f"at least one relevance weight must be positive, got {weights!r}")
        if none_score not in NONE_POLICIES:
            raise ConfigError(f"none_score must be 'rank', 'drop' or 'error', got {none_score!r}")
        if rrf_k <= 0:
            raise ConfigError(f"rrf_k must be positive, got {rrf_k!r}")
        if order_k is not None and not order_k > 0:
            raise ConfigError(f"order_k must be positive or None, got {order_k!r}")
        if top_k is not None and top_k < 1:
            raise ConfigError(f"top_k must be a positive int or None, got {top_k!r}")
        self.min_score = min_score
        self.weights = weights
        self.rrf_k = rrf_k
        self.order_k = rrf_k if order_k is None else order_k
        self.none_score = none_score
        self.top_k = top_k

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        live = []
        for c in chunks:
            if c.score is None:
                if self.none_score == "error":
                    raise ChunkError("is None and none_score='error'", field="score", chunk=repr(c.id))
                if self.none_score == "drop":
                    ctx.report.drop(c, self.name, Reason.MISSING_SCORE)
                    continue
            elif self.min_score is not None and c.score < self.min_score:
                ctx.report.drop(c, self.name, Reason.BELOW_THRESHOLD, score=c.score, threshold=self.min_score)
                continue
            live.append(c)
        if not live:
            return []
        fused = [0.0] * len(live)
        heads: dict[str, list[str]] = {}
        shared: dict[str, Any] = {}  # what the lexical and phrase signals both read, made once
        for signal, weight in self.weights.items():
            if not weight:
                continue
            values = self._signal(signal, live, ctx, shared)
            # dense ranks: 0 = best, equal values share a rank, a missing value ranks last
            order = sorted(range(len(live)), key=lambda i: (values[i] is None, -(values[i] or 0.0), i))
            if signal in _AGREEING:
                heads[signal] = _head(live, order)
            k = self.order_k if signal == "order" else self.rrf_k
            # the first place counts weight / rrf_k whatever k is (plain RRF: the weight as given)
            w = weight if k == self.rrf_k else weight * k / self.rrf_k
            rank, prev = -1, object()
            for i in order:
                if values[i] != prev:
                    rank, prev = rank + 1, values[i]
                fused[i] += w / (k + rank)
        if len(heads) == len(_AGREEING):
            first, second = heads.values()
            ctx.ledger.update_call(head_agreement=len(set(first).intersection(second)))
        ranked = sorted(range(len(live)), key=lambda i: (-fused[i], i))  # ties: incoming order
        out = []
        ledger = ctx.ledger
        for pos, i in enumerate(ranked):
            c = live[i]
            if self.top_k is not None and pos >= self.top_k:
                ctx.report.drop(c, self.name, Reason.RANK_CUTOFF, rank=pos, top_k=self.top_k)
                continue
            given = ledger[c.index].retriever_score
            ledger.update(c.index, rank=pos, retriever_score=Given(c.score) if given is None else given)
            out.append(c.evolve(score=round(fused[i], 6)))
        return out

    @staticmethod
    def _signal(signal: str, live: list[Chunk], ctx: Context, shared: dict[str, Any]) -> list[float | None]:
        if signal == "order":
            # Position among *distinct* texts: a hybrid list repeats a chunk once per
            # retriever, and those repeats must not push the next chunk down the ranking.
            return [-float(n) for n in text_classes([c.text for c in live])]
        if signal == "score":
            return [c.score for c in live]
        if signal == "define":
            # BM25 of the question over the names each chunk defines (headings, directive
            # arguments, definition terms, first table cells): the chunk that defines the
            # option the question names outranks the many that merely mention it
            # (word rarity from the whole texts: a word every chunk uses weighs nothing).
            # The target version the question names is no name to look for (see
            # _without_target).
            texts = [c.text for c in live]
            query = _without_target(ctx.question, live, ctx)
            scores = Lexical([definitions(t) for t in texts], idf_from=texts).scores(query)
            return [s if s > 0 else None for s in scores]
        if "texts" not in shared:  # title, section and text without markup names: both word signals
            shared["texts"] = [" ".join(filter(None, (c.title, c.section, without_markup(c.text)))) for c in live]
        texts = shared["texts"]
        if signal == "phrase":
            # the question's neighbouring words said together ("visibility timeout"), not
            # one here and one there: a pair scores its rarity among the candidates; the
            # lexical signal's counts tell which texts hold both words
            lexical = shared.get("lexical")
            found = phrases(texts, ctx.question, None if lexical is None else lexical.holds)
            return [s if s > 0 else None for s in found]
        shared["lexical"] = lexical = Lexical(texts)
        return list(lexical.scores(ctx.question))


#: the head :func:`_head` compares: the first this many distinct texts
HEAD = 3
#: the signals whose heads the call's ``head_agreement`` compares: the retriever's order and
#: BM25 of the question, two rankings made in different ways
_AGREEING = ("order", "lexical")


def _head(live: list[Chunk], order: list[int]) -> list[str]:
    """The first :data:`HEAD` distinct texts of ``live`` in ``order`` (indices, best first)."""
    head: list[str] = []
    for i in order:
        if live[i].text not in head:
            head.append(live[i].text)
            if len(head) == HEAD:
                break
    return head


#: where a chunk's version was read from when it is one of its labels, not a guess from its text
_LABELLED = frozenset({"field", "path", "title"})


def _without_target(question: str, live: list[Chunk], ctx: Context) -> str:
    """``question`` without the target version it names, for the names chunks define.

    Among headings the number names only release notes and changelogs ("5.5" in "5.5.0",
    "23.12" in "23.12.1"), which then outrank the entry that defines what the question
    asks about; the version stage already chose the chunks of that version. Only when
    most chunks' versions come from their labels: with text alone the number is what
    tells the version's own passages (measured: benchmarks/README.md)."""
    target = ctx.ledger.call.target_version
    if not target or target not in question:
        return question
    ledger = ctx.ledger
    labelled = sum(1 for c in live if (v := ledger[c.index].version) is not None and v.source in _LABELLED)
    if 2 * labelled < len(live):
        return question
    return re.sub(rf"(?<![\w.]){re.escape(target)}(?!\w|\.\d)", " ", question)
