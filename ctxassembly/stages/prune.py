"""Prune stage: a trained pruner keeps, in each chunk that can still reach the context,
the sentences it judges the question needs — verbatim, in reading order.

Provence (Chirkova et al., "Provence: efficient and robust context pruning for
retrieval-augmented generation", ICLR 2025, https://arxiv.org/abs/2501.16214) and
OpenProvence (MIT) label each sentence of a passage keep or drop for a question. This
stage gives such a model the sentences and keeps what it says to keep:

1. **Reach.** Only chunks that can still reach the context are pruned: walking the
   ranking, chunks are pruned a round at a time until ``reach`` budgets of *pruned* text
   lie ahead (a pruned chunk is smaller, so more chunks come within reach than whole).
   The rest stay whole for select to judge; no model time is spent on them.
2. **Split.** Each chunk is cut into the units that are never split
   (:func:`ctxassembly.text.segments.segment`): prose sentences, headings, whole list
   items, code blocks, tables, directive headers. These are the pruner's "sentences".
3. **Score.** One call of the pruner per round: ``pruner(question, passages)``, each
   passage given as its list of sentences (verbatim slices of the chunk text), returns
   one keep score in [0, 1] per sentence.
4. **Keep** the sentences scoring at least ``pruner_threshold``, written back as slices
   of the chunk text in reading order (:func:`ctxassembly.text.selection.write_units`):
   contiguous sentences keep the text between them, a ``gap_marker`` stands for each
   cut. Nothing is rewritten; the chunk's id and labels stay; the ledger's cut holds
   the kept ``(start, end)`` offsets in the chunk text and ``meta["source_span"]`` the
   chunk's offsets in its document. The report notes each cut (``pruned``, with tokens
   before and after).

A chunk none of whose sentences reaches the threshold is, by default
(``empty="keep"``), **left whole for select to judge** and noted (``nothing_kept``):
the pruner's silence on a chunk the ranking put within reach is not evidence enough to
drop it, and a chunk left whole costs budget, never an answer. ``empty="drop"`` drops
it instead (``no_evidence``, with its best score): Provence's own behaviour, for a
pruner you trust as a filter.

Why the threshold defaults to 0.5: it is the decision boundary of a binary keep/drop
head, the point its training (cross-entropy) puts between the two labels, so a
classifier keeps what it would label keep; a callable that returns 0/1 decisions
(a wrapper around a model's own pruning method, which applies the model's threshold)
behaves the same for any threshold in (0, 1]. Provence's own ``process()`` defaults to
0.1 ("conservative", no measured loss) and names 0.5 for higher compression: pass
``pruner_threshold=0.1`` for a model whose scores you want read conservatively.

Usage::

    from ctxassembly import assemble

    def keep_question_words(question, passages):  # a lexical demo; a trained model does better
        words = {w.lower().strip("?.,") for w in question.split() if len(w) > 3}
        return [[1.0 if words & {w.lower().strip(".,") for w in s.split()} else 0.0 for s in p] for p in passages]

    result = assemble(question, candidates, budget=1000, pruner=keep_question_words)
    result = assemble(question, candidates, budget=1000, pruner="path/to/token-classifier")
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Literal, cast

import numpy as np

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.kinds import Reason
from ctxassembly.models.pruner import SentencePruner
from ctxassembly.pipeline import Context, StageBase
from ctxassembly.text.segments import Unit, segment
from ctxassembly.text.selection import write_units
from ctxassembly.text.sentences import segmenter

__all__ = ["EMPTY", "Empty", "Prune", "Pruner"]

Pruner = Callable[[str, list[list[str]]], Sequence[Sequence[float]]]
Empty = Literal["keep", "drop"]
EMPTY: tuple[Empty, ...] = ("keep", "drop")


class Prune(StageBase):
    """Keep the sentences a pruner scores at least ``pruner_threshold``, in each chunk within reach.

    :param pruner: a callable ``(question, passages) -> scores``: ``passages`` is one list
        of sentences per chunk, and it returns one list of keep scores in [0, 1] per
        passage, one score per sentence; or a local folder or hub name of a token- or
        sequence-classification model (:class:`~ctxassembly.models.pruner.SentencePruner`,
        loaded on first use), or a ``SentencePruner``.
    :param pruner_threshold: the lowest score a kept sentence has, in [0, 1].
    :param empty: a chunk with no sentence at the threshold: ``keep`` it whole for select
        to judge, or ``drop`` it (``no_evidence``).
    :param reach: prune chunks in rank order until this many budgets of pruned text are ahead.
    :param gap_marker: what stands where sentences were left out.
    :param device: where a model given by path or name runs; ``None``: CUDA when available.
    :param trust_remote_code: let transformers run the code a model given by path or name ships.
    :raises ConfigError: a pruner that is neither a callable nor a model name, a threshold
        outside [0, 1], a bad ``empty`` or a reach below 1; at run time, a pruner whose
        answer does not match the passages (wrong count, a score outside [0, 1]).
    :raises MissingExtraError: pysbd (sentences) or, for a model name, torch/transformers is missing.
    """

    name = "prune"
    uses_model = True
    reads = frozenset({"cut"})
    writes = frozenset({"cut"})

    def __init__(
        self,
        pruner: object,
        *,
        pruner_threshold: float = 0.5,
        empty: Empty = "keep",
        reach: float = 2.0,
        gap_marker: str = "[…]",
        device: str | None = None,
        trust_remote_code: bool = False,
    ) -> None:
        if (
            isinstance(pruner_threshold, bool)
            or not isinstance(pruner_threshold, (int, float))
            or not 0 <= pruner_threshold <= 1
        ):
            raise ConfigError(f"pruner_threshold must be a number in [0, 1], got {pruner_threshold!r}")
        if empty not in EMPTY:
            raise ConfigError(f"empty must be one of {EMPTY}, got {empty!r}")
        if isinstance(reach, bool) or not isinstance(reach, (int, float)) or reach < 1:
            raise ConfigError(f"reach must be a number >= 1 (budgets of text), got {reach!r}")
        segmenter()  # fail at construction, not mid-call, when pysbd is missing
        if isinstance(pruner, (str, os.PathLike)):
            pruner = SentencePruner(pruner, device=device, trust_remote_code=trust_remote_code)
        if not callable(pruner):
            raise ConfigError(
                "pruner must be a callable (question, passages) -> scores or a model's local path or hub name, "
                f"got {pruner!r}"
            )
        self.pruner = cast(Pruner, pruner)
        self.pruner_threshold = float(pruner_threshold)
        self.empty = empty
        self.reach = reach
        self.gap_marker = gap_marker

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        count = ctx.count_tokens
        goal = self.reach * ctx.budget
        out: list[Chunk | None] = list(chunks)
        ahead, i = 0, 0
        while i < len(chunks) and ahead < goal:
            # one round: the next chunks whose whole size covers what is still missing
            todo: list[int] = []
            whole = 0
            while i < len(chunks) and (not todo or ahead + whole < goal):
                todo.append(i)
                whole += count(chunks[i].text)
                i += 1
            units = {k: segment(chunks[k].text) for k in todo}
            asked = [k for k in todo if units[k]]
            passages = [[chunks[k].text[u.start : u.end] for u in units[k]] for k in asked]
            scores = self._scores(ctx.question, passages) if asked else []
            for k in todo:
                if not units[k]:  # no text to prune
                    ahead += count(chunks[k].text)
            for k, s in zip(asked, scores, strict=True):
                kept = self._prune(chunks[k], units[k], s, ctx)
                out[k] = kept
                if kept is not None:
                    ahead += count(kept.text)
        return [c for c in out if c is not None]

    def _scores(self, question: str, passages: list[list[str]]) -> list[np.ndarray]:
        raw: Any = self.pruner(question, [list(p) for p in passages])
        try:
            rows = list(raw)
        except TypeError:
            raise ConfigError(f"pruner must return one list of scores per passage, got {raw!r}") from None
        if len(rows) != len(passages):
            raise ConfigError(f"pruner returned {len(rows)} score lists for {len(passages)} passages")
        out = []
        for n, (row, p) in enumerate(zip(rows, passages, strict=True)):
            try:
                s = np.asarray(row, dtype=np.float64).reshape(-1)
            except (TypeError, ValueError):
                raise ConfigError(f"pruner returned non-numeric scores for passage {n}: {row!r}") from None
            if s.size != len(p):
                raise ConfigError(f"pruner returned {s.size} scores for passage {n} of {len(p)} sentences")
            bad = [x for x in s.tolist() if not (math.isfinite(x) and 0 <= x <= 1)]
            if bad:
                raise ConfigError(f"pruner scores must be in [0, 1], got {bad[0]!r} for passage {n}")
            out.append(s)
        return out

    def _prune(self, chunk: Chunk, units: Sequence[Unit], scores: np.ndarray, ctx: Context) -> Chunk | None:
        keep = [j for j in range(len(units)) if scores[j] >= self.pruner_threshold]
        if len(keep) == len(units):
            return chunk
        best = round(float(scores.max()), 6)
        if not keep:
            if self.empty == "drop":
                ctx.report.drop(chunk, self.name, Reason.NO_EVIDENCE, best_score=best, threshold=self.pruner_threshold)
                return None
            ctx.report.note(self.name, "nothing_kept", id=chunk.id, index=chunk.index, best_score=best)
            return chunk
        text, spans = write_units(chunk.text, units, keep, self.gap_marker)
        ctx.note_cut(self.name, "pruned", chunk, text)
        ctx.ledger.cut(chunk, "pruned", spans=spans, keep_span=True)
        return replace(chunk, text=text, start=None, end=None)
