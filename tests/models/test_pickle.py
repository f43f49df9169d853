"""Assemblers and both adapters pickle, so they reach worker processes (multiprocessing,
joblib, Ray): the token counter travels as its spec, a model given by path travels as the
path and loads again in the worker, and a worker's context equals the parent's."""

from __future__ import annotations

import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from ctxassembly import Assembler
from ctxassembly.data import retriever
from langchain_ctxassembly import ContextAssemblyCompressor
from llamaindex_ctxassembly import ContextAssemblyPostprocessor

pytestmark = pytest.mark.integration

QUESTION = "What is the oldest SQLite version that Django 4.2 supports?"


@pytest.fixture(scope="module")
def candidates() -> list[dict[str, Any]]:
    return retriever().retrieve(QUESTION, k=30)


def test_a_model_free_assembler_runs_the_same_in_a_spawned_worker(candidates: list[dict[str, Any]]) -> None:
    assembler = Assembler()
    here = assembler.run(QUESTION, candidates, budget=600)
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        there = pool.submit(assembler.run, QUESTION, candidates, budget=600).result()
    assert there.text == here.text
    assert there.report.to_dict()["decisions"] == here.report.to_dict()["decisions"]


def test_models_given_by_path_travel_as_their_path(
    candidates: list[dict[str, Any]], minilm_path: str, cross_encoder_path: Path
) -> None:
    assembler = Assembler(reranker=str(cross_encoder_path), embedder=minilm_path)
    here = assembler.run(QUESTION, candidates, budget=600)  # loads both models here
    blob = pickle.dumps(assembler)
    assert len(blob) < 20_000  # the paths, not the weights
    again = pickle.loads(blob)
    assert again.run(QUESTION, candidates, budget=600).text == here.text


def test_the_langchain_compressor_round_trips(candidates: list[dict[str, Any]]) -> None:
    docs = [Document(page_content=c["text"], metadata={k: v for k, v in c.items() if k != "text"}) for c in candidates]
    compressor = ContextAssemblyCompressor(budget=600, order="reading")
    again = pickle.loads(pickle.dumps(compressor))
    assert again.model_dump() == compressor.model_dump()
    assert [d.page_content for d in again.compress_documents(docs, QUESTION)] == [
        d.page_content for d in compressor.compress_documents(docs, QUESTION)
    ]


def test_the_llamaindex_postprocessor_round_trips(candidates: list[dict[str, Any]]) -> None:
    nodes = [
        NodeWithScore(node=TextNode(id_=c["id"], text=c["text"], metadata={k: c[k] for k in ("doc_id", "version")}))
        for c in candidates
    ]
    post = ContextAssemblyPostprocessor(budget=600)
    again = pickle.loads(pickle.dumps(post))
    query = QueryBundle(QUESTION)
    assert [n.node.node_id for n in again.postprocess_nodes(nodes, query)] == [
        n.node.node_id for n in post.postprocess_nodes(nodes, query)
    ]
