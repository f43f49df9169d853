"""Which ranking signals the model-free pipeline should fuse: score.py pipelines.

Each function is the default pipeline with one relevance setting changed, for
``score.py --pipeline benchmarks/ablation.py:NAME``. Fair use as in adapters.py.
"""

from __future__ import annotations

from typing import Any

from ctxassembly import assemble
from ctxassembly.render import Renderer

_XML = Renderer("xml")


def _run(record: dict[str, Any], budget: int, **options: Any) -> list[dict[str, Any]]:
    tv = record["target_version"] if record.get("version_explicit") else None
    res = assemble(record["question"], record["candidates"], budget=budget, target_version=tv, **options)
    return [{"id": c.id, "text": _XML.block(c, i), "version": c.version} for i, c in enumerate(res.chunks)]


def score_only(record: dict[str, Any], budget: int) -> list[dict[str, Any]]:
    """Rank by the retriever's printed score alone."""
    return _run(record, budget, weights={"score": 1})


def order_only(record: dict[str, Any], budget: int) -> list[dict[str, Any]]:
    """Rank by the retriever's (fused) order alone."""
    return _run(record, budget, weights={"order": 1})


def order_score(record: dict[str, Any], budget: int) -> list[dict[str, Any]]:
    return _run(record, budget, weights={"order": 1, "score": 1})


def order_lexical_score(record: dict[str, Any], budget: int) -> list[dict[str, Any]]:
    return _run(record, budget, weights={"order": 1, "lexical": 1, "score": 1})


def no_subject_versions(record: dict[str, Any], budget: int) -> list[dict[str, Any]]:
    """Default ranking, but release notes of other versions are not treated as off-version."""
    return _run(record, budget, subject_versions=False)


def no_excerpt(record: dict[str, Any], budget: int) -> list[dict[str, Any]]:
    """Default, but large chunks are never cut to their best passages."""
    return _run(record, budget, max_share=None)


def rrf_k10(record: dict[str, Any], budget: int) -> list[dict[str, Any]]:
    return _run(record, budget, rrf_k=10)
