"""Model loading and embedding caches for the model-backed stages (extra ``models``).

* :mod:`~ctxassembly.models.loading`: which kind a model is (bi- or cross-encoder, read
  from its saved config), :func:`require` (the library is installed, checked without
  importing it) and each model loaded once per process.
* :mod:`~ctxassembly.models.embedder`: :class:`Embedder` (unit vectors behind a bounded
  cache) and :func:`embedder_for` (one shared Embedder per model), :func:`cosine`.
* :mod:`~ctxassembly.models.pruner`: :class:`SentencePruner`, a token- or
  sequence-classification model as a sentence pruner (per-sentence keep scores).
* :mod:`~ctxassembly.models.batching`: :func:`plan_batches`, forward passes grouped by
  token length.
* :mod:`~ctxassembly.models.threads`: :func:`torch_threads`, the one control of torch's
  CPU thread count, and :func:`free_cores`, the cores no other thread is running on.

Everything heavy (torch, sentence-transformers, transformers) is imported inside
functions: importing ctxassembly never loads a model library. The names below are the
package's public face; the stages import them from here.
"""

from ctxassembly.models.batching import plan_batches
from ctxassembly.models.embedder import SMALL_PASS_TOKENS, Embedder, cosine, embedder_for
from ctxassembly.models.loading import (
    DEFAULT_CROSS_ENCODER,
    DEFAULT_EMBEDDER,
    is_cross_encoder,
    is_sentence_transformer,
    load_cross_encoder,
    load_sentence_transformer,
    model_kind,
    require,
    untrained_head,
)
from ctxassembly.models.pruner import SentencePruner, pruner_kind
from ctxassembly.models.threads import free_cores, torch_threads

__all__ = [
    "DEFAULT_CROSS_ENCODER",
    "DEFAULT_EMBEDDER",
    "SMALL_PASS_TOKENS",
    "Embedder",
    "SentencePruner",
    "cosine",
    "embedder_for",
    "free_cores",
    "is_cross_encoder",
    "is_sentence_transformer",
    "load_cross_encoder",
    "load_sentence_transformer",
    "model_kind",
    "plan_batches",
    "pruner_kind",
    "require",
    "torch_threads",
    "untrained_head",
]
