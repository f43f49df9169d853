"""Session fixtures for the LangChain adapter tests: the demo corpus as Documents, real
MiniLM embeddings loaded by path (no model hub here), and one InMemoryVectorStore."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import InMemoryVectorStore

from ctxassembly.data import load_corpus
from ctxassembly.tokens import get_counter


class MiniLMEmbeddings(Embeddings):
    """LangChain Embeddings over a local SentenceTransformer (all-MiniLM-L6-v2 by path)."""

    def __init__(self, model: Any) -> None:
        self.model = model

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        vectors = self.model.encode(texts, batch_size=32, normalize_embeddings=True, show_progress_bar=False)
        return [v.tolist() for v in vectors]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def corpus_document(record: dict[str, Any]) -> Document:
    """A demo chunk as a retriever would hold it: the chunk id as Document.id, labels in metadata."""
    metadata = {k: record[k] for k in ("version", "title", "section", "doc_id")}
    metadata["start_index"] = record["start"]
    return Document(id=record["id"], page_content=record["text"], metadata=metadata)


@pytest.fixture(scope="session")
def corpus_documents() -> list[Document]:
    return [corpus_document(r) for r in load_corpus()]


@pytest.fixture(scope="session")
def embeddings(minilm: Any) -> MiniLMEmbeddings:
    return MiniLMEmbeddings(minilm)


@pytest.fixture(scope="session")
def vector_store(embeddings: MiniLMEmbeddings, corpus_documents: list[Document]) -> InMemoryVectorStore:
    """Built once: embedding the 423 chunks takes ~30 s on this CPU."""
    store = InMemoryVectorStore(embeddings)
    store.add_documents(corpus_documents)
    return store


@pytest.fixture(scope="session")
def count_tokens() -> Any:
    return get_counter(None)


@pytest.fixture(scope="session")
def bm25_documents() -> Any:
    """question -> the demo BM25 retriever's top 40 as Documents (with a ``score``): no model needed."""
    from ctxassembly.data import retriever

    def retrieve(question: str, k: int = 40) -> list[Document]:
        out = []
        for record in retriever().retrieve(question, k=k):
            doc = corpus_document(record)
            doc.metadata["score"] = record["score"]
            out.append(doc)
        return out

    return retrieve


class Collector(BaseCallbackHandler):
    """A real LangChain callback handler: keeps custom events, retriever runs and chat prompts."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any, UUID]] = []
        self.retriever_runs: list[tuple[UUID, UUID | None]] = []
        self.prompts: list[list[Any]] = []

    def on_custom_event(self, name: str, data: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self.events.append((name, data, run_id))

    def on_retriever_start(
        self, serialized: dict[str, Any], query: str, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        self.retriever_runs.append((run_id, parent_run_id))

    def on_chat_model_start(self, serialized: dict[str, Any], messages: list[list[Any]], **kwargs: Any) -> None:
        self.prompts.extend(messages)


@pytest.fixture
def collector() -> Collector:
    return Collector()
