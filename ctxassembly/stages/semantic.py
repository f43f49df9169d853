"""Semantic dedup stage: chunks that say the same thing in other words are kept once.

Two chunks are semantic duplicates when the cosine of their embeddings is at least
``semantic_threshold`` (one matrix product over the unit vectors). The list arrives ranked, so
the higher-ranked copy stays and lists the dropped ids in the ledger (``Facts.duplicates``).

The same guard as the text dedup applies (:func:`ctxassembly.text.lexical.differs_in_substance`):
paraphrases that differ in a number, unit, negation, date or version are not duplicates
but a conflict; both stay, each naming the other (``Facts.conflicts_with``), and the
arrange stage keeps them adjacent. (Embeddings are nearly blind to "3" versus "5", which
is exactly why the guard is needed.)

Vectors come from ``meta["embedding"]`` when the caller supplies them, else from the
embedder's cache (shared with a bi-encoder reranker of the same model), so a chunk
retrieved again for another question is not embedded again.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.kinds import Reason
from ctxassembly.models import DEFAULT_EMBEDDER, embedder_for, load_sentence_transformer
from ctxassembly.models.vectors import chunk_vectors, supplied_embeddings
from ctxassembly.pipeline import Context, StageBase
from ctxassembly.text.lexical import differs_in_substance

__all__ = ["SemanticDedup"]


class SemanticDedup(StageBase):
    """Drop chunks whose embedding is within ``semantic_threshold`` cosine of a higher-ranked one.

    :param embedder: a ``SentenceTransformer`` (instance, path or hub name), an
        :class:`~ctxassembly.models.Embedder`, or a callable ``texts -> vectors``.
    :param semantic_threshold: cosine at or above which two chunks are duplicates.
    :param guard: ``(a_text, b_text) -> bool``, True when two texts differ in substance.
    :param device: where a model given by path or name runs (``"cpu"``, ``"cuda:0"``...),
        loaded now; ``None``: sentence-transformers chooses, loaded on first use.
    :raises ConfigError: a threshold outside (0, 1] or an embedder that cannot embed.
    :raises MissingExtraError: a path or name was given and sentence-transformers is missing.
    """

    name = "semantic_dedup"
    shrinks = True
    reads = frozenset({"duplicates", "conflicts_with"})
    writes = frozenset({"duplicates", "conflicts_with"})
    uses_model = True

    def __init__(
        self,
        embedder: object = DEFAULT_EMBEDDER,
        *,
        semantic_threshold: float = 0.95,
        guard: Callable[[str, str], bool] | None = None,
        device: str | None = None,
    ) -> None:
        if (
            isinstance(semantic_threshold, bool)
            or not isinstance(semantic_threshold, (int, float))
            or not 0 < semantic_threshold <= 1
        ):
            raise ConfigError(f"semantic_threshold must be in (0, 1], got {semantic_threshold!r}")
        if isinstance(embedder, str) and device is not None:
            embedder = load_sentence_transformer(embedder, device)
        self.embedder = embedder_for(embedder)
        self.semantic_threshold = float(semantic_threshold)
        self.guard = differs_in_substance if guard is None else guard

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        ledger = ctx.ledger
        if len(chunks) < 2:
            return chunks
        vectors = chunk_vectors(chunks, self.embedder)
        reused = supplied_embeddings(chunks)
        if reused:
            ctx.report.note(self.name, "embeddings", supplied=reused, of=len(chunks))
        sim = vectors @ vectors.T
        close = np.triu(sim >= self.semantic_threshold - 1e-6, k=1)  # pairs i < j only
        removed: set[int] = set()
        dups: dict[int, list[str]] = {}
        conflicts: dict[int, list[str]] = {}
        for row, col in zip(*np.nonzero(close), strict=True):  # row-major: i ascending, i.e. best first
            i, j = int(row), int(col)
            if i in removed or j in removed:
                continue
            if self.guard(chunks[i].text, chunks[j].text):
                conflicts.setdefault(i, []).append(chunks[j].id)
                conflicts.setdefault(j, []).append(chunks[i].id)
                continue
            removed.add(j)
            ctx.report.drop(
                chunks[j],
                self.name,
                Reason.DUPLICATE,
                duplicate_of=chunks[i].id,
                kind="semantic",
                cosine=round(float(sim[i, j]), 4),
            )
            dups.setdefault(i, []).extend([chunks[j].id, *ledger[chunks[j].index].duplicates])
        out = []
        for i, c in enumerate(chunks):
            if i in removed:
                continue
            facts = ledger[c.index]
            if i in dups:
                ledger.update(
                    c.index, duplicates=tuple(dict.fromkeys(d for d in (*facts.duplicates, *dups[i]) if d != c.id))
                )
            if i in conflicts:
                old = facts.conflicts_with
                ledger.update(
                    c.index, conflicts_with=tuple(dict.fromkeys(x for x in (*old, *conflicts[i]) if x != c.id))
                )
            out.append(c)
        return out
