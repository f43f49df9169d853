"""The LangChain and LlamaIndex paths give the core's figures on the Django dev set, and
hold up under concurrency (issues: LangChain/LlamaIndex integration, robustness).

Each record's 40 candidates become framework objects (Documents / NodeWithScore), go
through the adapter, and must come back as exactly the chunks ``assemble`` keeps for
the same fair call (question, candidates, target version only when the question names
it): same ids, same texts, same order, hence the same scores on every metric.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from langchain_core.documents import Document
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from ctxassembly import Assembler, assemble
from langchain_ctxassembly import ContextAssemblyCompressor
from llamaindex_ctxassembly import ContextAssemblyPostprocessor

pytestmark = pytest.mark.integration

BUDGETS = (500, 1000)


@pytest.fixture(scope="module")
def records(dev_data) -> list[dict[str, Any]]:
    return dev_data.records("django")


def _version(record: dict[str, Any]) -> str | None:
    return record["target_version"] if record["version_explicit"] else None


def _documents(record: dict[str, Any]) -> list[Document]:
    return [
        Document(id=c["id"], page_content=c["text"], metadata={k: v for k, v in c.items() if k not in ("id", "text")})
        for c in record["candidates"]
    ]


def _nodes(record: dict[str, Any]) -> list[NodeWithScore]:
    meta_keys = ("doc_id", "title", "section", "version", "retriever")
    return [
        NodeWithScore(
            node=TextNode(
                id_=c["id"],
                text=c["text"],
                metadata={k: c[k] for k in meta_keys},
                start_char_idx=c["start"],
                end_char_idx=c["end"],
            ),
            score=c["score"],
        )
        for c in record["candidates"]
    ]


def _core(record: dict[str, Any], budget: int) -> list[tuple[str, str]]:
    result = assemble(record["question"], record["candidates"], budget=budget, target_version=_version(record))
    return [(c.id, c.text) for c in result.chunks]


@pytest.mark.parametrize("budget", BUDGETS)
def test_langchain_path_keeps_exactly_what_the_core_keeps(records, budget):
    for rec in records:
        compressor = ContextAssemblyCompressor(budget=budget, target_version=_version(rec))
        out = compressor.compress_documents(_documents(rec), rec["question"])
        assert [(d.id, d.page_content) for d in out] == _core(rec, budget), rec["qid"]


@pytest.mark.parametrize("budget", BUDGETS)
def test_llamaindex_path_keeps_exactly_what_the_core_keeps(records, budget):
    for rec in records:
        post = ContextAssemblyPostprocessor(budget=budget, target_version=_version(rec))
        out = post.postprocess_nodes(_nodes(rec), query_bundle=QueryBundle(rec["question"]))
        assert [(n.node.node_id, n.node.get_content()) for n in out] == _core(rec, budget), rec["qid"]


def test_one_hundred_concurrent_tasks_through_both_adapters_equal_sequential(records):
    work = (records * 3)[:100]
    compressor = ContextAssemblyCompressor(budget=600)
    post = ContextAssemblyPostprocessor(budget=600)
    seq_lc = [[d.page_content for d in compressor.compress_documents(_documents(r), r["question"])] for r in work]
    seq_li = [[n.node.get_content() for n in post.postprocess_nodes(_nodes(r), query_str=r["question"])] for r in work]

    async def main() -> tuple[list[list[str]], list[list[str]]]:
        lc = await asyncio.gather(*(compressor.acompress_documents(_documents(r), r["question"]) for r in work))
        li = await asyncio.gather(
            *(post.apostprocess_nodes(_nodes(r), query_bundle=QueryBundle(r["question"])) for r in work)
        )
        return [[d.page_content for d in x] for x in lc], [[n.node.get_content() for n in x] for x in li]

    conc_lc, conc_li = asyncio.run(main())
    assert conc_lc == seq_lc
    assert conc_li == seq_li


def test_model_caches_are_thread_safe(records, minilm):
    assembler = Assembler(reranker=minilm, embedder=minilm)
    work = records[:16]
    sequential = [assembler.run(r["question"], r["candidates"], budget=800).text for r in work]
    fresh = Assembler(reranker=minilm, embedder=minilm)  # a second pipeline sharing the model's cache
    with ThreadPoolExecutor(16) as pool:
        threaded = list(pool.map(lambda r: fresh.run(r["question"], r["candidates"], budget=800).text, work))
    assert threaded == sequential
