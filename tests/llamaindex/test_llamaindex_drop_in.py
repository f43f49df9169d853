"""Issue 18 in real LlamaIndex objects: the retriever's score stays the node score, so a
SimilarityPostprocessor after ours still works (point 3); SentenceSplitter neighbours and
prev/next relationships are adjacency (point 6)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from llama_index.core import Document, VectorStoreIndex
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.postprocessor import SimilarityPostprocessor
from llama_index.core.schema import NodeRelationship, NodeWithScore, RelatedNodeInfo, TextNode

from ctxassembly.metadata import ADJACENT_GAP
from llamaindex_ctxassembly import ContextAssemblyPostprocessor, nodes_to_chunks
from llamaindex_ctxassembly.mapping import MetadataKeys

pytestmark = pytest.mark.integration

PAGE = "\n\n".join(
    f"Paragraph {i}. " + " ".join(f"Sentence {i}.{j} says something about database backends." for j in range(6))
    for i in range(8)
)
Q = "Which database backends does Django 4.2 support?"


def _split(chunk_size: int = 80) -> list[TextNode]:
    doc = Document(text=PAGE, id_="backends", metadata={"version": "4.2", "title": "Backends"})
    nodes = SentenceSplitter(chunk_size=chunk_size, chunk_overlap=0).get_nodes_from_documents([doc])
    return [n for n in nodes if isinstance(n, TextNode)]


def test_sentence_splitter_neighbours_merge_by_default() -> None:
    nodes = _split()
    gaps = [(b.start_char_idx or 0) - (a.end_char_idx or 0) for a, b in itertools.pairwise(nodes)]
    assert 0 < max(gaps) <= ADJACENT_GAP  # the splitter dropped the whitespace between its chunks
    given = [NodeWithScore(node=n, score=0.8) for n in nodes[:3]]
    pp = ContextAssemblyPostprocessor(budget=3000, order="reading", options={"max_share": None})
    (out,) = pp.postprocess_nodes(given, query_str=Q)
    assert out.node.metadata["assembly_merged_from"] == [n.node_id for n in nodes[:3]]
    assert (out.node.start_char_idx, out.node.end_char_idx) == (nodes[0].start_char_idx, nodes[2].end_char_idx)
    assert nodes[1].text in out.node.text
    # with the core's exact-offsets gap they stay apart
    exact = ContextAssemblyPostprocessor(budget=3000, order="reading", options={"max_share": None, "merge_gap": 0})
    assert len(exact.postprocess_nodes(given, query_str=Q)) == 3


def test_prev_next_relationships_are_adjacency_when_offsets_are_missing() -> None:
    nodes = _split()[:3]
    for n in nodes:  # as some stores return them: relationships kept, offsets lost
        n.start_char_idx = n.end_char_idx = None
    records = nodes_to_chunks([NodeWithScore(node=n, score=0.8) for n in reversed(nodes)], MetadataKeys())
    placed = {r["id"]: (r["start"], r["end"]) for r in records}
    spans = [placed[n.node_id] for n in nodes]
    assert [b[0] - a[1] for a, b in itertools.pairwise(spans)] == [1, 1]  # chain order, one character apart
    pp = ContextAssemblyPostprocessor(budget=3000, order="reading", options={"max_share": None})
    (out,) = pp.postprocess_nodes([NodeWithScore(node=n, score=0.8) for n in nodes], query_str=Q)
    assert out.node.metadata["assembly_merged_from"] == [n.node_id for n in nodes]
    assert out.node.start_char_idx is None  # the placement is not written back as offsets


def test_unlinked_nodes_without_offsets_do_not_merge() -> None:
    nodes = _split()[:3]
    for n in nodes:
        n.start_char_idx = n.end_char_idx = None
        n.relationships.pop(NodeRelationship.NEXT, None)
        n.relationships.pop(NodeRelationship.PREVIOUS, None)
    records = nodes_to_chunks([NodeWithScore(node=n, score=0.8) for n in nodes], MetadataKeys())
    assert all("start" not in r for r in records)


def test_links_to_another_document_are_not_adjacency() -> None:
    a = TextNode(id_="a", text="First part.", metadata={"doc_id": "one"})
    b = TextNode(id_="b", text="Second part.", metadata={"doc_id": "two"})
    a.relationships[NodeRelationship.NEXT] = RelatedNodeInfo(node_id="b")
    records = nodes_to_chunks([NodeWithScore(node=a, score=1.0), NodeWithScore(node=b, score=1.0)], MetadataKeys())
    assert all("start" not in r for r in records)


@pytest.fixture(scope="module")
def split_index(settings: Any, embed_model: Any) -> VectorStoreIndex:
    docs = [
        Document(text=PAGE.replace("database backends", f"database backends in Django {v}"), id_=f"backends-{v}",
                 metadata={"version": v, "title": "Backends"})
        for v in ("4.2", "5.2")
    ]  # fmt: skip
    return VectorStoreIndex.from_documents(
        docs, transformations=[SentenceSplitter(chunk_size=80, chunk_overlap=0)], embed_model=embed_model
    )


def test_similarity_postprocessor_after_ours_keeps_working(split_index: VectorStoreIndex) -> None:
    retriever = split_index.as_retriever(similarity_top_k=12)
    retrieved = {n.node.node_id: n.score for n in retriever.retrieve(Q)}
    assert all(s is not None and s > 0.3 for s in retrieved.values())
    ours = ContextAssemblyPostprocessor(budget=1500)
    engine = split_index.as_query_engine(
        similarity_top_k=12, node_postprocessors=[ours, SimilarityPostprocessor(similarity_cutoff=0.3)]
    )
    response = engine.query(Q)
    assert response.source_nodes, "the cutoff dropped everything"
    assert len(response.source_nodes) == len(ours.last_report.kept)  # type: ignore[union-attr]
    for n in response.source_nodes:
        assert n.node.metadata["version"] == "4.2"
        assert n.score == retrieved[n.node.node_id] == n.node.metadata["assembly_retriever_score"]
        assert n.node.metadata["assembly_score"] < 0.3  # the assembly's own score would have been cut

    reverse = split_index.as_query_engine(
        similarity_top_k=12,
        node_postprocessors=[
            ContextAssemblyPostprocessor(budget=1500, score_from="assembly"),
            SimilarityPostprocessor(similarity_cutoff=0.3),
        ],
    )
    assert reverse.query(Q).source_nodes == []  # what issue 18 saw: the reverse option is opt-in
