"""The compressor inside real LangChain machinery: an InMemoryVectorStore over the demo corpus
with real MiniLM embeddings, ContextualCompressionRetriever, DocumentCompressorPipeline with
EmbeddingsRedundantFilter, and the LCEL chain with a fake chat model."""

from __future__ import annotations

import copy
import warnings
from typing import Any

import pytest
from langchain_classic.retrievers import ContextualCompressionRetriever
from langchain_classic.retrievers.document_compressors import DocumentCompressorPipeline
from langchain_core.documents import Document
from langchain_core.language_models import FakeListChatModel
from langchain_core.vectorstores import InMemoryVectorStore

from ctxassembly.render import parse
from langchain_ctxassembly import REPORT_EVENT, ContextAssemblyCompressor, render_documents
from langchain_ctxassembly.chains import build_chain

pytestmark = pytest.mark.integration

BUDGET = 1500
CASES = [
    # (question, the only version allowed in the output)
    ("What is the oldest SQLite version that Django 4.2 supports?", "4.2"),
    ("Which template does the default form renderer use in Django 4.2?", "4.2"),
    ("Which PostgreSQL versions does Django support?", "5.2"),  # no version named: the latest
]


def _retriever(store: InMemoryVectorStore) -> Any:
    return store.as_retriever(search_kwargs={"k": 40})


def _check_output(out: list[Document], version: str, compressor: ContextAssemblyCompressor, count_tokens: Any) -> None:
    assert out, "the assembler kept nothing"
    texts = [d.page_content for d in out]
    assert len(texts) == len(set(texts)), "exact duplicate texts in the output"
    assert {d.metadata["version"] for d in out} == {version}
    context = compressor.format_documents(out)
    assert count_tokens(context) <= BUDGET
    report = compressor.last_report
    assert report is not None
    assert [d.id for d in out] == [k.id for k in report.kept]  # Document.id preserved, in context order
    assert all(d.id is not None and d.id == d.metadata["assembly_chunk_id"] for d in out)


def _check_event(collector: Any, n_inputs: int) -> None:
    ((name, data, run_id),) = collector.events
    assert name == REPORT_EVENT
    assert len(data["decisions"]) == n_inputs
    assert data["tokens_after"] <= BUDGET
    # tied to the outer ContextualCompressionRetriever run, as dispatch_custom_event would
    outer = [rid for rid, parent in collector.retriever_runs if parent is None]
    assert run_id == outer[0]


@pytest.mark.parametrize(("question", "version"), CASES)
def test_contextual_compression_retriever_sync(
    vector_store: InMemoryVectorStore, count_tokens: Any, collector: Any, question: str, version: str
) -> None:
    stored = copy.deepcopy(vector_store.store)
    compressor = ContextAssemblyCompressor(budget=BUDGET)
    retriever = ContextualCompressionRetriever(base_compressor=compressor, base_retriever=_retriever(vector_store))
    out = retriever.invoke(question, config={"callbacks": [collector]})
    _check_output(out, version, compressor, count_tokens)
    _check_event(collector, 40)
    assert vector_store.store == stored  # the store's documents were not touched


async def test_contextual_compression_retriever_async(
    vector_store: InMemoryVectorStore, count_tokens: Any, collector: Any
) -> None:
    question, version = CASES[0]
    compressor = ContextAssemblyCompressor(budget=BUDGET)
    retriever = ContextualCompressionRetriever(base_compressor=compressor, base_retriever=_retriever(vector_store))
    out = await retriever.ainvoke(question, config={"callbacks": [collector]})
    _check_output(out, version, compressor, count_tokens)
    _check_event(collector, 40)
    assert out == retriever.invoke(question)  # the async path assembles exactly as the sync one


def test_input_documents_are_not_mutated(vector_store: InMemoryVectorStore) -> None:
    question = CASES[0][0]
    docs = _retriever(vector_store).invoke(question)
    before = copy.deepcopy(docs)
    out = ContextAssemblyCompressor(budget=BUDGET).compress_documents(docs, question)
    assert docs == before
    assert all("assembly_position" not in d.metadata for d in docs)
    assert all("assembly_position" in d.metadata for d in out)


@pytest.fixture(scope="module")
def redundant_filter(embeddings: Any) -> Any:
    # langchain-community warns on import that it is being sunset (DeprecationWarning
    # attributed to importlib, so pyproject's module filters miss it); the filter is still
    # the stock LangChain transformer users pair with compressors.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="`langchain-community` is being sunset", category=DeprecationWarning)
        from langchain_community.document_transformers import EmbeddingsRedundantFilter
    return EmbeddingsRedundantFilter(embeddings=embeddings, similarity_threshold=0.95)


