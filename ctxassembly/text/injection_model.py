"""Instruction-like sentences found by a learned linear model (numpy only).

The rules of :mod:`ctxassembly.text.injection` are precise on the shapes they were
written for; text that does the same thing in another grammatical shape, another
language or another channel passes them. This model is the second net: a logistic
regression over hashed character n-grams (3 to 5 characters of the lower-cased text,
punctuation folded to spaces, so "ignor", "nore ", "anwei" carry across inflections and
languages) plus the rules' own verdict on the sentence as a signal. It is trained on a
labelled set of instruction-like text in many families, styles and languages, and of
real documentation sentences that talk about prompts, passwords, instructions and
warnings (``benchmarks/injection_data.py`` builds it, ``benchmarks/injection_train.py``
trains it and prints the leave-one-family-out table).

The weights ship with the package (``ctxassembly/data/injection_model.npz``, float16);
scoring is a gather and a segment sum over the n-gram ids of a whole batch of texts: a
few numpy operations per call, whatever the number of chunks. A sentence is flagged when
its probability (or that of the pair it forms with its neighbour) reaches the model's
threshold, chosen on the dev corpora for a false-flag rate per chunk of at most 0.1%.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt

__all__ = [
    "DIM",
    "NGRAMS",
    "Detector",
    "LinearModel",
    "SentenceClassifier",
    "builtin",
    "featurize",
    "sentence_bounds",
]

#: hashed feature space (2**18 ids: collisions stay rare for a few hundred thousand n-grams)
_BITS = 18
DIM = 1 << _BITS
#: the character n-gram lengths
NGRAMS = (3, 4, 5)
_CACHE_SIZE = 16384  # texts whose spans are kept (the rules' cache holds as many)
#: fewer words than this are never flagged by the model: an instruction needs a verb and
#: what it acts on, and a fragment (a reST label, a bullet of one literal, a heading) has
#: too few n-grams for its score to mean anything
MIN_WORDS = 5
#: the chunk-level false-flag rate the shipped threshold was chosen for (per dev corpus)
TARGET_FALSE_FLAGS = 0.001
_MULT = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: the top bits of h * MULT
_BASE = np.uint64(1_000_003)
_SPACE = 32
# ASCII: letters and digits lower-cased, everything else a space (non-ASCII code points stay)
_ASCII = np.array(
    [c + 32 if 65 <= c <= 90 else c if (48 <= c <= 57 or 97 <= c <= 122) else _SPACE for c in range(128)],
    dtype=np.uint64,
)
# between the texts of a batch, and around each: as many line breaks as the longest n-gram
# less one, so that no n-gram joins two texts and each text is scored as it is alone
_SEP = "\n" * (max(NGRAMS) - 1)

# the weak signals, one feature each: the rules' verdict on the sentence (second person,
# model nouns and the like are n-grams already: " you ", " ai ", "assis")
SIGNALS = ("rules",)

_END = np.zeros(128, dtype=bool)
_END[[ord(c) for c in ".!?"]] = True
_WHITE = np.zeros(128, dtype=bool)
_WHITE[[ord(c) for c in " \t\n\r"]] = True


def _starts(raw: npt.NDArray[np.uint32]) -> npt.NDArray[np.bool_]:
    """Where a sentence starts: after ``.``, ``!`` or ``?`` and a space, after a blank
    line, at a line that opens with ``#`` or ``.`` (a heading, a comment, a directive),
    and at the first character. Vectorised: a few array operations for a whole batch."""
    n = raw.size
    starts = np.zeros(n, dtype=bool)
    if n == 0:
        return starts
    starts[0] = True
    a = np.where(raw < 128, raw, 0).astype(np.intp)
    starts[1:] |= (_END[a[:-1]] & _WHITE[a[1:]]) | ((a[:-1] == 10) & (a[1:] == 10))
    nl = np.flatnonzero(a[:-1] == 10) + 1  # the first character of each line
    starts[nl[(a[nl] == 35) | (a[nl] == 46)]] = True
    return starts


def sentence_bounds(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence of ``text`` that is not blank, in order."""
    first = np.flatnonzero(_starts(_raw(text))).tolist()
    return [(s, e) for s, e in zip(first, [*first[1:], len(text)], strict=True) if text[s:e].strip()]


