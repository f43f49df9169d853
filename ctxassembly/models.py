"""Model loading and embedding caches for the model-backed stages (extra ``models``).

Everything heavy (torch, sentence-transformers, transformers) is imported inside
functions: importing ctxassembly never loads a model library. A stage checks that the
library is importable when it is built (:func:`require`) and loads weights on first use.

A model is named by an instance, a local path or a hub name. For a string the kind is
read from the saved config, not guessed from the name: a folder with
``modules.json``/``config_sentence_transformers.json`` is a sentence-transformers
bi-encoder; a ``config.json`` whose architecture ends in ``ForSequenceClassification``
is a cross-encoder (:func:`model_kind`).

:class:`Embedder` wraps a bi-encoder (or any ``texts -> vectors`` callable) with a
bounded LRU cache keyed by a hash of the text, so a paragraph retrieved again for
another question is never embedded twice. :func:`embedder_for` returns one shared
Embedder per model, so the reranker, the semantic dedup and the extractor that use the
same model share one cache. Texts that miss the cache are grouped into forward passes by
length (:func:`plan_batches`: no short sentence padded to a long chunk), and a small
pass runs on one torch thread (:func:`torch_threads`): on a busy machine a second
thread mostly waits for the first.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Literal

import numpy as np

from ctxassembly.errors import ConfigError, MissingExtraError

__all__ = [
    "DEFAULT_CROSS_ENCODER",
    "DEFAULT_EMBEDDER",
    "SMALL_PASS_TOKENS",
    "Embedder",
    "embedder_for",
    "load_cross_encoder",
    "load_sentence_transformer",
    "model_kind",
    "plan_batches",
    "require",
    "torch_threads",
]

DEFAULT_CROSS_ENCODER = "cross-encoder/ms-marco-MiniLM-L-6-v2"
DEFAULT_EMBEDDER = "sentence-transformers/all-MiniLM-L6-v2"
EXTRA = "models"

Kind = Literal["bi", "cross"]
EmbedFn = Callable[[Sequence[str]], Any]


def require(package: str = "sentence_transformers", extra: str = EXTRA) -> None:
    """Check that ``package`` can be imported, without importing it.

    :raises MissingExtraError: it is not installed (the message names the extra).
    """
    if importlib.util.find_spec(package) is None:
        raise MissingExtraError(package.replace("_", "-"), extra)


def _import_st() -> Any:
    require()
    try:
        import sentence_transformers
    except ImportError as e:  # installed but broken (e.g. a torch mismatch)
        raise MissingExtraError("sentence-transformers", EXTRA) from e
    return sentence_transformers


def is_sentence_transformer(obj: object) -> bool:
    """True for a ``SentenceTransformer`` instance (checked without importing the library)."""
    return any(
        t.__name__ == "SentenceTransformer" and t.__module__.startswith("sentence_transformers")
        for t in type(obj).__mro__
    )


def is_cross_encoder(obj: object) -> bool:
    """True for a sentence-transformers ``CrossEncoder`` instance."""
    return any(
        t.__name__ == "CrossEncoder" and t.__module__.startswith("sentence_transformers") for t in type(obj).__mro__
    )


def model_kind(spec: str) -> Kind:
    """``"bi"`` or ``"cross"`` for a local model folder or a hub name, from its saved config.

    A hub name is resolved through the local Hugging Face cache (no download here);
    ``cross-encoder/...`` names are cross-encoders by the hub's convention.

    :raises ConfigError: the folder is not a model, or its kind cannot be determined.
    """
    if os.path.isdir(spec):
        return _kind_from_files(
            lambda name: os.path.join(spec, name) if os.path.isfile(os.path.join(spec, name)) else None, spec
        )
    if os.path.exists(spec):
        raise ConfigError(f"model path {spec!r} is a file; expected a model folder or a hub name")
    if spec.startswith(("./", "../", "/", "~")):
        raise ConfigError(f"model path {spec!r} does not exist; expected a model folder or a hub name")

    def cached(name: str) -> str | None:
        try:
            from huggingface_hub import try_to_load_from_cache
        except ImportError:
            return None
        found = try_to_load_from_cache(spec, name)
        return found if isinstance(found, str) else None

    try:
        return _kind_from_files(cached, spec)
    except ConfigError:
        if spec.startswith("cross-encoder/"):
            return "cross"
        if spec.startswith("sentence-transformers/"):
            return "bi"
        raise


def _kind_from_files(find: Callable[[str], str | None], spec: str) -> Kind:
    if find("modules.json") or find("config_sentence_transformers.json"):
        return "bi"
    config = find("config.json")
    if config is None:
        raise ConfigError(
            f"cannot tell whether {spec!r} is a cross-encoder or a bi-encoder: no modules.json, "
            "config_sentence_transformers.json or config.json found; pass a loaded model instead"
        )
    with open(config, encoding="utf-8") as f:
        archs = json.load(f).get("architectures") or []
    if any(str(a).endswith("ForSequenceClassification") for a in archs):
        return "cross"
    raise ConfigError(
        f"{spec!r} has architectures {archs!r}: neither a sequence-classification cross-encoder nor a "
        "sentence-transformers folder (modules.json); pass a loaded SentenceTransformer or CrossEncoder instead"
    )


_LOCK = threading.Lock()
_LOADED: dict[tuple[str, str, str | None], Any] = {}


def load_sentence_transformer(spec: str, device: str | None = None) -> Any:
    """A ``SentenceTransformer`` for a path or hub name, loaded once per process.

    :raises MissingExtraError: sentence-transformers is not installed.
    """
    return _load_once("bi", "SentenceTransformer", spec, device)


def load_cross_encoder(spec: str, device: str | None = None) -> Any:
    """A ``CrossEncoder`` for a path or hub name, loaded once per process.

    :raises MissingExtraError: sentence-transformers is not installed.
    """
    return _load_once("cross", "CrossEncoder", spec, device)


def _load_once(kind: str, cls: str, spec: str, device: str | None) -> Any:
    st = _import_st()
    with _LOCK:
        key = (kind, spec, device)  # one copy per device: a model asked for on another device is loaded there
        if key not in _LOADED:
            _LOADED[key] = getattr(st, cls)(spec, device=device)
        return _LOADED[key]


def text_key(text: str) -> bytes:
    """The cache key of a text: a 16-byte BLAKE2 digest (fixed size, whatever the text)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


