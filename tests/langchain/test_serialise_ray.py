"""The LangChain compressor in a Ray worker (issue 18, point 1): shipped to the worker by
Ray's own serialisation, it assembles the same context there as here, a model given by
path loading again in the worker."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.documents import Document

from ctxassembly.data import retriever
from langchain_ctxassembly import ContextAssemblyCompressor

pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    # Ray's own modules emit deprecation notices on import under newer pandas/pyarrow
    pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.*"),
]

QUESTION = "What is the oldest SQLite version that Django 4.2 supports?"


def _assemble(compressor: ContextAssemblyCompressor, documents: list[Document], question: str) -> str:
    return compressor.format_documents(compressor.compress_documents(documents, question))


def test_the_compressor_runs_the_same_in_a_ray_worker(local_ray: Any, minilm_path: str) -> None:
    documents = [
        Document(id=c["id"], page_content=c["text"], metadata={k: v for k, v in c.items() if k not in ("id", "text")})
        for c in retriever().retrieve(QUESTION, k=30)
    ]
    remote = local_ray.remote(_assemble)
    for compressor in (
        ContextAssemblyCompressor(budget=700, order="reading"),
        ContextAssemblyCompressor(budget=700, embedder=minilm_path),
    ):
        here = _assemble(compressor, documents, QUESTION)
        there = local_ray.get(remote.remote(compressor, documents, QUESTION), timeout=300)
        assert there == here
        assert 'id="1"' in there
