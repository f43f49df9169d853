"""ContextAssemblyCompressor on its own: options, caching, metadata facts, events, no mutation."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from langchain_core.documents import Document
from pydantic import ValidationError

from ctxassembly import Assembler
from ctxassembly.errors import ChunkError, ConfigError
from ctxassembly.metadata import ADJACENT_GAP
from langchain_ctxassembly import REPORT_EVENT, ContextAssemblyCompressor, MetadataKeys, to_chunks

pytestmark = pytest.mark.unit

SQLITE_42 = "What is the oldest SQLite version that Django 4.2 supports?"


def test_construction_validates_options() -> None:
    with pytest.raises(ValidationError, match="budget must be a positive int"):
        ContextAssemblyCompressor(budget=0)
    with pytest.raises(ValidationError, match=r"unknown option 'min_scor'; valid options: .*min_score"):
        ContextAssemblyCompressor(budget=100, options={"min_scor": 0.1})
    with pytest.raises(ValidationError, match="set order as a field of the compressor, not in options"):
        ContextAssemblyCompressor(budget=100, options={"order": "edges"})
    with pytest.raises(ValidationError, match="order\n  Input should be 'relevance', 'bookend', 'edges' or 'reading'"):
        ContextAssemblyCompressor(budget=100, order="sideways")  # type: ignore[arg-type]


def test_fields_and_options_become_one_validated_options() -> None:
    compressor = ContextAssemblyCompressor(budget=100, order="edges", options={"near_threshold": 0.5})
    options = compressor.assembler_options()
    assert (options.order, options.format, options.near_threshold, options.reranker) == ("edges", "xml", 0.5, None)

    def reranker(query: str, texts: list[str]) -> list[float]:
        return [float(len(t)) for t in texts]

    variant = compressor.model_copy(update={"reranker": reranker})
    assert variant.assembler_options().reranker is reranker
    assert "rerank" in {s.name for s in variant.assembler.stages}


def test_the_assembler_is_built_once_and_rebuilt_only_for_new_options() -> None:
    compressor = ContextAssemblyCompressor(budget=300)
    first = compressor.assembler
    assert isinstance(first, Assembler)
    compressor.compress_documents([Document(page_content="a")], "q")
    assert compressor.assembler is first
    variant = compressor.model_copy(update={"order": "relevance"})
    assert variant.assembler is not first
    assert variant.assembler.stages[-1].order == "relevance"  # type: ignore[attr-defined]
    assert compressor.assembler is first


def test_fields_are_frozen() -> None:
    compressor = ContextAssemblyCompressor(budget=300)
    with pytest.raises(ValidationError, match="frozen"):
        compressor.budget = 10  # type: ignore[misc]


def test_empty_input_returns_no_documents_and_still_reports(collector: Any) -> None:
    compressor = ContextAssemblyCompressor(budget=300)
    assert compressor.last_report is None
    assert compressor.compress_documents([], "anything", callbacks=[collector]) == []
    assert compressor.last_report is not None
    assert compressor.last_report.decisions == []
    assert [(name, data["kept"], data["dropped"]) for name, data, _ in collector.events] == [(REPORT_EVENT, 0, 0)]


def test_output_facts_ids_and_no_mutation(bm25_documents: Any, count_tokens: Any) -> None:
    docs = bm25_documents(SQLITE_42)
    before = copy.deepcopy(docs)
    compressor = ContextAssemblyCompressor(budget=1200)
    out = compressor.compress_documents(docs, SQLITE_42)
    assert docs == before  # content, metadata and ids of the caller's documents unchanged
    assert all(d.metadata is not b.metadata for d in out for b in docs)
    report = compressor.last_report
    assert report is not None
    assert len(report.decisions) == len(docs)
    assert [d.metadata["assembly_position"] for d in out] == list(range(len(out)))
    assert [d.id for d in out] == [k.id for k in report.kept]  # Document.id preserved, in context order
    for doc in out:
        facts = doc.metadata
        assert doc.metadata["version"] == "4.2" == facts["assembly_labels"]["version"]
        assert facts["assembly_status"] == "current"
        assert facts["assembly_decision"]["fate"] == "kept"
        assert facts["assembly_report"]["target_version"] == "4.2"
        assert facts["assembly_retriever_score"] == next(b.metadata["score"] for b in docs if b.id == doc.id)
    # every drop is inspectable after the call, with its reason
    assert set(report.reasons) <= {"kept", "other_version", "duplicate", "merged", "over_budget", "superseded"}
    assert report.reasons["other_version"] > 0
    assert count_tokens(compressor.format_documents(out)) <= 1200


def test_rendered_output_is_exactly_what_the_assembler_counted(bm25_documents: Any) -> None:
    question = "Which PostgreSQL versions does Django support?"
    docs = bm25_documents(question)
    compressor = ContextAssemblyCompressor(budget=900, order="edges")
    out = compressor.compress_documents(docs, question)
    direct = Assembler(order="edges").run(question, to_chunks(docs), budget=900)
    assert compressor.format_documents(out) == direct.text
    assert {d.metadata["version"] for d in out} == {"5.2"}


def test_adjacent_chunks_merge_and_keep_the_best_parts_id() -> None:
    a, b = "Django 5.2 adds composite primary keys.", " Use CompositePrimaryKey to declare them."
    docs = [
        Document(id="p2", page_content=b, metadata={"source": "5.2.txt", "start_index": len(a), "version": "5.2"}),
        Document(id="p1", page_content=a, metadata={"source": "5.2.txt", "start_index": 0, "version": "5.2"}),
    ]
    # ranked by the incoming order alone, so that "best-ranked" is "first in the input"
    compressor = ContextAssemblyCompressor(budget=300, options={"weights": {"order": 1.0}})
    (out,) = compressor.compress_documents(docs, "composite primary keys")
    facts = out.metadata
    assert out.page_content == a + b
    assert out.id == facts["assembly_chunk_id"] == "p2"  # the best-ranked part (first in the input) names the merge
    assert facts["assembly_merged_from"] == ["p1", "p2"]
    assert facts["assembly_span"] == [0, len(a + b)]


def test_exact_duplicates_collapse_and_are_listed() -> None:
    text = "The default iteration count of PBKDF2 is 870,000 in Django 5.1."
    docs = [Document(id=f"copy-{i}", page_content=text, metadata={"version": "5.1"}) for i in range(3)]
    out = ContextAssemblyCompressor(budget=300).compress_documents(docs, "PBKDF2 iterations")
    assert [d.id for d in out] == ["copy-0"]
    assert out[0].metadata["assembly_duplicates"] == ["copy-1", "copy-2"]


def test_label_policy_keeps_superseded_documents_marked() -> None:
    docs = [
        Document(
            id="new", page_content="PBKDF2 runs 1,000,000 iterations.", metadata={"version": "5.2", "doc_id": "h"}
        ),
        Document(id="old", page_content="PBKDF2 runs 720,000 iterations.", metadata={"version": "4.2", "doc_id": "h"}),
    ]
    compressor = ContextAssemblyCompressor(budget=300, options={"version_policy": "label"})
    out = compressor.compress_documents(docs, "How many PBKDF2 iterations?")
    status = {d.id: d.metadata["assembly_status"] for d in out}
    assert status == {"new": "current", "old": "superseded"}
    assert 'status="superseded"' in compressor.format_documents(out)


def test_custom_keys() -> None:
    compressor = ContextAssemblyCompressor(budget=300, keys=MetadataKeys(version="release"))
    docs = [
        Document(id="a", page_content="Release 4.2 text about forms.", metadata={"release": "4.2"}),
        Document(id="b", page_content="Release 5.2 text about forms.", metadata={"release": "5.2"}),
    ]
    out = compressor.compress_documents(docs, "forms in 4.2")
    assert [d.id for d in out] == ["a"]
    assert out[0].metadata["assembly_labels"]["version"] == "4.2"
    assert 'version="4.2"' in compressor.format_documents(out)


def test_a_document_that_is_no_text_is_a_decision_not_a_failed_call() -> None:
    bad = Document.model_construct(id="x", page_content=["not", "text"], metadata={})
    good = Document(id="y", page_content="text about forms")
    compressor = ContextAssemblyCompressor(budget=300)
    assert [d.id for d in compressor.compress_documents([bad, good], "forms")] == ["y"]
    assert compressor.last_report is not None
    fate = compressor.last_report.decisions[0]
    assert (fate.id, fate.stage, fate.reason, fate.detail["field"]) == ("x", "input", "invalid", "text")


def test_a_non_document_fails_the_call_naming_it() -> None:
    with pytest.raises(ChunkError, match=r"chunk document 1: field '<document>': expected a langchain_core Document"):
        ContextAssemblyCompressor(budget=300).compress_documents([Document(page_content="a"), "b"], "q")  # type: ignore[list-item]


def test_bad_query_fails_with_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="question must be a str, got NoneType"):
        ContextAssemblyCompressor(budget=300).compress_documents([Document(page_content="a")], None)  # type: ignore[arg-type]


async def test_async_matches_sync_and_reports(bm25_documents: Any, collector: Any) -> None:
    docs = bm25_documents(SQLITE_42)
    compressor = ContextAssemblyCompressor(budget=1000)
    out = await compressor.acompress_documents(docs, SQLITE_42, callbacks=[collector])
    assert out == compressor.compress_documents(docs, SQLITE_42)
    ((name, data, _),) = collector.events
    assert name == REPORT_EVENT
    assert data["kept"] == len(out)
    assert len(data["decisions"]) == len(docs)


def test_a_chain_call_renders_once_the_context_is_the_cores(bm25_documents: Any) -> None:
    from langchain_core.language_models import FakeListChatModel
    from langchain_core.runnables import RunnableLambda

    from langchain_ctxassembly.chains import build_chain

    docs = bm25_documents(SQLITE_42)
    compressor = ContextAssemblyCompressor(budget=900)
    done = compressor.assemble(docs, SQLITE_42)
    assert done.context == Assembler(merge_gap=ADJACENT_GAP).run(SQLITE_42, to_chunks(docs), budget=900).text
    assert [d.id for d in done.documents] == [k.id for k in done.report.kept]
    prompts: list[str] = []
    # FakeListChatModel stands in for the LLM (no remote model here); the lambda records its prompt
    llm = RunnableLambda(lambda p: prompts.append(p.to_string()) or p) | FakeListChatModel(responses=["ok"])
    build_chain(RunnableLambda(lambda q: docs), llm, compressor).invoke(SQLITE_42)
    assert f"<documents>\n{done.context}\n</documents>" in prompts[0]