SMALL_PASS_TOKENS = 4096  # rows x padded length of a forward pass that Embedder runs on few threads
_THREADS_LOCK = threading.Lock()


@contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Run the block with at most ``n`` torch intra-op threads, then restore the setting.

    ``None``, or a setting already at or below ``n``, changes nothing. torch's thread count
    is process-wide: a lock keeps two blocks from restoring each other's value, and other
    torch work running meanwhile in the process also gets ``n`` threads.
    """
    if n is None:
        yield
        return
    import torch

    if torch.get_num_threads() <= n:
        yield
        return
    with _THREADS_LOCK:
        old = torch.get_num_threads()
        torch.set_num_threads(n)
        try:
            yield
        finally:
            torch.set_num_threads(old)


def _token_lengths(model: Any, texts: list[str]) -> list[int]:
    """Tokens each text fills in the model's input (its tokenizer, truncated as the model
    truncates); characters / 4 when the model has no usable tokenizer."""
    limit = getattr(model, "max_seq_length", None) or 512
    tokenizer = getattr(model, "tokenizer", None)
    if callable(tokenizer):
        try:
            ids = tokenizer(texts, add_special_tokens=True, truncation=True, max_length=limit)["input_ids"]
            return [len(x) for x in ids]
        except (TypeError, KeyError, ValueError):  # a tokenizer without this call signature
            pass
    return [min(limit, 2 + len(t) // 4) for t in texts]


def plan_batches(lengths: Sequence[int], *, max_batch: int = 64, pass_cost: int = 64) -> list[list[int]]:
    """Group texts into forward passes at the least cost: padded tokens plus ``pass_cost`` per pass.

    A pass pads every text to its longest, so one pass over a 200-token unit and forty
    20-token sentences computes 8,200 token positions for 1,000 real ones. The texts are
    sorted by length and cut into runs by dynamic programming (exact for this cost).

    :returns: lists of indices into ``lengths``, each at most ``max_batch`` long.
    """
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    n = len(order)
    best = [0.0] + [float("inf")] * n
    cut = [0] * (n + 1)
    for j in range(1, n + 1):
        longest = lengths[order[j - 1]]  # sorted ascending: the last text of a run is its longest
        for i in range(max(0, j - max_batch), j):
            cost = best[i] + pass_cost + (j - i) * longest
            if cost < best[j]:
                best[j], cut[j] = cost, i
    runs = []
    j = n
    while j > 0:
        runs.append(order[cut[j] : j])
        j = cut[j]
    return runs[::-1]


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
        self._cache: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.calls = 0  # embed calls that reached the model so far
        self.passes = 0  # forward passes (or callable calls) so far
        self.embedded = 0  # texts embedded so far (cache misses)

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
            lengths = _token_lengths(model, texts)
            for batch in plan_batches(lengths, max_batch=self.batch_size, pass_cost=self.pass_cost):
                small = len(batch) * max(lengths[i] for i in batch) <= SMALL_PASS_TOKENS
                with torch_threads(self.small_pass_threads if small else None):
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
    with _LOCK:
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
