"""The LangChain compressor survives every way LangChain users move it (issue 18, point 1):
pickle, pydantic JSON, LangChain's own dumpd/dumps/loads. Models given by path travel as
the path and load again; a model object is left out of JSON, never a failure."""

from __future__ import annotations

import json
import pickle
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.load import dumpd, dumps, load, loads

from ctxassembly.data import retriever
from ctxassembly.metadata import MetadataKeys
from langchain_ctxassembly import ContextAssemblyCompressor

pytestmark = [
    pytest.mark.integration,
    # langchain_core marks load/loads as beta; they are still LangChain's own round trip
    pytest.mark.filterwarnings("ignore:The function `loads?` is in beta"),
]

QUESTION = "What is the oldest SQLite version that Django 4.2 supports?"
TRUST = {"allowed_objects": [ContextAssemblyCompressor], "valid_namespaces": ["langchain_ctxassembly"]}


@pytest.fixture(scope="module")
def documents() -> list[Document]:
    return [
        Document(id=c["id"], page_content=c["text"], metadata={k: v for k, v in c.items() if k not in ("id", "text")})
        for c in retriever().retrieve(QUESTION, k=30)
    ]


def _context(compressor: ContextAssemblyCompressor, documents: list[Document]) -> str:
    return compressor.format_documents(compressor.compress_documents(documents, QUESTION))


# non-default metadata keys: the MetadataKeys dataclass travels as plain JSON and comes back equal
KEYS = MetadataKeys(title=("title", "name"), cite="ref")
CONFIGURED = {"budget": 700, "order": "reading", "format": "evidence", "options": {"near_threshold": 0.7}, "keys": KEYS}


def test_pickle_round_trip_runs_the_same(documents: list[Document]) -> None:
    compressor = ContextAssemblyCompressor(**CONFIGURED)
    again = pickle.loads(pickle.dumps(compressor))
    assert again.model_dump() == compressor.model_dump()
    assert _context(again, documents) == _context(compressor, documents)


def test_pydantic_json_round_trip_runs_the_same(documents: list[Document]) -> None:
    compressor = ContextAssemblyCompressor(**CONFIGURED)
    text = compressor.model_dump_json()
    again = ContextAssemblyCompressor.model_validate_json(text)
    assert again.model_dump() == compressor.model_dump()
    assert _context(again, documents) == _context(compressor, documents)


def test_langchain_dumpd_and_loads_round_trip(documents: list[Document]) -> None:
    compressor = ContextAssemblyCompressor(**CONFIGURED)
    assert ContextAssemblyCompressor.is_lc_serializable()
    data = dumpd(compressor)
    assert data["type"] == "constructor"
    assert data["id"] == ["langchain_ctxassembly", "ContextAssemblyCompressor"]
    assert data["kwargs"]["budget"] == 700
    json.dumps(data)  # plain JSON all the way down (no stub for the metadata keys)
    for again in (loads(dumps(compressor), **TRUST), load(data, **TRUST)):
        assert isinstance(again, ContextAssemblyCompressor)
        assert again.keys == KEYS
        assert again.model_dump() == compressor.model_dump()
        assert _context(again, documents) == _context(compressor, documents)


def test_loads_refuses_the_class_unless_trusted() -> None:
    with pytest.raises(ValueError, match="is not allowed"):
        loads(dumps(ContextAssemblyCompressor(budget=500)), allowed_objects="core")


def test_a_model_given_by_path_travels_as_the_path(documents: list[Document], minilm_path: str) -> None:
    compressor = ContextAssemblyCompressor(budget=700, embedder=minilm_path, reranker=minilm_path)
    here = _context(compressor, documents)
    text = compressor.model_dump_json()
    assert json.loads(text)["embedder"] == minilm_path
    assert len(text) < 2_000  # the path, not the weights
    for again in (
        ContextAssemblyCompressor.model_validate_json(text),
        loads(dumps(compressor), **TRUST),
        pickle.loads(pickle.dumps(compressor)),
    ):
        assert again.embedder == minilm_path
        assert _context(again, documents) == here


def test_a_model_object_is_left_out_of_json_and_given_back(documents: list[Document], minilm: Any) -> None:
    compressor = ContextAssemblyCompressor(budget=700, embedder=minilm, reranker=minilm)
    here = _context(compressor, documents)
    text = compressor.model_dump_json()  # was PydanticSerializationError (issue 18)
    data = json.loads(text)
    assert data["embedder"] is None
    assert data["reranker"] is None
    assert "embedder" not in dumpd(compressor)["kwargs"]
    loaded = ContextAssemblyCompressor.model_validate_json(text)
    assert loaded.embedder is None
    again = loaded.model_copy(update={"embedder": minilm, "reranker": minilm})
    assert _context(again, documents) == here
    # pickle keeps the model object (a worker process gets the model itself)
    assert _context(pickle.loads(pickle.dumps(compressor)), documents) == here