def _codes(cp: npt.NDArray[np.uint32]) -> npt.NDArray[np.uint64]:
    """The code points ``cp`` lower-cased (position for position), every character that
    is neither a letter nor a digit a space."""
    out = _ASCII[np.minimum(cp, 127)]
    wide = cp >= 128
    if wide.any():
        uniq, inverse = np.unique(cp[wide], return_inverse=True)
        out[wide] = np.array([_fold(int(c)) for c in uniq], dtype=np.uint64)[inverse]
    return out


@lru_cache(maxsize=4096)
def _fold(code: int) -> int:
    ch = chr(code)
    if not ch.isalnum():
        return _SPACE
    lower = ch.lower()
    return ord(lower) if len(lower) == 1 else code


def _raw(text: str) -> npt.NDArray[np.uint32]:
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)


def _grams(cp: npt.NDArray[np.uint64]) -> list[tuple[int, npt.NDArray[np.bool_], npt.NDArray[np.int64]]]:
    """Per n-gram length the text is long enough for: the length, which positions start an
    n-gram worth counting (not two spaces), and the hashed id of each position's n-gram."""
    n = cp.size
    out = []
    h = np.zeros(n, dtype=np.uint64)
    space = cp == _SPACE
    single = np.ones(n, dtype=bool)
    single[:-1] = ~(space[:-1] & space[1:])  # not two spaces in a row
    for k in range(min(max(NGRAMS), n)):
        m = n - k  # how many n-grams of length k + 1
        h[:m] = h[:m] * _BASE + cp[k:]
        if k + 1 not in NGRAMS:
            continue
        keep = single[:m] if k else np.ones(m, dtype=bool)
        ids = ((h[:m] + np.uint64(k + 1)) * _MULT) >> np.uint64(64 - _BITS)
        out.append((k + 1, keep, ids))
    return out


