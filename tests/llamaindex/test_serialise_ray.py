"""The LlamaIndex postprocessor in a Ray worker (issue 18, point 1): shipped by Ray's own
serialisation, it returns the same nodes and LLM view there as here."""

from __future__ import annotations

from typing import Any

import pytest
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle, TextNode

from ctxassembly.data import retriever
from llamaindex_ctxassembly import ContextAssemblyPostprocessor

pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    # Ray's own modules emit deprecation notices on import under newer pandas/pyarrow
    pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.*"),
]

QUESTION = "What is the oldest SQLite version that Django 4.2 supports?"


def _postprocess(
    post: ContextAssemblyPostprocessor, nodes: list[NodeWithScore], question: str
) -> list[tuple[str, str]]:
    out = post.postprocess_nodes(nodes, QueryBundle(question))
    return [(n.node.node_id, n.node.get_content(metadata_mode=MetadataMode.LLM)) for n in out]


def test_the_postprocessor_runs_the_same_in_a_ray_worker(local_ray: Any) -> None:
    nodes = [
        NodeWithScore(node=TextNode(id_=c["id"], text=c["text"], metadata={k: c[k] for k in ("doc_id", "version")}))
        for c in retriever().retrieve(QUESTION, k=30)
    ]
    post = ContextAssemblyPostprocessor(budget=700, order="reading")
    here = _postprocess(post, nodes, QUESTION)
    there = local_ray.get(local_ray.remote(_postprocess).remote(post, nodes, QUESTION), timeout=300)
    assert there == here
    assert there[0][1].startswith("cite: 1\n")
