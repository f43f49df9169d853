"""A Hugging Face classifier as a sentence pruner: ``(question, passages) -> keep scores``.

:class:`SentencePruner` turns a model saved with ``save_pretrained`` (a local folder or a
hub name) into the pruner contract of :class:`ctxassembly.stages.prune.Prune`: each
passage arrives as its sentences, and one keep score in [0, 1] comes back per sentence.
Two kinds of head, read from the saved config (``architectures``), never guessed from the
name:

* **token classification** (``...ForTokenClassification``; the Provence-style head: a
  keep/drop label per token): the question and the passage are read together, as one
  pair, and a sentence's score is the mean keep probability of its tokens. A passage
  longer than ``max_length`` is read in overlapping windows (``stride``); a token read in
  two windows counts once, with the mean of its two probabilities;
* **sequence classification** (``...ForSequenceClassification``: a cross-encoder): each
  (question, sentence) pair is scored alone; the score is the positive-class
  probability.

The keep probability: with two labels, the softmax of label 1 (the positive class);
with one, the sigmoid of its logit. A sentence the model read no token of (nothing but
characters the tokenizer drops) scores 1.0: what was not judged is not cut.

Models that ship their own code (Provence, OpenProvence: ``trust_remote_code``) are not
run unless ``trust_remote_code=True`` is given, and even then only when their code
registers a token- or sequence-classification class; their ``process(...)`` method is
theirs to call, in a callable the caller passes instead (docs/pruning.md).

torch and transformers are imported on first use (extra ``models``); weights load once
per process and device.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from typing import Any, Literal

from ctxassembly.errors import ConfigError, MissingExtraError
from ctxassembly.models.loading import EXTRA, require

__all__ = ["PrunerKind", "SentencePruner", "pruner_kind"]

PrunerKind = Literal["token", "sequence"]

_SUFFIXES: dict[str, PrunerKind] = {"ForTokenClassification": "token", "ForSequenceClassification": "sequence"}
_AUTO: dict[PrunerKind, str] = {
    "token": "AutoModelForTokenClassification",
    "sequence": "AutoModelForSequenceClassification",
}


def _kind_of(config: dict[str, Any], spec: str, trust_remote_code: bool) -> PrunerKind:
    archs = [str(a) for a in config.get("architectures") or []]
    for arch in archs:
        for suffix, kind in _SUFFIXES.items():
            if arch.endswith(suffix):
                return kind
    auto_map = config.get("auto_map") or {}
    if auto_map and trust_remote_code:
        for head, auto in _AUTO.items():
            if auto in auto_map:
                return head
    hint = (
        "it ships its own code (auto_map): pass trust_remote_code=True if that code registers a "
        "token- or sequence-classification class, or wrap the model's own pruning method in a callable "
        "(question, passages) -> scores (docs/pruning.md)"
        if auto_map
        else "pass a token- or sequence-classification model, or a callable (question, passages) -> scores"
    )
    raise ConfigError(f"pruner {spec!r} has architectures {archs!r}: no pruning head found; {hint}")


def pruner_kind(spec: str, *, trust_remote_code: bool = False) -> PrunerKind:
    """``"token"`` or ``"sequence"`` for a local model folder, from its ``config.json``.

    :raises ConfigError: no such folder, no ``config.json``, or a config with neither head.
    """
    if not os.path.isdir(spec):
        raise ConfigError(f"pruner path {spec!r} is not a model folder")
    path = os.path.join(spec, "config.json")
    if not os.path.isfile(path):
        raise ConfigError(f"pruner folder {spec!r} has no config.json; expected a model saved with save_pretrained")
    with open(path, encoding="utf-8") as f:
        return _kind_of(json.load(f), spec, trust_remote_code)


_LOCK = threading.Lock()
_LOADED: dict[tuple[str, str | None, bool], tuple[PrunerKind, Any, Any]] = {}


def _import() -> tuple[Any, Any]:
    for package in ("torch", "transformers"):
        require(package)
    try:
        import torch
        import transformers
    except ImportError as e:  # installed but broken (e.g. a torch mismatch)
        raise MissingExtraError("transformers", EXTRA) from e
    return torch, transformers


class SentencePruner:
    """A token- or sequence-classification model scoring each sentence of each passage.

    :param model: a local folder or hub name of a model saved with ``save_pretrained``.
    :param device: where the model runs (``"cpu"``, ``"cuda:0"``...); ``None``: CUDA when
        available, else the CPU.
    :param trust_remote_code: let transformers run the code a model ships (off by default:
        it is code from the model's authors, run in your process).
    :param batch_size: pairs per forward pass.
    :param max_length: tokens per forward pass (question, passage window, special tokens),
        at most what the model reads (its tokenizer's ``model_max_length``, else its position
        embeddings).
    :param stride: tokens two windows of a long passage share (token heads).
    :raises ConfigError: an empty name, a local folder that is no pruning model, or a bad
        batch size, length or stride.
    :raises MissingExtraError: torch or transformers is not installed (extra ``models``).

    Usage::

        from ctxassembly import assemble
        result = assemble(question, candidates, budget=1000, pruner="path/to/token-classifier")
    """

    def __init__(
        self,
        model: str | os.PathLike[str],
        *,
        device: str | None = None,
        trust_remote_code: bool = False,
        batch_size: int = 16,
        max_length: int = 512,
        stride: int = 64,
    ) -> None:
        spec = os.fspath(model)
        if not spec.strip():
            raise ConfigError("pruner model name must not be empty")
        for name, value, low in (("batch_size", batch_size, 1), ("max_length", max_length, 16), ("stride", stride, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ConfigError(f"{name} must be an int >= {low}, got {value!r}")
        if stride >= max_length // 2:
            raise ConfigError(f"stride must be less than half of max_length {max_length}, got {stride!r}")
        if not os.path.exists(spec) and spec.startswith(("./", "../", "/", "~")):
            raise ConfigError(f"pruner path {spec!r} does not exist; expected a model folder or a hub name")
        require("torch")
        require("transformers")
        self.spec = spec
        self.device = device
        self.trust_remote_code = trust_remote_code
        self.batch_size = batch_size
        self.max_length = max_length
        self.stride = stride
        # a local folder is checked now (cheap: its config.json); a hub name on first use
        self.kind: PrunerKind | None = (
            pruner_kind(spec, trust_remote_code=trust_remote_code) if os.path.isdir(spec) else None
        )

    def __repr__(self) -> str:
        return f"SentencePruner({self.spec!r}, kind={self.kind!r})"

    def _load(self) -> tuple[PrunerKind, Any, Any]:
        torch, transformers = _import()
        key = (self.spec, self.device, self.trust_remote_code)
        with _LOCK:
            if key not in _LOADED:
                remote = self.trust_remote_code
                config = transformers.AutoConfig.from_pretrained(self.spec, trust_remote_code=remote)
                kind = self.kind or _kind_of(config.to_dict(), self.spec, remote)
                cls = getattr(transformers, _AUTO[kind])
                model = cls.from_pretrained(self.spec, trust_remote_code=remote)
                device = self.device or ("cuda" if torch.cuda.is_available() else "cpu")
                model.to(device).eval()
                tokenizer = transformers.AutoTokenizer.from_pretrained(self.spec, trust_remote_code=remote)
                if kind == "token" and not tokenizer.is_fast:
                    raise ConfigError(
                        f"pruner {self.spec!r}: a token-classification pruner needs a fast tokenizer "
                        "(token offsets map tokens to sentences)"
                    )
                _LOADED[key] = (kind, model, tokenizer)
            kind, model, tokenizer = _LOADED[key]
        self.kind = kind
        return kind, model, tokenizer

    def _limit(self, model: Any, tokenizer: Any) -> tuple[int, int]:
        """Tokens per pass and window overlap: ``max_length`` capped at what the model reads
        (its tokenizer's limit, else its position embeddings)."""
        limit = self.max_length
        told = getattr(tokenizer, "model_max_length", None)
        if isinstance(told, int) and told < 1_000_000:  # unset limits are a huge sentinel
            limit = min(limit, told)
        else:
            positions = getattr(model.config, "max_position_embeddings", None)
            if isinstance(positions, int) and positions > 0:
                limit = min(limit, positions)
        return limit, min(self.stride, limit // 4)

    def __call__(self, question: str, passages: Sequence[Sequence[str]]) -> list[list[float]]:
        """The keep score of each sentence of each passage, in [0, 1]."""
        if not any(passages):
            return [[] for _ in passages]
        kind, model, tokenizer = self._load()
        if kind == "sequence":
            return self._by_sentence(model, tokenizer, question, passages)
        return [self._by_token(model, tokenizer, question, list(p)) if p else [] for p in passages]

    def _keep(self, logits: Any) -> list[Any]:
        """Keep probabilities from logits whose last axis holds the labels."""
        torch, _ = _import()
        labels = logits.shape[-1]
        if labels == 1:
            return torch.sigmoid(logits[..., 0]).tolist()  # type: ignore[no-any-return]
        if labels == 2:
            return torch.softmax(logits, dim=-1)[..., 1].tolist()  # type: ignore[no-any-return]
        raise ConfigError(f"pruner {self.spec!r} has {labels} labels; expected 1 (a logit) or 2 (drop, keep)")

    def _by_sentence(
        self, model: Any, tokenizer: Any, question: str, passages: Sequence[Sequence[str]]
    ) -> list[list[float]]:
        torch, _ = _import()
        flat = [s for p in passages for s in p]
        scores: list[float] = []
        with torch.inference_mode():
            for a in range(0, len(flat), self.batch_size):
                batch = tokenizer(
                    [question] * len(flat[a : a + self.batch_size]),
                    flat[a : a + self.batch_size],
                    truncation="longest_first",
                    max_length=self._limit(model, tokenizer)[0],
                    padding=True,
                    return_tensors="pt",
                ).to(model.device)
                scores.extend(float(x) for x in self._keep(model(**batch).logits))
        out, k = [], 0
        for p in passages:
            out.append(scores[k : k + len(p)])
            k += len(p)
        return out

    def _by_token(self, model: Any, tokenizer: Any, question: str, sentences: list[str]) -> list[float]:
        torch, _ = _import()
        text, spans, at = "", [], 0
        for s in sentences:  # the passage as one text, the sentences one space apart
            if text:
                text += " "
            at = len(text)
            text += s
            spans.append((at, len(text)))
        limit, stride = self._limit(model, tokenizer)
        enc = tokenizer(
            [question],
            [text],
            truncation="only_second",
            max_length=limit,
            stride=stride,
            return_overflowing_tokens=True,
            return_offsets_mapping=True,
            padding=True,
            return_tensors="pt",
        )
        offsets = enc.pop("offset_mapping").tolist()
        enc.pop("overflow_to_sample_mapping", None)
        windows = len(offsets)
        # a token read in two overlapping windows counts once, with its mean probability
        seen: dict[tuple[int, int], list[float]] = {}
        with torch.inference_mode():
            for a in range(0, windows, self.batch_size):
                batch = {k: v[a : a + self.batch_size].to(model.device) for k, v in enc.items()}
                probs = self._keep(model(**batch).logits)
                for w, row in enumerate(probs):
                    seq = enc.sequence_ids(a + w)
                    for t, p in enumerate(row):
                        start, end = offsets[a + w][t]
                        if seq[t] == 1 and end > start:
                            seen.setdefault((start, end), []).append(float(p))
        sums = [0.0] * len(sentences)
        counts = [0] * len(sentences)
        for (start, _), ps in seen.items():
            j = _sentence_at(spans, start)
            if j is not None:
                sums[j] += sum(ps) / len(ps)
                counts[j] += 1
        return [sums[j] / counts[j] if counts[j] else 1.0 for j in range(len(sentences))]


def _sentence_at(spans: Sequence[tuple[int, int]], char: int) -> int | None:
    """The sentence whose span holds ``char`` (binary search over ordered spans)."""
    lo, hi = 0, len(spans) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        a, b = spans[mid]
        if char < a:
            hi = mid - 1
        elif char >= b:
            lo = mid + 1
        else:
            return mid
    return None
