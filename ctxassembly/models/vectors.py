"""Unit vectors of chunks for the model stages (rerank's bi-encoder, semantic dedup):
the caller's ``meta["embedding"]`` where given, else embedded through the
:class:`~ctxassembly.models.Embedder` cache, so a chunk retrieved again is not embedded again.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ChunkError
from ctxassembly.models.embedder import Embedder

__all__ = ["chunk_vectors", "supplied_embeddings"]


def supplied_embeddings(chunks: Sequence[Chunk]) -> int:
    """How many of ``chunks`` carry the caller's ``meta["embedding"]`` (the stages that
    reuse them say so in the report)."""
    return sum(1 for c in chunks if c.meta.get("embedding") is not None)


def chunk_vectors(chunks: Sequence[Chunk], embedder: Embedder) -> np.ndarray:
    """Unit vectors of ``chunks``: the caller's ``meta["embedding"]`` where given, else embedded
    (through the cache) in one batch.

    :raises ChunkError: a supplied embedding that is not a finite vector of the model's size.
    """
    given: dict[int, np.ndarray] = {}
    for i, c in enumerate(chunks):
        raw = c.meta.get("embedding")
        if raw is None:
            continue
        v = np.asarray(raw, dtype=np.float32)
        if v.ndim != 1 or not v.size or not np.all(np.isfinite(v)):
            raise ChunkError(
                f"expected a 1-d finite vector, got shape {v.shape}", field="meta.embedding", chunk=repr(c.id)
            )
        n = float(np.linalg.norm(v))
        given[i] = v / n if n else v
    todo = [i for i in range(len(chunks)) if i not in given]
    computed = embedder.embed([chunks[i].text for i in todo]) if todo else None
    dim = computed.shape[1] if computed is not None else next(iter(given.values())).shape[0] if given else 0
    out = np.zeros((len(chunks), dim), dtype=np.float32)
    for i, v in given.items():
        if v.shape[0] != dim:
            raise ChunkError(
                f"has {v.shape[0]} dimensions, the embedder gives {dim}; supply vectors of the same model",
                field="meta.embedding",
                chunk=repr(chunks[i].id),
            )
        out[i] = v
    if computed is not None:
        out[todo] = computed
    return out
