"""Small text helpers shared by the stages: normalisation, shingles, facts, tokens."""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

__all__ = [
    "Lexical",
    "facts",
    "jaccard",
    "normalize",
    "shingles",
    "words",
]

_WS = re.compile(r"\s+")
_WORD = re.compile(r"\w+")


@lru_cache(maxsize=16384)
def normalize(text: str) -> str:
    """NFKC, case-folded, whitespace collapsed: the key for exact duplicates."""
    return _WS.sub(" ", unicodedata.normalize("NFKC", text)).strip().casefold()


def words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


@lru_cache(maxsize=16384)
def word_bag(text: str) -> Counter[str]:
    """Word counts of ``text`` (cached: candidates repeat across calls; do not mutate)."""
    return Counter(words(text))


@lru_cache(maxsize=16384)
def shingles(text: str, k: int = 5) -> frozenset[int]:
    """Hashed word ``k``-shingles of ``text`` (a text shorter than k is one shingle)."""
    w = words(normalize(text))
    if len(w) < k:
        return frozenset([hash(tuple(w))]) if w else frozenset()
    return frozenset(hash(tuple(w[i : i + k])) for i in range(len(w) - k + 1))


def jaccard(a: frozenset[int], b: frozenset[int], at_least: float = 0.0) -> float:
    """Jaccard similarity; returns 0.0 early when the sizes alone rule out ``at_least``."""
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    small, large = sorted((len(a), len(b)))
    if small < at_least * large:  # |a & b| <= small and |a | b| >= large
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


# What must not be merged away: two passages that differ in one of these say different
# things, however similar the rest of their words are.
_NUMBER = re.compile(
    r"(?<![\w.])[-+]?\d[\d,_]*(?:\.\d+)*(?:\s?(?:%|[kmgt]i?b|bytes?|ms|s|sec(?:onds?)?|"
    r"min(?:utes?)?|h(?:ours?)?|days?|weeks?|years?|chars?|characters?|x))?(?![\w])",
    re.IGNORECASE,
)
_NEGATION = re.compile(
    r"\b(?:not|no|never|none|cannot|can't|don't|doesn't|isn't|aren't|won't|without|"
    r"deprecated|removed|unsupported|no longer)\b",
    re.IGNORECASE,
)
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_DATE = re.compile(
    rf"\b(?:\d{{4}}-\d{{2}}-\d{{2}}|{_MONTH}\s+\d{{1,2}},?\s+\d{{4}}|\d{{1,2}}\s+{_MONTH}\s+\d{{4}})\b", re.IGNORECASE
)


@lru_cache(maxsize=16384)
def facts(text: str) -> frozenset[str]:
    """Numbers (with units), versions, dates and negations in ``text``, normalised."""
    t = unicodedata.normalize("NFKC", text)
    found = {"date:" + _WS.sub(" ", m.group(0).lower()) for m in _DATE.finditer(t)}
    found |= {"num:" + _WS.sub("", m.group(0).lower()).replace(",", "").replace("_", "") for m in _NUMBER.finditer(t)}
    negations = Counter(_WS.sub(" ", m.group(0).lower()) for m in _NEGATION.finditer(t))
    found |= {f"neg:{w}:{n}" for w, n in negations.items()}
    return frozenset(found)


_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "how",
        "i",
        "if",
        "in",
        "is",
        "it",
        "its",
        "my",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "was",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
    ]
)


def query_terms(text: str) -> list[str]:
    return [w for w in words(text) if w not in _STOP]


class Lexical:
    """Okapi BM25 of one query over a small set of texts (the candidates themselves).

    Inverse document frequencies come from the texts being scored, which is what makes
    a term that every candidate shares (the product name) weigh nothing.
    """

    def __init__(self, texts: Sequence[str], *, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.bags = [word_bag(t) for t in texts]
        self.lengths = [sum(bag.values()) for bag in self.bags]
        self.avg = (sum(self.lengths) / len(self.lengths)) if self.lengths else 1.0

    def idf(self, term: str) -> float:
        n = len(self.bags)
        f = sum(1 for bag in self.bags if term in bag)
        return math.log(1 + (n - f + 0.5) / (f + 0.5))

    def scores(self, query: str) -> list[float]:
        # document frequencies only for the query's terms: a query has a handful, the
        # candidates thousands
        weights = {t: self.idf(t) for t in set(query_terms(query))}
        out = []
        for bag, length in zip(self.bags, self.lengths, strict=True):
            norm = self.k1 * (1 - self.b + self.b * length / (self.avg or 1.0))
            s = 0.0
            for t, w in weights.items():
                f = bag.get(t)
                if f:
                    s += w * f * (self.k1 + 1) / (f + norm)
            out.append(s)
        return out
