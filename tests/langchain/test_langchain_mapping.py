"""Document <-> Chunk mapping: configurable keys, missing metadata, None scores, bad input."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest
from langchain_core.documents import Document

from ctxassembly.errors import ChunkError, ConfigError
from langchain_ctxassembly import ContextAssemblyCompressor
from langchain_ctxassembly.mapping import MetadataKeys, to_chunk, to_chunks, to_documents

pytestmark = pytest.mark.unit


def test_default_keys_read_langchain_metadata() -> None:
    doc = Document(
        id="d1",
        page_content="Django supports PostgreSQL 14 and higher.",
        metadata={
            "source": "ref/databases.txt",
            "title": "Databases",
            "section": "PostgreSQL notes",
            "version": "5.2",
            "date": "2025-04-02",
            "start_index": 100,
            "score": 0.7,
            "acl": ["staff"],
        },
    )
    (c,) = to_chunks([doc])
    assert (c.id, c.doc_id, c.title, c.section, c.version, c.date) == (
        "d1",
        "ref/databases.txt",
        "Databases",
        "PostgreSQL notes",
        "5.2",
        "2025-04-02",
    )
    assert (c.start, c.end) == (100, 100 + len(doc.page_content))  # end = start + len(text)
    assert c.score == 0.7
    assert c.meta["acl"] == ["staff"]  # the rest of the metadata travels (Admit reads acl from it)
    assert c.index == 0


def test_first_present_key_wins_and_doc_id_beats_source() -> None:
    doc = Document(
        page_content="x", metadata={"doc_id": "a", "source": "b", "start": 5, "end": 9, "relevance_score": 0.2}
    )
    (c,) = to_chunks([doc])
    assert (c.doc_id, c.start, c.end, c.score) == ("a", 5, 9, 0.2)


def test_keys_are_configurable() -> None:
    keys = MetadataKeys(version="release", doc_id=("file",), title="heading", score="sim", start="offset", id="uid")
    doc = Document(
        page_content="text",
        metadata={
            "release": 5.1,
            "file": "f.txt",
            "heading": "H",
            "sim": 3,
            "offset": 7,
            "uid": "u-1",
            "version": "9.9",
            "score": 0.1,
        },
    )
    (c,) = to_chunks([doc], keys)
    assert (c.id, c.version, c.doc_id, c.title, c.score, c.start, c.end) == ("u-1", "5.1", "f.txt", "H", 3.0, 7, 11)


def test_missing_metadata_gives_none_fields_and_a_position_id() -> None:
    docs = [
        Document(page_content="a"),
        Document(page_content="b", metadata={"id": "meta-id"}),
        Document(id="doc-id", page_content="c", metadata={"id": "ignored"}),
    ]
    chunks = to_chunks(docs)
    assert [c.id for c in chunks] == ["#0", "meta-id", "doc-id"]  # Document.id, then metadata id, then position
    first = chunks[0]
    assert (first.score, first.version, first.doc_id, first.title, first.start, first.end) == (None,) * 6


@pytest.mark.parametrize("metadata", [{}, {"score": None}, {"relevance_score": None}])
def test_absent_or_none_score_is_none_not_zero(metadata: dict[str, object]) -> None:
    assert to_chunks([Document(page_content="t", metadata=metadata)])[0].score is None


def test_numpy_scores_and_offsets_are_converted() -> None:
    (c,) = to_chunks([Document(page_content="abc", metadata={"score": np.float32(0.5), "start_index": np.int64(3)})])
    assert (c.score, c.start, c.end) == (0.5, 3, 6)
    assert type(c.score) is float


def test_splitter_not_found_offset_means_no_offsets() -> None:
    (c,) = to_chunks([Document(page_content="abc", metadata={"start_index": -1})])
    assert (c.start, c.end) == (None, None)


def test_dates_become_iso_strings() -> None:
    (c,) = to_chunks([Document(page_content="t", metadata={"date": dt.date(2024, 4, 3)})])
    assert c.date == "2024-04-03"


def test_position_id_uses_the_given_position() -> None:
    assert to_chunk(Document(page_content="t"), 7, MetadataKeys()).id == "#7"


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (123, r"chunk 'b': field 'text': expected str, got int"),
        (b"raw", r"chunk 'b': field 'text': got bytes; decode it first"),
        (None, r"chunk 'b': field 'text': missing \(expected a string\)"),
    ],
)
def test_non_string_page_content_names_field_and_document(content: object, match: str) -> None:
    bad = Document.model_construct(id="b", page_content=content, metadata={})  # bypasses pydantic, as mutation can
    with pytest.raises(ChunkError, match=match):
        to_chunks([Document(id="a", page_content="fine"), bad])


@pytest.mark.parametrize(
    ("metadata", "match"),
    [
        ({"title": {"en": "T"}}, r"chunk '#0': field 'title': expected str or None, got dict \{'en': 'T'\}"),
        ({"relevance_score": "high"}, r"chunk '#0': field 'score': expected a number or None, got str 'high'"),
        ({"score": float("nan")}, r"field 'score': got NaN; pass None for 'no score'"),
        ({"start_index": "10"}, r"field 'start': expected a non-negative int or None, got '10'"),
        ({"start": 10, "end": 4}, r"field 'end': end 4 is before start 10"),
        ({1: "x"}, r"field 'meta': metadata keys must be strings, got int 1"),
    ],
)
def test_bad_metadata_names_document_field_and_key(metadata: dict[object, object], match: str) -> None:
    with pytest.raises(ChunkError, match=match):
        to_chunks([Document(page_content="t", metadata=metadata)])


def test_non_documents_are_rejected_by_position() -> None:
    with pytest.raises(
        ChunkError, match=r"chunk document 1: field '<document>': expected a langchain_core Document, got dict"
    ):
        to_chunks([Document(page_content="a"), {"page_content": "b"}])  # type: ignore[list-item]


def test_a_single_document_is_not_a_list() -> None:
    with pytest.raises(ChunkError, match="expected a sequence of Documents, got a single Document"):
        to_chunks(Document(page_content="a"))  # type: ignore[arg-type]


def test_empty_input_gives_no_chunks() -> None:
    assert to_chunks([]) == []


def test_metadata_keys_validation() -> None:
    with pytest.raises(ConfigError, match=r"MetadataKeys.version: expected a metadata key \(str\) or a non-empty"):
        MetadataKeys(version=())
    with pytest.raises(ConfigError, match=r"MetadataKeys has no field\(s\) \['versoin'\]; valid: id, doc_id"):
        MetadataKeys.from_mapping({"versoin": "v"})


def test_to_documents_refuses_chunks_without_an_input_index() -> None:
    from ctxassembly import Chunk
    from ctxassembly.report import Report

    with pytest.raises(RuntimeError, match="chunk 'x' has no input index; it did not come from to_chunks"):
        to_documents([Chunk(id="x", text="t")], [Document(page_content="t")], Report())


def test_public_surface() -> None:
    import langchain_ctxassembly

    assert sorted(langchain_ctxassembly.__all__) == sorted([
        "PROMPT", "REPORT_EVENT", "ContextAssemblyCompressor", "MetadataKeys",
        "build_chain", "format_documents", "render_documents", "to_chunks", "to_documents",
    ])  # fmt: skip
    assert langchain_ctxassembly.REPORT_EVENT == "ctxassembly_report"


def test_metadata_embeddings_are_reused_and_the_report_says_so() -> None:
    seen: list[str] = []
    words = ("alpha", "beta", "gamma", "delta")

    def bag(texts: list[str]) -> list[list[float]]:  # an embedding function counting its texts
        seen.extend(texts)
        return [[t.count(w) + 0.01 for w in words] for t in texts]

    docs = [
        Document(page_content="alpha retry one", metadata={"embedding": [1.0, 0.0, 0.0, 0.0]}),
        Document(page_content="beta cache two", metadata={"embedding": [0.0, 1.0, 0.0, 0.0]}),
        Document(page_content="gamma timeout three"),
    ]
    compressor = ContextAssemblyCompressor(budget=500, embedder=bag)
    compressor.compress_documents(docs, "alpha")
    assert seen == ["gamma timeout three"]  # the store's vectors were used for the others
    report = compressor.last_report
    assert report is not None
    assert [n for n in report.notes if n["event"] == "embeddings"] == [
        {"stage": "semantic_dedup", "event": "embeddings", "supplied": 2, "of": 3}
    ]
