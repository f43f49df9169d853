"""Unit-length embeddings with a bounded cache, one shared :class:`Embedder` per model.

:class:`Embedder` wraps a bi-encoder (or any ``texts -> vectors`` callable) with a
bounded LRU cache keyed by a hash of the text (:func:`text_key`), so a paragraph
retrieved again for another question is never embedded twice. :func:`embedder_for`
returns one shared Embedder per model, so the reranker, the semantic dedup and the
extractor that use the same model share one cache. Texts that miss the cache are grouped
into forward passes by length (:func:`~ctxassembly.models.batching.plan_batches`), and a
small pass runs on few torch threads (:func:`~ctxassembly.models.threads.torch_threads`):
on a busy machine a second thread mostly waits for the first. A pass also leaves alone a
core that another thread is running on (:func:`~ctxassembly.models.threads.free_cores`).
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from ctxassembly.errors import ConfigError
from ctxassembly.models.batching import plan_batches, token_lengths
from ctxassembly.models.loading import is_sentence_transformer, load_sentence_transformer, require
from ctxassembly.models.threads import free_cores, torch_threads

__all__ = ["SMALL_PASS_TOKENS", "Embedder", "cosine", "embedder_for", "text_key"]

SMALL_PASS_TOKENS = 4096  # rows x padded length of a forward pass that Embedder runs on few threads


def text_key(text: str) -> bytes:
    """The cache key of a text: a 16-byte BLAKE2 digest (fixed size, whatever the text)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class Embedder:
    """Unit-length embeddings of texts, each text embedded at most once while cached.

    :param model: a ``SentenceTransformer`` instance, a local path or hub name of one, or a
        callable ``texts -> array (n, d)`` (any embedding function; vectors are normalised
        here).
    :param cache_size: how many texts' vectors are kept (least recently used go first).
    :param batch_size: at most this many texts per forward pass.
    :param pass_cost: the fixed cost of one forward pass, in padded tokens: texts are
        grouped into passes by length (:func:`plan_batches`) so that padding is not paid
        for, and short texts do not wait for a long one, unless a separate pass costs more.
    :param small_pass_threads: at most this many torch intra-op threads for a forward pass
        of at most :data:`SMALL_PASS_TOKENS` padded tokens (the question, a cascade of
        sentences); ``None`` leaves torch's setting alone. A small pass is a few hundred
        tiny operations, so more threads mostly wait for each other: 2 (the default) is
        what torch takes on this 2-core benchmark machine and measured fastest when it is
        quiet (24 sentence units of 60 characters: 103 ms on 2 threads, 141 ms on 1); on a
        machine whose other jobs hold a core, 1 is faster (155 ms against 264 ms; one
        sentence once took 520 ms on 2 threads against 21 ms on 1), so set 1 there
        (benchmarks/README.md). Larger passes keep the process's setting. While a small
        pass runs, the process's torch thread count is lowered (and restored after it):
        see :func:`torch_threads`.
    :param busy_cores: ``"yield"`` (the default, with ``small_pass_threads`` set): a pass runs
        on no more threads than there are cores no other thread is running on
        (:func:`free_cores`, read before each pass until one runs on all its threads), at
        least one. torch splits a pass evenly among its threads, so a thread that shares its
        core with another job makes the whole pass wait: after a BLAS call whose worker
        threads still spin (a vector search, another library's cosine matrix), two texts of
        256 tokens took 122 ms on 2 threads of this 2-core machine against 90 ms on 1 (54 ms
        on 2 when quiet). A vector on 1 thread agrees with its 2-thread value to ~1e-7
        (bit for bit in the batched passes measured), and every with-models snapshot call
        decided the same with each pass forced onto 1 thread (benchmarks/README.md); a
        near-tie could still read differently under load. ``"ignore"``: the thread count
        never looks at the load.
    :raises MissingExtraError: a path or name was given and sentence-transformers is missing.
    :raises ConfigError: ``model`` is none of the above, or a bad cache size, batch size,
        pass cost or thread count.
    """

    def __init__(
        self,
        model: object,
        *,
        cache_size: int = 50_000,
        batch_size: int = 64,
        pass_cost: int = 64,
        small_pass_threads: int | None = 2,
        busy_cores: str = "yield",
    ) -> None:
        if isinstance(cache_size, bool) or not isinstance(cache_size, int) or cache_size < 0:
            raise ConfigError(f"cache_size must be a non-negative int, got {cache_size!r}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigError(f"batch_size must be a positive int, got {batch_size!r}")
        if isinstance(pass_cost, bool) or not isinstance(pass_cost, int) or pass_cost < 0:
            raise ConfigError(f"pass_cost must be a non-negative int (tokens), got {pass_cost!r}")
        if small_pass_threads is not None and (
            isinstance(small_pass_threads, bool) or not isinstance(small_pass_threads, int) or small_pass_threads < 1
        ):
            raise ConfigError(f"small_pass_threads must be a positive int or None, got {small_pass_threads!r}")
        if busy_cores not in ("yield", "ignore"):
            raise ConfigError(f"busy_cores must be 'yield' or 'ignore', got {busy_cores!r}")
        if isinstance(model, str):
            require()
            if not model.strip():
                raise ConfigError("embedder model name must not be empty")
        elif not (is_sentence_transformer(model) or callable(model)):
            raise ConfigError(
                f"embedder must be a SentenceTransformer, a path or hub name, or a callable texts -> vectors; "
                f"got {type(model).__name__}"
            )
        self._spec = model
        self._model: Any = None if isinstance(model, str) else model
        self.cache_size = cache_size
        self.batch_size = batch_size
        self.pass_cost = pass_cost
        self.small_pass_threads = small_pass_threads
        self.busy_cores = busy_cores
        self._cache: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.calls = 0  # embed calls that reached the model so far
        self.passes = 0  # forward passes (or callable calls) so far
        self.embedded = 0  # texts embedded so far (cache misses)
        self.yielded = 0  # forward passes run on fewer threads because other threads held cores

    def __getstate__(self) -> dict[str, Any]:
        # Pickled for a worker process: settings and the spec travel; the lock, the cache
        # and a model loaded from a path or name do not (the worker loads it on first use).
        state = {**self.__dict__, "_cache": OrderedDict(), "_lock": None}
        if isinstance(self._spec, str):
            state["_model"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @property
    def model(self) -> Any:
        """The underlying model, loaded on first access."""
        if self._model is None:
            self._model = load_sentence_transformer(str(self._spec))
        return self._model

    @property
    def name(self) -> str:
        return self._spec if isinstance(self._spec, str) else type(self._spec).__name__

    def _encode(self, texts: list[str]) -> np.ndarray:
        model = self.model
        if is_sentence_transformer(model):
            out = np.zeros((len(texts), 0), dtype=np.float32)
            lengths = token_lengths(model, texts)
            # once a pass has run on all its threads, its workers spin a moment after it:
            # the load is not read again in this call (they would count as other threads)
            settled = self.small_pass_threads is None or self.busy_cores == "ignore"
            for batch in plan_batches(lengths, max_batch=self.batch_size, pass_cost=self.pass_cost):
                small = len(batch) * max(lengths[i] for i in batch) <= SMALL_PASS_TOKENS
                n = self.small_pass_threads if small else None
                if not settled:
                    n, settled = self._threads(n)
                with torch_threads(n):
                    vecs = model.encode(
                        [texts[i] for i in batch],
                        batch_size=len(batch),
                        convert_to_numpy=True,
                        normalize_embeddings=True,
                        show_progress_bar=False,
                    )
                self.passes += 1
                if not out.shape[1]:
                    out = np.zeros((len(texts), vecs.shape[1]), dtype=np.float32)
                out[batch] = vecs
        else:
            out = model(texts)
            self.passes += 1
        arr = np.asarray(out, dtype=np.float32)
        if arr.ndim != 2 or arr.shape[0] != len(texts):
            raise ConfigError(
                f"embedder returned shape {arr.shape} for {len(texts)} texts; expected ({len(texts)}, dim)"
            )
        norms = np.linalg.norm(arr, axis=1, keepdims=True)
        return arr / np.where(norms == 0, 1.0, norms)

    def _threads(self, n: int | None) -> tuple[int | None, bool]:
        """The thread count of the next pass (at most ``n``; ``None``: the process's), fewer
        when other threads hold cores; and whether it runs on all the threads it asked for."""
        import torch

        want = torch.get_num_threads() if n is None else min(n, torch.get_num_threads())
        free = free_cores()
        if free is None or free >= want:
            return n, True
        self.yielded += 1
        return max(1, free), False

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors ``(len(texts), dim)``; only texts not in the cache reach the model."""
        keys = [text_key(t) for t in texts]
        found: dict[bytes, np.ndarray] = {}
        with self._lock:
            for k in keys:
                v = self._cache.get(k)
                if v is not None:
                    self._cache.move_to_end(k)
                    found[k] = v
        missing: dict[bytes, str] = {}
        for k, t in zip(keys, texts, strict=True):
            if k not in found and k not in missing:
                missing[k] = t
        if missing:
            vectors = self._encode(list(missing.values()))
            self.calls += 1
            self.embedded += len(missing)
            with self._lock:
                for k, v in zip(missing, vectors, strict=True):
                    found[k] = v
                    if self.cache_size:
                        self._cache[k] = v
                        self._cache.move_to_end(k)
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        if not keys:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([found[k] for k in keys])

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed(texts)

    def clear(self) -> None:
        """Forget every cached vector."""
        with self._lock:
            self._cache.clear()

    def __len__(self) -> int:
        return len(self._cache)

    def __repr__(self) -> str:
        return f"Embedder({self.name!r}, cached={len(self._cache)})"


_SHARED: OrderedDict[object, Embedder] = OrderedDict()
_SHARED_MAX = 16
_SHARED_LOCK = threading.Lock()


def embedder_for(model: object) -> Embedder:
    """The shared :class:`Embedder` of ``model`` (one per model instance, path or callable).

    Stages built from the same model get the same Embedder, hence one cache.

    :raises ConfigError: ``model`` cannot embed (see :class:`Embedder`).
    :raises MissingExtraError: a path or name was given and sentence-transformers is missing.
    """
    if isinstance(model, Embedder):
        return model
    key: object = (
        ("path", os.path.abspath(model))
        if isinstance(model, str) and os.path.isdir(model)
        else (("name", model) if isinstance(model, str) else ("obj", id(model)))
    )
    with _SHARED_LOCK:
        found = _SHARED.get(key)
        # an id can be reused after its object is freed: check that it is the same model
        if found is not None and (isinstance(model, str) or found._spec is model):
            _SHARED.move_to_end(key)
            return found
        emb = Embedder(model)
        _SHARED[key] = emb
        while len(_SHARED) > _SHARED_MAX:
            _SHARED.popitem(last=False)
        return emb


def cosine(query: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Cosine of one unit vector against the rows of a unit-row matrix."""
    if matrix.size == 0:
        return np.zeros(len(matrix), dtype=np.float32)
    return np.asarray(matrix @ query, dtype=np.float32)
