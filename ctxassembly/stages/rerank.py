"""Rerank stage: a model reads the question with each chunk and its score replaces the retriever's.

Three kinds of scorer, one contract ``(query, texts) -> scores`` (higher is better):

* a cross-encoder (sentence-transformers ``CrossEncoder``): reads question and chunk
  together; the most accurate, one batched forward pass per call;
* a bi-encoder (``SentenceTransformer``): cosine between the question's and the chunk's
  embeddings; chunk vectors come from ``meta["embedding"]`` when the caller has them,
  otherwise from a cache shared with the semantic dedup and extract stages, so a chunk
  retrieved again is not embedded again;
* any callable ``(query, texts) -> scores`` (an API reranker, a test's fake scorer).

A string names a local folder or hub model; whether it is a cross- or bi-encoder is
read from its saved config (:func:`ctxassembly.models.model_kind`). Weights load on the
first call, not at construction.

The model's score replaces ``chunk.score``; the score it replaced is kept in
the ledger (``Facts.rerank``: the model's score, and the score and rank before it; the
retriever's original in ``Facts.retriever_score``).
``rerank_fuse=w`` blends the model's order with the incoming order by reciprocal-rank fusion,
``1/(k + model_rank) + w/(k + incoming_rank)``: useful when the incoming order already
carries a strong signal (a hybrid retriever, the lexical ranking of the relevance stage).

Usage::

    from ctxassembly import Assembler
    assembler = Assembler(reranker="cross-encoder/ms-marco-MiniLM-L-6-v2")  # or a path, an instance, a callable
    assembled = assembler.run(question, candidates, budget=1000)

    from ctxassembly.stages import Rerank  # the stage alone
    ranked = Rerank("cross-encoder/ms-marco-MiniLM-L-6-v2").run(chunks, ctx)
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Literal, cast

import numpy as np

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError, UntrainedModelWarning
from ctxassembly.kinds import Reason
from ctxassembly.ledger import Given, Reranked
from ctxassembly.models import (
    DEFAULT_CROSS_ENCODER,
    Embedder,
    embedder_for,
    is_cross_encoder,
    is_sentence_transformer,
    load_cross_encoder,
    load_sentence_transformer,
    model_kind,
    require,
    untrained_head,
)
from ctxassembly.models.vectors import chunk_vectors, supplied_embeddings
from ctxassembly.pipeline import Context, StageBase

__all__ = ["Rerank", "Scorer", "passage"]

Scorer = Callable[[str, Sequence[str]], Sequence[float]]
KindOption = Literal["auto", "bi", "cross"]


def passage(chunk: Chunk) -> str:
    """The chunk as a model should read it with its labels: section path (or title), then text."""
    head = chunk.section or chunk.title
    return f"{head}\n{chunk.text}" if head else chunk.text


class Rerank(StageBase):
    """Reorder chunks by a model's relevance score.

    :param model: a ``CrossEncoder`` or ``SentenceTransformer`` instance, a local path or
        hub name of either, an :class:`~ctxassembly.models.Embedder`, or a callable
        ``(query, texts) -> scores``. Default: ``cross-encoder/ms-marco-MiniLM-L-6-v2``.
    :param kind: ``auto`` (read from the model), ``bi`` or ``cross`` (for a string whose
        config cannot be read here).
    :param rerank_fuse: weight of the incoming order in a reciprocal-rank fusion with the model's
        order; ``None`` ranks by the model alone.
    :param k: the reciprocal-rank constant of the fusion.
    :param min_score: drop chunks whose model score is below it (``below_threshold``).
    :param top_k: keep at most this many (``rank_cutoff``).
    :param batch_size: pairs per cross-encoder forward pass.
    :param labels: score the chunk's title and section with its text (``passage``). When
        the caller supplies embeddings (``meta["embedding"]``, the vectors its store
        matched with), the bi-encoder uses those instead and embeds only the rest.
    :param device: where a model given by path or name runs (``"cpu"``, ``"cuda:0"``...);
        ``None``: sentence-transformers chooses. A model instance stays where it is.
    :raises ConfigError: a model that is none of the above, a bad kind, fuse, k or top_k.
    :raises MissingExtraError: a path or name was given and sentence-transformers is missing.
    """

    name = "rerank"
    shrinks = True
    writes = frozenset({"rerank", "rank", "retriever_score"})
    reads = frozenset({"retriever_score"})
    uses_model = True

    def __init__(
        self,
        model: object = DEFAULT_CROSS_ENCODER,
        *,
        kind: KindOption = "auto",
        rerank_fuse: float | None = None,
        k: float = 10.0,
        min_score: float | None = None,
        top_k: int | None = None,
        batch_size: int = 32,
        labels: bool = False,
        device: str | None = None,
    ) -> None:
        if kind not in ("auto", "bi", "cross"):
            raise ConfigError(f"kind must be 'auto', 'bi' or 'cross', got {kind!r}")
        if rerank_fuse is not None and (
            isinstance(rerank_fuse, bool) or not isinstance(rerank_fuse, (int, float)) or rerank_fuse < 0
        ):
            raise ConfigError(f"rerank_fuse must be a non-negative number or None, got {rerank_fuse!r}")
        if k <= 0:
            raise ConfigError(f"k must be positive, got {k!r}")
        if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1):
            raise ConfigError(f"top_k must be a positive int or None, got {top_k!r}")
        if batch_size < 1:
            raise ConfigError(f"batch_size must be a positive int, got {batch_size!r}")
        self.rerank_fuse = rerank_fuse
        self.k = k
        self.min_score = min_score
        self.top_k = top_k
        self.batch_size = batch_size
        self.labels = labels
        self.device = device
        self._cross: Any = None
        self.embedder: Embedder | None = None
        self._scorer: Scorer | None = None
        self._spec: str | None = None
        self._untrained: str | None = None  # why the cross-encoder scores at random (checked once loaded)
        self._checked = False
        if isinstance(model, str):
            require()
            if not model.strip():
                raise ConfigError("reranker model name must not be empty")
            self._spec = model
            # a local folder is checked now (cheap); a hub name when it is first used
            self.kind: str = kind if kind != "auto" or not os.path.exists(model) else model_kind(model)
            if self.kind == "bi":
                self.embedder = embedder_for(model if device is None else load_sentence_transformer(model, device))
        elif isinstance(model, Embedder) or is_sentence_transformer(model):
            self.kind = "bi"
            self.embedder = embedder_for(model)
        elif is_cross_encoder(model):
            self.kind = "cross"
            self._cross = model
        elif callable(model):
            self.kind = "callable"
            self._scorer = cast(Scorer, model)
        else:
            raise ConfigError(
                "reranker must be a CrossEncoder or SentenceTransformer (instance, path or hub name), "
                f"an Embedder, or a callable (query, texts) -> scores; got {type(model).__name__}"
            )

    def __getstate__(self) -> dict[str, object]:
        # A cross-encoder loaded from a path or name travels as that path (loaded again on
        # first use in the worker); an instance the caller passed travels as it is.
        state = dict(self.__dict__)
        if self._spec is not None:
            state["_cross"] = None
        return state

    def _resolve(self) -> None:
        """Decide the kind of a hub name and load a cross-encoder (first use only)."""
        if self.kind == "auto" and self._spec is not None:
            self.kind = model_kind(self._spec)
            if self.kind == "bi":
                self.embedder = embedder_for(
                    self._spec if self.device is None else load_sentence_transformer(self._spec, self.device)
                )
        if self.kind == "cross" and self._cross is None and self._spec is not None:
            self._cross = load_cross_encoder(self._spec, self.device)
        if self.kind == "cross" and not self._checked:
            self._checked = True
            self._untrained = untrained_head(self._cross)
            if self._untrained is not None:
                warnings.warn(self._untrained, UntrainedModelWarning, stacklevel=3)

    def scores(self, query: str, chunks: Sequence[Chunk]) -> list[float]:
        """The model's score of each chunk for ``query`` (one batched model call).

        :raises ConfigError: a callable that returned the wrong number of scores or a
            non-finite score.
        """
        if not chunks:
            return []
        self._resolve()
        texts = [passage(c) for c in chunks] if self.labels else [c.text for c in chunks]
        if self.kind == "bi" and self.embedder is not None:
            supplied = any(c.meta.get("embedding") is not None for c in chunks)
            if self.labels and not supplied:
                vecs = self.embedder.embed([query, *texts])  # one forward pass for all
                raw: Any = vecs[1:] @ vecs[0]
            else:
                # the question goes into the same pass as the chunks without a vector;
                # chunk_vectors then finds every one of them in the cache
                missing = [c.text for c in chunks if c.meta.get("embedding") is None]
                if not self.embedder.cache_size:
                    missing = []  # nothing would be kept for chunk_vectors to find
                q = self.embedder.embed([query, *missing])[0]
                raw = chunk_vectors(chunks, self.embedder) @ q
        elif self.kind == "cross":
            raw = self._cross.predict(
                [(query, t) for t in texts], batch_size=self.batch_size, show_progress_bar=False, convert_to_numpy=True
            )
        else:
            raw = cast(Scorer, self._scorer)(query, texts)  # set for kind "callable" in __init__
        out = [float(x) for x in np.asarray(raw, dtype=np.float64).reshape(-1)]
        if len(out) != len(chunks):
            raise ConfigError(f"reranker returned {len(out)} scores for {len(chunks)} chunks")
        bad = [i for i, s in enumerate(out) if not math.isfinite(s)]
        if bad:
            raise ConfigError(f"reranker returned a non-finite score {out[bad[0]]!r} for chunk {chunks[bad[0]].id!r}")
        return out

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        if not chunks:
            return []
        model = self.scores(ctx.question, chunks)
        if self._untrained is not None:
            ctx.report.note(self.name, "untrained_head", why=self._untrained)
        n = len(chunks)
        reused = supplied_embeddings(chunks) if self.kind == "bi" else 0
        if reused:  # the bi-encoder read these vectors instead of embedding the texts
            ctx.report.note(self.name, "embeddings", supplied=reused, of=n)
        if self.rerank_fuse:
            by_model = sorted(range(n), key=lambda i: (-model[i], i))
            rank = {i: r for r, i in enumerate(by_model)}
            final = [1 / (self.k + rank[i]) + self.rerank_fuse / (self.k + i) for i in range(n)]
        else:
            final = model
        order = sorted(range(n), key=lambda i: (-final[i], i))  # ties: incoming order
        out: list[Chunk] = []
        ledger = ctx.ledger
        for i in order:
            c = chunks[i]
            if self.min_score is not None and model[i] < self.min_score:
                ctx.report.drop(
                    c, self.name, Reason.BELOW_THRESHOLD, score=round(model[i], 6), threshold=self.min_score
                )
                continue
            if self.top_k is not None and len(out) >= self.top_k:
                ctx.report.drop(c, self.name, Reason.RANK_CUTOFF, rank=len(out), top_k=self.top_k)
                continue
            given = ledger[c.index].retriever_score
            ledger.update(
                c.index,
                rerank=Reranked(round(model[i], 6), c.score, i),
                rank=len(out),
                retriever_score=Given(c.score) if given is None else given,
            )
            out.append(replace(c, score=round(final[i], 6)))
        return out