@pytest.mark.parametrize("first", ["filter", "compressor"])
def test_inside_document_compressor_pipeline(
    vector_store: InMemoryVectorStore, count_tokens: Any, collector: Any, redundant_filter: Any, first: str
) -> None:
    question, version = CASES[0]
    compressor = ContextAssemblyCompressor(budget=BUDGET)
    steps = [redundant_filter, compressor] if first == "filter" else [compressor, redundant_filter]
    pipeline = DocumentCompressorPipeline(transformers=steps)
    retriever = ContextualCompressionRetriever(base_compressor=pipeline, base_retriever=_retriever(vector_store))
    out = retriever.invoke(question, config={"callbacks": [collector]})
    assert out
    assert {d.metadata["version"] for d in out} == {version}
    assert count_tokens(compressor.format_documents(out)) <= BUDGET
    assert all(d.metadata["assembly_status"] == "current" for d in out)
    ((name, data, _),) = collector.events  # the pipeline hands its callbacks on
    assert name == REPORT_EVENT
    base_docs = _retriever(vector_store).invoke(question)
    seen = len(redundant_filter.transform_documents(base_docs)) if first == "filter" else len(base_docs)
    assert len(data["decisions"]) == seen  # the report covers what reached the compressor


def _prompt_checks(prompt_text: str, question: str, version: str, count_tokens: Any) -> None:
    assert prompt_text.startswith("<documents>\n<document ")
    assert prompt_text.endswith(f"Question: {question}")
    context = prompt_text[len("<documents>\n") : prompt_text.index("\n</documents>")]
    blocks = parse(context)
    assert blocks
    assert {b["version"] for b in blocks} == {version}
    assert count_tokens(context) <= BUDGET
    assert prompt_text.index("</documents>") < prompt_text.rindex("Question:")


def test_lcel_chain_documents_first_question_last(
    vector_store: InMemoryVectorStore, count_tokens: Any, collector: Any
) -> None:
    question, version = CASES[1]
    # FakeListChatModel stands in for the LLM: no remote model can be reached from here
    llm = FakeListChatModel(responses=["django/forms/default.html (fake answer)"])
    chain = build_chain(_retriever(vector_store), llm, ContextAssemblyCompressor(budget=BUDGET))
    answer = chain.invoke(question, config={"callbacks": [collector]})
    assert answer.content == "django/forms/default.html (fake answer)"
    ((message,),) = collector.prompts
    _prompt_checks(message.content, question, version, count_tokens)
    assert [name for name, _, _ in collector.events] == [REPORT_EVENT]


async def test_lcel_chain_async(vector_store: InMemoryVectorStore, count_tokens: Any, collector: Any) -> None:
    question, version = CASES[2]
    llm = FakeListChatModel(responses=["PostgreSQL 14 and higher (fake answer)"])  # no remote LLM here
    chain = build_chain(_retriever(vector_store), llm, ContextAssemblyCompressor(budget=BUDGET))
    answer = await chain.ainvoke(question, config={"callbacks": [collector]})
    assert answer.content == "PostgreSQL 14 and higher (fake answer)"
    ((message,),) = collector.prompts
    _prompt_checks(message.content, question, version, count_tokens)
    assert [name for name, _, _ in collector.events] == [REPORT_EVENT]


async def test_report_event_shows_in_astream_events(vector_store: InMemoryVectorStore) -> None:
    question = CASES[2][0]
    compressor = ContextAssemblyCompressor(budget=BUDGET)
    retriever = ContextualCompressionRetriever(base_compressor=compressor, base_retriever=_retriever(vector_store))
    custom = [e async for e in retriever.astream_events(question, version="v2") if e["event"] == "on_custom_event"]
    assert [e["name"] for e in custom] == [REPORT_EVENT]
    assert custom[0]["data"]["kept"] == len(compressor.last_report.kept)  # type: ignore[union-attr]


def test_retriever_piped_into_render_documents(vector_store: InMemoryVectorStore) -> None:
    question = CASES[0][0]
    compressor = ContextAssemblyCompressor(budget=BUDGET)
    retriever = ContextualCompressionRetriever(base_compressor=compressor, base_retriever=_retriever(vector_store))
    context = (retriever | render_documents).invoke(question)
    kept = compressor.last_report.kept  # type: ignore[union-attr]
    assert [b["id"] for b in parse(context)] == [str(i + 1) for i in range(len(kept))] == [k.cite for k in kept]