def featurize(text: str | npt.NDArray[np.uint32]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """``(positions, ids)`` of the hashed n-grams of ``text`` worth counting."""
    cp = _codes(_raw(text) if isinstance(text, str) else text)
    pos_parts, id_parts = [], []
    for _, keep, ids in _grams(cp):
        idx = np.flatnonzero(keep)
        pos_parts.append(idx)
        id_parts.append(ids[idx].astype(np.int64))
    if not pos_parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(pos_parts).astype(np.int64), np.concatenate(id_parts)


def signals(
    text: str,
    first: npt.NDArray[np.int64],
    row_of: npt.NDArray[np.int64],
    rule_spans: Sequence[tuple[int, int, str]] = (),
) -> npt.NDArray[np.float32]:
    """One row of weak signals per sentence (see :data:`SIGNALS`): ``first`` the sentence
    starts, ``row_of`` the sentence of each character."""
    out = np.zeros((first.size, len(SIGNALS)), dtype=np.float32)
    if first.size == 0:
        return out
    for s, e, _ in rule_spans:
        out[row_of[s] : row_of[max(s, e - 1)] + 1, 0] = 1.0
    return out


@dataclass(frozen=True)
class LinearModel:
    """Weights of the linear model: one per hashed n-gram id, one per signal, a bias, and
    the probability from which a sentence is flagged."""

    weights: npt.NDArray[np.float32]
    signal_weights: npt.NDArray[np.float32]
    bias: float
    threshold: float
    # spans by (text, rule spans): retrieved chunks repeat across calls, as the rules' cache knows
    _cache: dict[tuple[str, tuple[tuple[int, int, str], ...]], tuple[tuple[int, int, str], ...]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        # the shipped model travels as a reference to itself (an assembler pickles small),
        # any other as its weights; the span cache never travels
        if self is builtin():
            return (builtin, ())
        return (LinearModel, (self.weights, self.signal_weights, self.bias, self.threshold))

    def clear(self) -> None:
        """Forget the spans found so far (the next call sees its texts for the first time)."""
        self._cache.clear()

    @classmethod
    def load(cls, path: str | Path) -> LinearModel:
        with np.load(path) as z:
            return cls(
                z["weights"].astype(np.float32),
                z["signal_weights"].astype(np.float32),
                float(z["bias"]),
                float(z["threshold"]),
            )

    def save(self, path: str | Path) -> None:
        np.savez_compressed(
            path,
            weights=self.weights.astype(np.float16),
            signal_weights=self.signal_weights.astype(np.float32),
            bias=np.float32(self.bias),
            threshold=np.float32(self.threshold),
        )

    def _logits(
        self, text: str, rule_spans: Sequence[tuple[int, int, str]], breaks: Sequence[int] = ()
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """``(starts, single, pair)``: where each sentence starts, the logit of each
        sentence alone and of each sentence with the next (``-inf`` across a text break:
        ``breaks`` are the offsets where the texts of a batch start)."""
        raw = _raw(text)
        starts = _starts(raw)
        if len(breaks):
            starts[np.asarray(breaks)] = True  # each text of a batch starts a sentence
        first = np.flatnonzero(starts)
        if first.size == 0:
            return first, np.zeros(0), np.zeros(0)
        total = np.zeros(raw.size, dtype=np.float32)
        count = np.zeros(raw.size, dtype=np.float32)
        codes = _codes(raw)
        for _, keep, ids in _grams(codes):
            m = ids.size
            total[:m] += self.weights[ids] * keep
            count[:m] += keep
        t, n = np.add.reduceat(total, first), np.add.reduceat(count, first)
        word_start = np.zeros(raw.size, dtype=np.float32)
        word_start[0] = codes[0] != _SPACE
        word_start[1:] = (codes[1:] != _SPACE) & (codes[:-1] == _SPACE)
        words = np.add.reduceat(word_start, first)
        sig = signals(text, first, np.cumsum(starts) - 1, rule_spans) @ self.signal_weights
        single = self.bias + t / np.sqrt(np.maximum(n, 1)) + sig
        single[words < MIN_WORDS] = -np.inf
        pair = np.full(first.size, -np.inf)
        if first.size > 1:
            pair[:-1] = self.bias + (t[:-1] + t[1:]) / np.sqrt(np.maximum(n[:-1] + n[1:], 1))
            pair[:-1] += np.maximum(sig[:-1], sig[1:])
            pair[:-1][(words[:-1] + words[1:]) < MIN_WORDS] = -np.inf
            if len(breaks):
                owner = np.searchsorted(np.asarray(breaks), first, side="right")
                pair[:-1][owner[:-1] != owner[1:]] = -np.inf
        return first, single, pair

    def probabilities(self, texts: Sequence[str]) -> npt.NDArray[np.float64]:
        """The highest probability of any sentence or pair of sentences, per text."""
        out = np.zeros(len(texts))
        for i, text in enumerate(texts):
            _, single, pair = self._logits(_SEP + text + _SEP, (), [len(_SEP)])
            if single.size:
                out[i] = 1.0 / (1.0 + np.exp(-max(single.max(), pair.max())))
        return out

    def spans(self, text: str, rule_spans: Sequence[tuple[int, int, str]] = ()) -> tuple[tuple[int, int, str], ...]:
        """Spans ``(start, end, "learned")`` of the sentences the model flags."""
        return self.spans_many([text], [rule_spans])[0]

    def spans_many(
        self, texts: Sequence[str], rule_spans: Sequence[Sequence[tuple[int, int, str]]] | None = None
    ) -> list[tuple[tuple[int, int, str], ...]]:
        """:meth:`spans` for each of ``texts``, scored in one pass (a few numpy operations
        for the whole batch instead of a few per text). A sentence is flagged when its own
        probability reaches the threshold; two neighbours are flagged together when their
        pair reaches it and neither does alone (an instruction split over two sentences)."""
        if not texts:
            return []
        given = [tuple(r) for r in rule_spans] if rule_spans is not None else [() for _ in texts]
        keys = list(zip(texts, given, strict=True))
        missing = [i for i, k in enumerate(keys) if k not in self._cache]
        if missing:
            if len(self._cache) > _CACHE_SIZE:
                self._cache.clear()
            fresh = self._spans_many([texts[i] for i in missing], [given[i] for i in missing])
            self._cache.update(zip([keys[i] for i in missing], fresh, strict=True))
        return [self._cache[k] for k in keys]

    def _spans_many(
        self, texts: Sequence[str], rule_spans: Sequence[Sequence[tuple[int, int, str]]]
    ) -> list[tuple[tuple[int, int, str], ...]]:
        offsets, at = [], len(_SEP)
        for text in texts:
            offsets.append(at)
            at += len(text) + len(_SEP)
        big = _SEP + _SEP.join(texts) + _SEP
        shifted = [(offsets[t] + s, offsets[t] + e, c) for t, spans in enumerate(rule_spans or ()) for s, e, c in spans]
        first, single, pair = self._logits(big, shifted, offsets)
        cut = float(np.log(self.threshold / (1.0 - self.threshold)))
        hit = single >= cut
        rows = set(np.flatnonzero(hit).tolist())
        for r in np.flatnonzero((pair >= cut) & ~hit & ~np.roll(hit, -1)).tolist():
            rows.update((r, r + 1))
        out: list[list[tuple[int, int, str]]] = [[] for _ in texts]
        ends = [*first[1:].tolist(), len(big)]
        for row in sorted(rows):
            s = int(first[row])
            t = bisect_right(offsets, s) - 1
            lo, hi = s - offsets[t], min(ends[row] - offsets[t], len(texts[t]))
            if texts[t][lo:hi].strip():
                out[t].append((lo, hi, "learned"))
        return [tuple(x) for x in out]


@lru_cache(maxsize=1)
def builtin() -> LinearModel:
    """The model shipped with the package (loaded once)."""
    with resources.as_file(resources.files("ctxassembly.data") / "injection_model.npz") as path:
        return LinearModel.load(path)


class Detector(Protocol):
    """What the safety stage asks a learned detector: flagged sentence spans per text."""

    def spans_many(
        self, texts: Sequence[str], rule_spans: Sequence[Sequence[tuple[int, int, str]]] | None = None
    ) -> list[tuple[tuple[int, int, str], ...]]: ...


@dataclass(frozen=True)
class SentenceClassifier:
    """A detector from any sentence classifier: ``score(sentences) -> probabilities`` (one
    per sentence, in [0, 1]); a sentence is flagged from ``threshold`` on. The sentences
    are cut as the shipped model cuts them (:func:`sentence_bounds`)."""

    score: Callable[[list[str]], Sequence[float]]
    threshold: float = 0.5

    def spans_many(
        self, texts: Sequence[str], rule_spans: Sequence[Sequence[tuple[int, int, str]]] | None = None
    ) -> list[tuple[tuple[int, int, str], ...]]:
        bounds = [sentence_bounds(t) for t in texts]
        flat = [t[s:e].strip() for t, b in zip(texts, bounds, strict=True) for s, e in b]
        if not flat:
            return [() for _ in texts]
        probs = [float(p) for p in self.score(flat)]
        if len(probs) != len(flat):
            raise ValueError(f"injection_model: expected {len(flat)} scores, one per sentence, got {len(probs)}")
        out, i = [], 0
        for b in bounds:
            out.append(
                tuple(
                    (s, e, "learned") for (s, e), p in zip(b, probs[i : i + len(b)], strict=True) if p >= self.threshold
                )
            )
            i += len(b)
        return out


def combine(
    rules: Sequence[tuple[int, int, str]], learned: Sequence[tuple[int, int, str]]
) -> tuple[tuple[int, int, str], ...]:
    """The rules' spans and the learned ones that overlap none of them, in order (where
    both found a sentence, the rules' class names it)."""
    extra = [(s, e, c) for s, e, c in learned if not any(s < re_ and rs < e for rs, re_, _ in rules)]
    if not extra:
        return tuple(rules)
    return tuple(sorted([*rules, *extra]))
