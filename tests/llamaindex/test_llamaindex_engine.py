"""The postprocessor inside real LlamaIndex engines over the demo corpus.

A real ``VectorStoreIndex`` with real MiniLM embeddings (built once, conftest.py), real
query and chat engines and response synthesizers; only the LLM is LlamaIndex's
``MockLLM``, because no real LLM can run here. MockLLM echoes its prompt, which lets the
tests read exactly what the LLM was given.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from llama_index.core import VectorStoreIndex
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import MetadataMode, NodeWithScore

from ctxassembly.data import load_corpus
from ctxassembly.tokens import get_counter
from llamaindex_ctxassembly import ContextAssemblyPostprocessor
from tests.llamaindex.conftest import Collect

pytestmark = pytest.mark.integration

BUDGET = 1500
NAMED = "What is the oldest SQLite version that Django 4.2 supports?"
UNNAMED = "Which PostgreSQL versions does Django support?"
CORPUS = {r["id"]: r for r in load_corpus()}


@pytest.fixture
def postprocessor() -> ContextAssemblyPostprocessor:
    return ContextAssemblyPostprocessor(budget=BUDGET)


@pytest.fixture
def engine(demo_index: VectorStoreIndex, mock_llm: MockLLM, postprocessor: ContextAssemblyPostprocessor) -> Any:
    return demo_index.as_query_engine(similarity_top_k=40, llm=mock_llm, node_postprocessors=[postprocessor])


def llm_view(nodes: list[NodeWithScore]) -> str:
    """What the stock synthesizers put into the prompt for these nodes."""
    return "\n\n".join(n.node.get_content(metadata_mode=MetadataMode.LLM) for n in nodes)


def check_context(nodes: list[NodeWithScore], version: str) -> None:
    assert nodes
    texts = [n.node.get_content() for n in nodes]
    assert len(set(texts)) == len(texts), "duplicate texts reached the LLM"
    assert {n.node.metadata["version"] for n in nodes} == {version}
    assert get_counter()(llm_view(nodes)) <= BUDGET
    for i, n in enumerate(nodes):
        assert n.node.node_id in CORPUS
        record = CORPUS[n.node.node_id]
        assert n.node.metadata["version"] == record["version"]
        text = n.node.get_content()
        if "assembly_merged_from" not in n.node.metadata and "[…]" not in text:  # not merged, not excerpted
            assert text == record["text"]
        view = n.node.get_content(metadata_mode=MetadataMode.LLM)
        assert view.startswith(
            f"cite: {i + 1}\ntitle: {record['title']}\nsection: {record['section']}\n"
            f"version: {version}\nstatus: current\n\n"
        )
        assert "assembly_" not in view


def test_query_naming_a_version_gets_only_that_version(
    engine: Any, postprocessor: ContextAssemblyPostprocessor, collector: Collect
) -> None:
    response = engine.query(NAMED)
    check_context(response.source_nodes, "4.2")
    report = postprocessor.last_report
    assert report.target_version == "4.2"
    assert len(report.decisions) == 40
    assert report.reasons["other_version"] > 0
    # the labels reached the LLM: MockLLM echoes the prompt the synthesizer built
    assert "version: 4.2\nstatus: current" in str(response)
    assert "version: 5.2" not in str(response)
    [event] = collector.events
    assert event.node_ids == [n.node.node_id for n in response.source_nodes]
    assert event.report["target_version"] == "4.2"
    assert len(event.report["decisions"]) == 40
    assert event.report["reasons"] == dict(report.reasons)


async def test_async_query_naming_no_version_gets_the_latest(
    engine: Any, postprocessor: ContextAssemblyPostprocessor, collector: Collect
) -> None:
    response = await engine.aquery(UNNAMED)
    check_context(response.source_nodes, "5.2")
    assert postprocessor.last_report.target_version == "5.2"
    [event] = collector.events
    assert event.node_ids == [n.node.node_id for n in response.source_nodes]


def test_retriever_query_engine_keeps_ids_and_does_not_mutate(
    demo_index: VectorStoreIndex, mock_llm: MockLLM, postprocessor: ContextAssemblyPostprocessor
) -> None:
    retriever = demo_index.as_retriever(similarity_top_k=40)
    nodes = retriever.retrieve(NAMED)
    snapshot = copy.deepcopy(nodes)
    out = postprocessor.postprocess_nodes(nodes, query_str=NAMED)
    assert [n.model_dump() for n in nodes] == [n.model_dump() for n in snapshot]
    assert {n.node.node_id for n in out} <= {n.node.node_id for n in nodes}
    kept = {d.id for d in postprocessor.last_report.kept}
    assert kept == {n.node.node_id for n in out}
    by_id = {n.node.node_id: n for n in nodes}
    for n in out:
        assert n.node is not by_id[n.node.node_id].node
        assert n.node.metadata["assembly_retriever_score"] == by_id[n.node.node_id].score
    # the same postprocessor inside a hand-built RetrieverQueryEngine
    engine = RetrieverQueryEngine.from_args(retriever, llm=mock_llm, node_postprocessors=[postprocessor])
    response = engine.query(NAMED)
    assert [n.node.node_id for n in response.source_nodes] == [n.node.node_id for n in out]


@pytest.fixture
def chat(demo_index: VectorStoreIndex, mock_llm: MockLLM, postprocessor: ContextAssemblyPostprocessor) -> Any:
    return demo_index.as_chat_engine(
        chat_mode="context", llm=mock_llm, similarity_top_k=40, node_postprocessors=[postprocessor]
    )


def test_chat_engine(chat: Any, postprocessor: ContextAssemblyPostprocessor) -> None:
    response = chat.chat(UNNAMED)
    check_context(response.source_nodes, "5.2")
    assert "version: 5.2\nstatus: current" in str(response)  # MockLLM echoes the system prompt with the context
    assert postprocessor.last_report.target_version == "5.2"


async def test_chat_engine_async(chat: Any, postprocessor: ContextAssemblyPostprocessor, collector: Collect) -> None:
    response = await chat.achat(NAMED)
    check_context(response.source_nodes, "4.2")
    assert "version: 4.2\nstatus: current" in str(response)
    assert postprocessor.last_report.target_version == "4.2"
    [event] = collector.events
    assert event.node_ids == [n.node.node_id for n in response.source_nodes]
