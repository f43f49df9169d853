"""Issue 18 in real LangChain objects: odd metadata is a decision on one document (point 4),
the retriever's score stays the document's score (point 3), splitter neighbours merge (6);
and the compressor behind an EnsembleRetriever (hybrid search, no scores)."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest
from langchain_classic.retrievers import ContextualCompressionRetriever
from langchain_core.documents import Document
from langchain_core.runnables import chain
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_text_splitters import RecursiveCharacterTextSplitter

from ctxassembly import Assembler
from ctxassembly.metadata import ADJACENT_GAP
from langchain_ctxassembly import ContextAssemblyCompressor, to_chunks

pytestmark = pytest.mark.integration

SQLITE = "Django 4.2 supports SQLite 3.21.0 and later; the json1 extension is needed for JSONField."
ODD = [
    # (id, metadata, what the core does with it)
    ("int-title", {"title": 42, "version": "4.2"}, "coerced"),
    ("path-source", {"source": pathlib.Path("/docs/4.2/ref/databases.txt"), "version": "4.2"}, "coerced"),
    ("list-version", {"version": ["4.2"], "title": "Databases"}, "coerced"),
    ("dict-title", {"title": {"en": "Databases"}, "version": "4.2"}, "invalid"),
    ("two-versions", {"version": ["4.2", "5.1"]}, "invalid"),
]


@pytest.fixture(scope="module")
def odd_store(embeddings: Any) -> InMemoryVectorStore:
    store = InMemoryVectorStore(embeddings)
    docs = [Document(id=i, page_content=f"{SQLITE} ({i})", metadata=m) for i, m, _ in ODD]
    docs.append(Document(id="plain", page_content=f"{SQLITE} (plain)", metadata={"version": "4.2"}))
    store.add_documents(docs)
    return store


def test_odd_metadata_is_a_decision_on_that_document_not_a_failed_call(odd_store: InMemoryVectorStore) -> None:
    compressor = ContextAssemblyCompressor(budget=2000, options={"near_threshold": None})
    retriever = ContextualCompressionRetriever(
        base_compressor=compressor, base_retriever=odd_store.as_retriever(search_kwargs={"k": 10})
    )
    out = retriever.invoke("Which SQLite does Django 4.2 need?")
    report = compressor.last_report
    assert report is not None
    fates = {d.id: d for d in report.decisions}
    assert len(fates) == len(ODD) + 1  # every input has its one fate
    for doc_id, _, expected in ODD:
        if expected == "invalid":
            assert (fates[doc_id].stage, fates[doc_id].reason) == ("input", "invalid")
        else:
            assert fates[doc_id].reason == "kept"
    coerced = {(n["id"], n["field"]) for n in report.to_dict()["notes"] if n["event"] == "coerced"}
    assert {("int-title", "title"), ("path-source", "doc_id"), ("list-version", "version")} <= coerced
    kept = {d.id: d for d in out}
    assert kept["int-title"].metadata["assembly_labels"]["title"] == "42"
    assert kept["int-title"].metadata["title"] == 42  # the caller's metadata is carried as it was
    assert fates["dict-title"].detail["field"] == "title"


def _scored_retriever(store: InMemoryVectorStore) -> Any:
    # LangChain's documented way to carry retrieval scores on documents (how-to: "add scores
    # to retriever results"): a chain that writes the relevance score into metadata
    @chain
    def retriever(query: str) -> list[Document]:
        found = store.similarity_search_with_score(query, k=6)  # cosine similarity
        return [Document(id=d.id, page_content=d.page_content, metadata={**d.metadata, "relevance_score": s})
                for d, s in found]  # fmt: skip

    return retriever


def test_the_retrievers_relevance_score_stays_the_documents_score(odd_store: InMemoryVectorStore) -> None:
    question = "Which SQLite does Django 4.2 need?"
    docs = _scored_retriever(odd_store).invoke(question)
    given = {d.id: d.metadata["relevance_score"] for d in docs}
    assert all(s > 0.3 for s in given.values())
    out = ContextAssemblyCompressor(budget=2000).compress_documents(docs, question)
    assert out
    for d in out:
        assert d.metadata["relevance_score"] == given[d.id] == d.metadata["assembly_retriever_score"]
        assert d.metadata["assembly_score"] != d.metadata["relevance_score"]
    # a score cutoff after the compressor still compares the retriever's similarities
    assert [d.id for d in out if d.metadata["relevance_score"] >= 0.3] == [d.id for d in out]

    reverse = ContextAssemblyCompressor(budget=2000, score_from="assembly").compress_documents(docs, question)
    for d in reverse:
        assert d.metadata["relevance_score"] == d.metadata["assembly_score"]
        assert d.metadata["assembly_retriever_score"] == given[d.id]


PAGE = "\n\n".join(
    f"Paragraph {i}. " + " ".join(f"Sentence {i}.{j} says something about database backends." for j in range(6))
    for i in range(8)
)


def test_splitter_neighbours_merge_by_default_and_start_index_keeps_working() -> None:
    splitter = RecursiveCharacterTextSplitter(chunk_size=400, chunk_overlap=0, add_start_index=True)
    docs = splitter.create_documents([PAGE], metadatas=[{"source": "backends.txt", "version": "5.2"}])
    for i, d in enumerate(docs):
        d.id = f"c{i}"
    ends = [d.metadata["start_index"] + len(d.page_content) for d in docs]
    gaps = [b.metadata["start_index"] - end for end, b in zip(ends, docs[1:], strict=False)]
    assert 0 < max(gaps) <= ADJACENT_GAP  # the splitter dropped the whitespace between its chunks
    compressor = ContextAssemblyCompressor(budget=3000, order="reading", options={"max_share": None})
    out = compressor.compress_documents(docs[:3], "database backends")
    assert len(out) == 1
    assert out[0].metadata["assembly_merged_from"] == ["c0", "c1", "c2"]
    assert out[0].metadata["assembly_span"] == [0, docs[2].metadata["start_index"] + len(docs[2].page_content)]
    # the core's own default (gap 0) merges only chunks that touch: these stay apart
    direct = Assembler(order="reading", max_share=None).run("database backends", to_chunks(docs[:3]), budget=3000)
    assert len(direct.chunks) == 3


def test_behind_an_ensemble_retriever(
    vector_store: InMemoryVectorStore, bm25_documents: Any, count_tokens: Any
) -> None:
    # LangChain's hybrid search: EnsembleRetriever fuses a dense and a keyword retriever by
    # reciprocal rank and returns documents without a score; the compressor behind it ranks
    # those by incoming order and the question's words, keeps the budget and cites every kept one.
    from langchain_classic.retrievers import EnsembleRetriever

    @chain
    def keyword(query: str) -> list[Document]:
        return bm25_documents(query, k=10)

    ensemble = EnsembleRetriever(retrievers=[vector_store.as_retriever(search_kwargs={"k": 10}), keyword])
    question = "How do I enable a PostgreSQL connection pool?"
    fused = ensemble.invoke(question)
    compressor = ContextAssemblyCompressor(budget=600)
    out = ContextualCompressionRetriever(base_compressor=compressor, base_retriever=ensemble).invoke(question)
    report = compressor.last_report
    assert report is not None
    assert len(report.decisions) == len(fused)  # every fused document has its one fate
    assert 0 < len(out) < len(fused)
    assert sum(count_tokens(d.page_content) for d in out) <= 600
    assert [d.metadata["assembly_cite"] for d in out] == [str(i) for i in range(1, len(out) + 1)]
    assert {d.metadata["assembly_chunk_id"] for d in out} <= {d.id for d in fused}
    assert any("pool" in d.page_content.lower() for d in out)
