"""Extract stage: a chunk larger than it needs to be keeps only the sentences that answer
the question, and the sentences those depend on, verbatim and in reading order.

1. **Segment** the chunk into units that must not be cut
   (:func:`ctxassembly.text.segments.segment`): headings
   (with their underline), prose sentences (pysbd, inside one paragraph), whole list
   items, whole code blocks (``::`` literal blocks, indented blocks, ``` fences,
   ``.. code-block::``), whole tables, and directive headers (``.. versionchanged:: 5.1``).
2. **Score** each unit against the question: BM25 (document frequencies over the units
   of all chunks being extracted) and, with an embedder, the cosine of the embeddings
   for the ``semantic_top`` units that BM25 ranks highest in their context (a cascade:
   embedding is the costly part), each read on its first ``semantic_chars`` characters.
3. **Keep** the best units while they fit the chunk's share of the budget, each with
   what it depends on (:func:`ctxassembly.text.cues.dependencies`): the heading of its section, the
   directive it sits in (``.. deprecated:: 5.0``), the lead-in sentence of its list or
   code block, the previous sentence when it opens with a back-reference ("This",
   "However"), and any neighbouring sentence of its paragraph that states a condition
   (a negation, "only", "must", a number with a unit, a version, a date).
4. **Write** the kept units as verbatim slices of the chunk in reading order; contiguous
   units keep the text between them, other cuts are marked with ``gap_marker``. Every
   piece is a substring of the chunk text; nothing is rewritten. The chunk's labels
   stay; the ledger's cut (``Facts.cut``) holds the kept ``(start, end)`` offsets in the
   chunk text (``spans``) and the chunk's offsets in its document (``source_span``).

Only chunks larger than ``extract_share`` of the budget are touched, and only as many of
them, in rank order, as could still reach the context (``reach`` times the budget):
short chunks stay whole, and no work is spent on chunks that select would drop anyway.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.models import embedder_for, load_sentence_transformer
from ctxassembly.pipeline import Context, StageBase
from ctxassembly.text.lexical import Lexical
from ctxassembly.text.segments import segment
from ctxassembly.text.selection import choose_units, in_context, write_units
from ctxassembly.text.sentences import segmenter

__all__ = ["Extract", "clip"]


def clip(text: str, limit: int | None) -> str:
    """``text`` cut to at most ``limit`` characters at a word boundary (whole when shorter)."""
    if limit is None or len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit + 1)
    return text[: cut if cut > limit // 2 else limit].rstrip()


class Extract(StageBase):
    """Cut chunks larger than ``extract_share`` of the budget to their question-relevant units.

    :param embedder: ``None`` (BM25 only), or a ``SentenceTransformer`` (instance, path or
        hub name), an :class:`~ctxassembly.models.Embedder` or a callable ``texts -> vectors``
        whose cosine with the question is added to the score.
    :param extract_share: the largest fraction of the budget one chunk may fill whole.
    :param min_tokens: never cut a chunk to less than this (tokens).
    :param reach: extract chunks (in rank order) until this many budgets' worth of text
        is ahead; the rest are left whole for select to judge.
    :param semantic_reach: the same reach (in budgets) for the semantic score: only the
        units of chunks this close to the top are embedded (embedding is the costly part;
        chunks further down are cut on BM25 alone).
    :param semantic_weight: weight of the cosine against the (max-normalised) BM25 score.
    :param gap_marker: what stands where text was left out.
    :param device: where an embedder given by path or name runs (``"cpu"``, ``"cuda:0"``...),
        loaded now; ``None``: sentence-transformers chooses, loaded on first use.
    :param semantic_top: embed at most this many units per call, those BM25 ranks highest
        read in their context (:func:`ctxassembly.text.selection.in_context`); ``None``:
        every unit within the semantic reach. Embedding sentences is most of a call's
        model time when the chunk vectors are supplied; the cascade bounds it (the
        measured choice of the default: benchmarks/README.md).
    :param semantic_chars: the embedder reads at most this many characters of a unit (cut
        at a word boundary; ``None``: all of it). A long list item or code block is scored
        on its opening, which says what it is about; what is kept is always the whole,
        verbatim unit, and no long unit pads a forward pass for the short ones (the
        measured choice of the default: benchmarks/README.md).
    :raises ConfigError: a share outside (0, 1], a negative weight, a reach below 1, or a
        ``semantic_top`` / ``semantic_chars`` that is not a positive int or ``None``.
    :raises MissingExtraError: pysbd (or, for a model name, sentence-transformers) is missing.
    """

    name = "extract"
    reads = frozenset({"cut"})
    writes = frozenset({"cut"})

    def __init__(
        self,
        embedder: object = None,
        *,
        extract_share: float = 0.25,
        min_tokens: int = 60,
        reach: float = 2.0,
        semantic_reach: float = 1.0,
        semantic_top: int | None = 24,
        semantic_chars: int | None = 60,
        semantic_weight: float = 1.0,
        gap_marker: str = "[…]",
        device: str | None = None,
    ) -> None:
        if not 0 < extract_share <= 1:
            raise ConfigError(f"extract_share must be in (0, 1], got {extract_share!r}")
        if semantic_weight < 0:
            raise ConfigError(f"semantic_weight must be >= 0, got {semantic_weight!r}")
        if reach < 1:
            raise ConfigError(f"reach must be >= 1 (budgets of text), got {reach!r}")
        for label, value in (("semantic_top", semantic_top), ("semantic_chars", semantic_chars)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ConfigError(f"{label} must be a positive int or None, got {value!r}")
        segmenter()  # fail at construction, not mid-call, when pysbd is missing
        if isinstance(embedder, str) and device is not None:
            embedder = load_sentence_transformer(embedder, device)
        self.embedder = None if embedder is None else embedder_for(embedder)
        self.uses_model = self.embedder is not None
        self.extract_share = extract_share
        self.min_tokens = min_tokens
        self.reach = reach
        self.semantic_reach = semantic_reach
        self.semantic_top = semantic_top
        self.semantic_chars = semantic_chars
        self.semantic_weight = semantic_weight
        self.gap_marker = gap_marker

    def cap(self, budget: int) -> int:
        return max(self.min_tokens, int(budget * self.extract_share))

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        cap = self.cap(ctx.budget)
        count = ctx.count_tokens
        todo: list[int] = []
        near: set[int] = set()  # chunks whose units also get the (costlier) semantic score
        ahead = 0
        for i, c in enumerate(chunks):
            if ahead > self.reach * ctx.budget:
                break
            n = count(c.text)
            if n > cap:
                todo.append(i)
                if ahead <= self.semantic_reach * ctx.budget:
                    near.add(i)
                ahead += cap
            else:
                ahead += n
        if not todo:
            return chunks
        segs = {i: segment(chunks[i].text) for i in todo}
        texts = [chunks[i].text[u.start : u.end] for i in todo for u in segs[i]]
        owner = [i for i in todo for _ in segs[i]]
        scores = np.asarray(Lexical(texts).scores(ctx.question), dtype=np.float64)
        if scores.size and scores.max() > 0:
            scores = scores / scores.max()
        if self.embedder is not None and self.semantic_weight and near:
            where = [k for k, i in enumerate(owner) if i in near]
            if self.semantic_top is not None and len(where) > self.semantic_top:
                # a cascade: the embedder re-scores the units BM25 ranks highest, not all,
                # each read in its context as choose_units() reads it ("150 characters or fewer."
                # matches nothing alone, but sits under ".. attribute:: username")
                ranked = in_context(scores, [segs[i] for i in todo])
                where = sorted(sorted(where, key=lambda k: (-ranked[k], k))[: self.semantic_top])
            vecs = self.embedder.embed([ctx.question, *(clip(texts[k], self.semantic_chars) for k in where)])
            scores[where] += self.semantic_weight * (vecs[1:] @ vecs[0])
        out = list(chunks)
        k = 0
        for i in todo:
            units = segs[i]
            s = scores[k : k + len(units)]
            k += len(units)
            c = chunks[i]
            kept = choose_units(c.text, units, s, cap, count)
            if kept is None:
                continue
            text, spans = write_units(c.text, units, kept, self.gap_marker)
            ctx.note_cut(self.name, "extracted", c, text)
            ctx.ledger.cut(c, "extract", spans=spans)
            out[i] = replace(c, text=text, start=None, end=None)
        return out
