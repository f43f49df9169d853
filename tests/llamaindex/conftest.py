"""Session fixtures for the LlamaIndex tests: real MiniLM embeddings and one demo index.

The index over the 423 demo chunks is embedded once per session (~30 s on two cores).
No real LLM exists here: the engines get LlamaIndex's ``MockLLM`` (the one fake, because
a remote LLM cannot run in tests); everything else is real.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from llama_index.core import Settings, VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.llms import MockLLM
from llama_index.core.schema import TextNode

from ctxassembly.data import load_corpus
from llamaindex_ctxassembly import ContextAssemblyEvent

os.environ.setdefault("HF_HUB_OFFLINE", "1")


class MiniLMEmbedding(BaseEmbedding):
    """all-MiniLM-L6-v2 through sentence-transformers, loaded from a local path."""

    _model: Any = PrivateAttr()

    def __init__(self, path: str, **kwargs: Any) -> None:
        super().__init__(model_name=path, embed_batch_size=64, **kwargs)
        from sentence_transformers import SentenceTransformer

        self._model = SentenceTransformer(path, device="cpu")

    @classmethod
    def class_name(cls) -> str:
        return "MiniLMEmbedding"

    def _encode(self, texts: list[str]) -> list[list[float]]:
        return self._model.encode(texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False).tolist()

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._encode([query])[0]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._encode([text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._encode(texts)


def demo_node(record: dict[str, Any]) -> TextNode:
    """One demo corpus record as the TextNode a LlamaIndex ingestion would produce."""
    return TextNode(
        id_=record["id"],
        text=record["text"],
        metadata={k: record[k] for k in ("version", "title", "section", "doc_id")},
        excluded_embed_metadata_keys=["doc_id"],
        start_char_idx=record["start"],
        end_char_idx=record["end"],
    )


@pytest.fixture(scope="session")
def embed_model(minilm_path: str) -> MiniLMEmbedding:
    return MiniLMEmbedding(minilm_path)


@pytest.fixture(scope="session")
def mock_llm() -> MockLLM:
    # MockLLM: no real LLM can run in these tests (no network, no local chat model).
    return MockLLM()


@pytest.fixture(scope="session")
def settings(embed_model: MiniLMEmbedding, mock_llm: MockLLM) -> Any:
    """Settings point at the real embedder and the MockLLM, so nothing reaches for OpenAI."""
    old_llm, old_embed = Settings._llm, Settings._embed_model
    Settings.llm, Settings.embed_model = mock_llm, embed_model
    yield Settings
    Settings._llm, Settings._embed_model = old_llm, old_embed


@pytest.fixture(scope="session")
def demo_index(embed_model: MiniLMEmbedding, settings: Any) -> VectorStoreIndex:
    return VectorStoreIndex([demo_node(r) for r in load_corpus()], embed_model=embed_model, show_progress=False)


class Collect(BaseEventHandler):
    """Collects the ContextAssemblyEvents that reach the root dispatcher."""

    events: list[BaseEvent] = Field(default_factory=list)

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        if isinstance(event, ContextAssemblyEvent):
            self.events.append(event)


@pytest.fixture
def collector() -> Iterator[Collect]:
    root = get_dispatcher()
    handler = Collect()
    root.add_event_handler(handler)
    yield handler
    root.event_handlers = [h for h in root.event_handlers if h is not handler]
