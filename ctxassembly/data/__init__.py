"""The bundled demo corpus: a small real versioned corpus and a lexical retriever over it.

:func:`load_corpus` reads 423 chunks of 8 Django documents in versions 4.2, 5.1 and 5.2
(see ``ctxassembly/data/README.md``). :class:`DemoRetriever` is plain BM25 (bm25s) over
every version at once, as a naive RAG stack would index a docs site, so its top 40 is
full of the same paragraph in three versions, old release notes and near misses.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from ctxassembly.errors import MissingExtraError

__all__ = ["SAMPLE_QUESTIONS", "DemoRetriever", "load_corpus", "retriever"]

SAMPLE_QUESTIONS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    # (question, the right answer string, answers that are right for another version)
    (
        "What is the default iteration count of the PBKDF2 password hasher in Django 5.1?",
        "870,000",
        ("1,000,000", "600,000"),
    ),
    (
        "Which PostgreSQL versions does Django support?",
        "PostgreSQL 14 and higher",
        ("PostgreSQL 13 and higher", "PostgreSQL 12 and higher"),
    ),
    ("What is the oldest SQLite version that Django 4.2 supports?", "SQLite 3.21.0", ("SQLite 3.31.0",)),
)


@lru_cache(maxsize=1)
def load_corpus() -> tuple[dict[str, Any], ...]:
    """The demo corpus: one dict per chunk, with the benchmark corpus's field names."""
    path = resources.files("ctxassembly") / "data" / "django_demo.jsonl"
    with path.open(encoding="utf-8") as f:
        return tuple(json.loads(line) for line in f if line.strip())


@dataclass
class DemoRetriever:
    """BM25 over ``section + text`` of every chunk, all versions in one index."""

    corpus: tuple[dict[str, Any], ...]

    def __post_init__(self) -> None:
        try:
            import bm25s
        except ImportError as e:  # the demo's retriever is part of the cli extra
            raise MissingExtraError("bm25s", "cli") from e

        self._bm25 = bm25s
        texts = [f"{c['section']}\n\n{c['text']}" for c in self.corpus]
        self._index = bm25s.BM25(k1=1.5, b=0.75)
        self._index.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)

    def retrieve(self, question: str, k: int = 40) -> list[dict[str, Any]]:
        """The top ``k`` chunks for ``question``, best first, each with a ``score``."""
        tokens = self._bm25.tokenize([question], stopwords="en", show_progress=False)
        docs, scores = self._index.retrieve(tokens, k=min(k, len(self.corpus)), show_progress=False)
        return [
            {**self.corpus[int(i)], "score": round(float(s), 4), "retriever": "bm25"}
            for i, s in zip(docs[0], scores[0], strict=True)
        ]


@lru_cache(maxsize=1)
def retriever() -> DemoRetriever:
    """The demo retriever over the bundled corpus (built once)."""
    return DemoRetriever(load_corpus())
