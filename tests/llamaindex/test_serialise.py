"""The LlamaIndex postprocessor round-trips through pickle, ``to_dict``/``from_dict`` and
``to_json``/``from_json`` (issue 18, point 1): models given by path travel as the path and
load again; a model object is left out of the serialised form and given back."""

from __future__ import annotations

import json
import pickle
from typing import Any

import pytest
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from ctxassembly.data import retriever
from ctxassembly.metadata import MetadataKeys
from llamaindex_ctxassembly import ContextAssemblyPostprocessor

pytestmark = pytest.mark.integration

QUESTION = "What is the oldest SQLite version that Django 4.2 supports?"
# non-default metadata keys: the MetadataKeys dataclass travels as plain JSON and comes back equal
KEYS = MetadataKeys(title=("title", "name"), cite="ref")
CONFIGURED = {"budget": 700, "order": "reading", "options": {"near_threshold": 0.7}, "labels_only": True, "keys": KEYS}


@pytest.fixture(scope="module")
def nodes() -> list[NodeWithScore]:
    return [
        NodeWithScore(
            node=TextNode(id_=c["id"], text=c["text"], metadata={k: c[k] for k in ("doc_id", "version", "title")}),
            score=c.get("score"),
        )
        for c in retriever().retrieve(QUESTION, k=30)
    ]


def _view(post: ContextAssemblyPostprocessor, nodes: list[NodeWithScore]) -> list[tuple[str, str]]:
    out = post.postprocess_nodes(nodes, QueryBundle(QUESTION))
    return [(n.node.node_id, n.node.get_content(metadata_mode="llm")) for n in out]  # type: ignore[arg-type]


def test_pickle_round_trip_runs_the_same(nodes: list[NodeWithScore]) -> None:
    post = ContextAssemblyPostprocessor(**CONFIGURED)
    again = pickle.loads(pickle.dumps(post))
    assert again.to_dict() == post.to_dict()
    assert _view(again, nodes) == _view(post, nodes)


@pytest.mark.parametrize("route", ["dict", "json"])
def test_llamaindex_serialisation_round_trip_runs_the_same(nodes: list[NodeWithScore], route: str) -> None:
    post = ContextAssemblyPostprocessor(**CONFIGURED)
    if route == "dict":
        data = post.to_dict()
        assert data["class_name"] == "ContextAssemblyPostprocessor"
        again = ContextAssemblyPostprocessor.from_dict(data)
    else:
        again = ContextAssemblyPostprocessor.from_json(post.to_json())
    assert again.keys == KEYS
    assert again.to_dict() == post.to_dict()
    assert _view(again, nodes) == _view(post, nodes)


def test_a_model_given_by_path_travels_as_the_path(nodes: list[NodeWithScore], minilm_path: str) -> None:
    post = ContextAssemblyPostprocessor(budget=700, embedder=minilm_path, reranker=minilm_path)
    here = _view(post, nodes)
    text = post.to_json()
    assert json.loads(text)["embedder"] == minilm_path  # was left out: exclude=True lost it
    assert len(text) < 2_000
    for again in (ContextAssemblyPostprocessor.from_json(text), pickle.loads(pickle.dumps(post))):
        assert again.embedder == minilm_path
        assert _view(again, nodes) == here


def test_a_model_object_is_left_out_and_given_back(nodes: list[NodeWithScore], minilm_path: str) -> None:
    from sentence_transformers import SentenceTransformer

    model: Any = SentenceTransformer(minilm_path, device="cpu")
    post = ContextAssemblyPostprocessor(budget=700, embedder=model)
    here = _view(post, nodes)
    data = post.to_dict()
    assert data["embedder"] is None
    json.dumps(data)
    loaded = ContextAssemblyPostprocessor.from_dict(data)
    assert loaded.embedder is None
    loaded.embedder = model  # rebuilds the assembler with the model
    assert _view(loaded, nodes) == here
    assert _view(pickle.loads(pickle.dumps(post)), nodes) == here
