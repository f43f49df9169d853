"""Unit tests of the node <-> chunk mapping and the postprocessor on hand-made real nodes."""

from __future__ import annotations

import copy
import datetime as dt
from typing import Any

import pytest
from llama_index.core.schema import (
    ImageNode,
    IndexNode,
    MetadataMode,
    Node,
    NodeRelationship,
    NodeWithScore,
    RelatedNodeInfo,
    TextNode,
)

import llamaindex_ctxassembly
from ctxassembly.errors import ChunkError, ConfigError
from ctxassembly.metadata import OUTPUT_KEYS
from ctxassembly.tokens import get_counter
from llamaindex_ctxassembly import (
    ContextAssemblyPostprocessor,
    MetadataKeys,
    nodes_to_chunks,
)
from tests.llamaindex.conftest import Collect

pytestmark = pytest.mark.unit

Q = "Which database backends are supported in Django 4.2?"
WORDS = ("alpha", "beta", "gamma", "delta")  # none of them in Q: the lexical signal ties


def text_node(nid: str, text: str, **meta: Any) -> TextNode:
    return TextNode(id_=nid, text=text, metadata=meta)


def scored(*pairs: tuple[TextNode | Any, float | None]) -> list[NodeWithScore]:
    return [NodeWithScore(node=n, score=s) for n, s in pairs]


def llm_view(nodes: list[NodeWithScore]) -> str:
    return "\n\n".join(n.node.get_content(metadata_mode=MetadataMode.LLM) for n in nodes)


def test_public_surface() -> None:
    assert sorted(llamaindex_ctxassembly.__all__) == [
        "ContextAssemblyEvent",
        "ContextAssemblyPostprocessor",
        "MetadataKeys",
        "nodes_to_chunks",
        "to_nodes",
    ]


# -- mapping -----------------------------------------------------------------------------
def test_default_keys_become_chunk_fields_and_the_rest_meta() -> None:
    node = TextNode(
        id_="n1",
        text="SQLite 3.21.0 and later.",
        metadata={
            "version": "4.2",
            "title": "Databases",
            "section": "SQLite",
            "date": "2023-04-03",
            "doc_id": "ref/databases",
            "acl": ["staff"],
        },
        start_char_idx=10,
        end_char_idx=34,
    )
    [record] = nodes_to_chunks(scored((node, 0.7)), MetadataKeys())
    assert record == {
        "id": "n1",
        "text": "SQLite 3.21.0 and later.",
        "score": 0.7,
        "version": "4.2",
        "title": "Databases",
        "section": "SQLite",
        "date": "2023-04-03",
        "doc_id": "ref/databases",
        "start": 10,
        "end": 34,
        "meta": dict(node.metadata),  # every key travels (acl for the admit stage, paths for versions)
    }


def test_configurable_keys_drive_version_and_labels() -> None:
    keys = MetadataKeys(version="release", title="page", section="heading", doc_id="source")
    nodes = scored(
        (
            text_node(
                "new", "PostgreSQL 14 and higher.", release="5.2", page="Databases", heading="PostgreSQL", source="db"
            ),
            0.9,
        ),
        (
            text_node(
                "old", "PostgreSQL 12 and higher.", release="4.2", page="Databases", heading="PostgreSQL", source="db"
            ),
            0.8,
        ),
    )
    pp = ContextAssemblyPostprocessor(budget=500, keys=keys)
    out = pp.postprocess_nodes(nodes, query_str=Q)
    assert [n.node.node_id for n in out] == ["old"]
    assert (
        out[0]
        .node.get_content(metadata_mode=MetadataMode.LLM)
        .startswith("cite: 1\npage: Databases\nheading: PostgreSQL\nrelease: 4.2\nstatus: current\n\nPostgreSQL 12")
    )
    assert pp.last_report.fate(0).reason == "other_version"


def test_doc_id_falls_back_to_ref_doc_id_and_metadata_wins() -> None:
    sourced = TextNode(id_="a", text="x", relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id="doc-7")})
    both = TextNode(
        id_="b",
        text="y",
        metadata={"doc_id": "meta-doc"},
        relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id="doc-7")},
    )
    records = nodes_to_chunks(scored((sourced, 1.0), (both, 1.0), (text_node("c", "z"), 1.0)), MetadataKeys())
    assert [r.get("doc_id") for r in records] == ["doc-7", "meta-doc", None]


def test_date_objects_become_iso_labels() -> None:
    pp = ContextAssemblyPostprocessor(budget=300)
    [out] = pp.postprocess_nodes(scored((text_node("d", "t", date=dt.date(2024, 4, 3)), 1.0)), query_str=Q)
    assert out.node.metadata["assembly_labels"]["date"] == "2024-04-03"  # the core coerced it (and noted it)
    assert any(n["event"] == "coerced" and n["field"] == "date" for n in pp.last_report.to_dict()["notes"])


def test_none_scores_pass_through_and_rank_by_order() -> None:
    nodes = scored(*((text_node(f"n{i}", f"passage {w} about cats"), None) for i, w in enumerate(WORDS)))
    assert [r.get("score") for r in nodes_to_chunks(nodes, MetadataKeys())] == [None] * 4
    pp = ContextAssemblyPostprocessor(budget=1000, order="relevance")
    out = pp.postprocess_nodes(nodes, query_str=Q)
    assert [n.node.node_id for n in out] == ["n0", "n1", "n2", "n3"]
    assert [n.score for n in out] == [None] * 4  # the retriever's score stays the node's score
    assert all(isinstance(n.node.metadata["assembly_score"], float) for n in out)
    assert [n.node.metadata["assembly_retriever_score"] for n in out] == [None] * 4


def test_missing_metadata_is_kept_unversioned() -> None:
    out = ContextAssemblyPostprocessor(budget=300).postprocess_nodes(
        scored((text_node("bare", "Plain text."), 0.5)), query_str=Q
    )
    assert out[0].node.get_content(metadata_mode=MetadataMode.LLM) == "cite: 1\nstatus: unversioned\n\nPlain text."


def test_empty_list_gives_empty_list_a_report_and_an_event(collector: Collect) -> None:
    pp = ContextAssemblyPostprocessor(budget=300)
    assert pp.postprocess_nodes([], query_str=Q) == []
    assert pp.last_report is not None
    assert pp.last_report.decisions == []
    assert collector.events[-1].node_ids == []


@pytest.mark.parametrize(
    ("node", "match"),
    [
        (ImageNode(id_="img-1", image="aGVsbG8="), r"chunk 'img-1': field 'text': ImageNode has no text"),
        (Node(id_="mm-1"), r"chunk 'mm-1': field 'text': Node has no text"),
    ],
)
def test_non_text_node_is_a_clear_error(node: Any, match: str) -> None:
    with pytest.raises(ChunkError, match=match):
        ContextAssemblyPostprocessor(budget=300).postprocess_nodes(scored((node, 1.0)), query_str=Q)


def test_captioned_image_node_is_text() -> None:
    node = ImageNode(id_="img-2", image="aGVsbG8=", text="A diagram of the request cycle.")
    out = ContextAssemblyPostprocessor(budget=300).postprocess_nodes(scored((node, 1.0)), query_str=Q)
    assert out[0].node.text == "A diagram of the request cycle."


def test_item_that_is_not_node_with_score_is_named() -> None:
    with pytest.raises(ChunkError, match=r"chunk at index 0: field '<node>': expected a NodeWithScore, got TextNode"):
        ContextAssemblyPostprocessor(budget=300).postprocess_nodes([text_node("n", "t")], query_str=Q)


def test_a_bad_metadata_value_drops_that_node_naming_it() -> None:
    pp = ContextAssemblyPostprocessor(budget=300)
    out = pp.postprocess_nodes(
        scored((text_node("n9", "t", title=["a", "b"]), 1.0), (text_node("n10", "fine"), 0.5)), query_str=Q
    )
    assert [n.node.node_id for n in out] == ["n10"]  # the call goes on without it
    assert pp.last_report is not None
    fate = pp.last_report.fate(0)
    assert (fate.id, fate.reason, fate.detail["field"]) == ("n9", "invalid", "title")
    assert "chunk 'n9': field 'title': expected str or None, got list" in fate.detail["error"]


# -- the postprocessor on real nodes -----------------------------------------------------
def _db_nodes() -> list[NodeWithScore]:
    """Two adjacent passages of one document (offsets touch) and an exact copy elsewhere."""
    common = {"version": "4.2", "title": "Databases", "doc_id": "ref/databases"}
    first = TextNode(
        id_="db#0",
        text="Django supports PostgreSQL, MariaDB, MySQL, Oracle and SQLite.",
        metadata={**common, "section": "Databases"},
        start_char_idx=0,
        end_char_idx=62,
        excluded_llm_metadata_keys=["doc_id"],
        embedding=[0.1, 0.2],
    )
    second = TextNode(
        id_="db#1",
        text="\nDjango 4.2 supports SQLite 3.21.0 and later.",
        metadata={**common, "section": "Databases > SQLite"},
        start_char_idx=62,
        end_char_idx=107,
    )
    return scored((first, 0.9), (second, 0.7))


# ranked by the incoming order alone, so that the merge is named by the first node given
BY_ORDER = {"weights": {"order": 1.0}}


def test_merges_adjacent_nodes_into_one_copy() -> None:
    nodes = _db_nodes()
    out = ContextAssemblyPostprocessor(budget=500, options=BY_ORDER).postprocess_nodes(nodes, query_str=Q)
    assert len(out) == 1
    merged = out[0].node
    assert merged.node_id == "db#0"
    assert merged.text == nodes[0].node.text + nodes[1].node.text
    assert (merged.start_char_idx, merged.end_char_idx) == (0, 107)
    assert merged.embedding is None  # it described the shorter text
    assert merged.metadata["assembly_merged_from"] == ["db#0", "db#1"]
    assert merged.metadata["assembly_report"]["reasons"] == {"kept": 1, "merged": 1}


def test_duplicates_leave_one_copy_that_names_the_other() -> None:
    text = "Django supports PostgreSQL, MariaDB, MySQL, Oracle and SQLite."
    nodes = scored((text_node("a", text, version="4.2"), 0.9), (text_node("b", text, version="4.2"), 0.8))
    out = ContextAssemblyPostprocessor(budget=500).postprocess_nodes(nodes, query_str=Q)
    assert len(out) == 1
    other = ({"a", "b"} - {out[0].node.node_id}).pop()
    assert out[0].node.metadata["assembly_duplicates"] == [other]


def test_never_mutates_the_input_nodes() -> None:
    nodes = _db_nodes()
    snapshot = copy.deepcopy(nodes)
    ids = [id(n.node) for n in nodes]
    out = ContextAssemblyPostprocessor(budget=500).postprocess_nodes(nodes, query_str=Q)
    assert [n.model_dump() for n in nodes] == [n.model_dump() for n in snapshot]
    assert [id(n.node) for n in nodes] == ids
    assert all(o.node is not n.node for o in out for n in nodes)
    assert all(o.node.metadata is not n.node.metadata for o in out for n in nodes)


def test_index_node_object_is_shared_not_cloned() -> None:
    engine = {"a query engine": "stands here"}
    node = IndexNode(id_="idx", text="Summary of the databases page.", index_id="databases", obj=engine)
    out = ContextAssemblyPostprocessor(budget=300).postprocess_nodes(scored((node, 1.0)), query_str=Q)
    assert out[0].node is not node
    assert out[0].node.obj is engine
    assert "status" not in node.metadata


def test_internal_keys_hidden_from_llm_and_embedding_views() -> None:
    out = ContextAssemblyPostprocessor(budget=500, options=BY_ORDER).postprocess_nodes(_db_nodes(), query_str=Q)
    node = out[0].node
    llm, embed = node.get_content(metadata_mode=MetadataMode.LLM), node.get_content(metadata_mode=MetadataMode.EMBED)
    assert llm.startswith(
        "cite: 1\ntitle: Databases\nsection: Databases\nversion: 4.2\nstatus: current\n\nDjango supports"
    )
    assert "assembly_" not in llm
    assert "doc_id" not in llm
    assert "assembly_" not in embed
    assert "status" not in embed
    assert set(OUTPUT_KEYS) <= set(node.metadata)
    assert set(OUTPUT_KEYS) <= set(node.excluded_embed_metadata_keys)


def test_labels_only_false_keeps_the_users_own_llm_keys() -> None:
    nodes = scored((text_node("n", "Text.", version="4.2", author="ada", internal="x"), 1.0))
    nodes[0].node.excluded_llm_metadata_keys = ["internal"]
    out = ContextAssemblyPostprocessor(budget=500, labels_only=False).postprocess_nodes(nodes, query_str=Q)
    llm = out[0].node.get_content(metadata_mode=MetadataMode.LLM)
    assert "author: ada" in llm
    assert "internal" not in llm
    assert "assembly_" not in llm


def test_the_cores_budget_is_the_budget_one_report_one_count() -> None:
    # No second budget loop after the core: the default LLM view (labels only, the stock
    # templates) is shorter than the core's counted blocks, so it fits; the report's
    # decisions and tokens_after are the core's, untouched.
    nodes = scored(
        *(
            (
                text_node(
                    f"p{i}", f"Paragraph {i} on database backend number {i}. " * 8, version="4.2", title=f"Page {i}"
                ),
                1.0 - i / 10,
            )
            for i in range(12)
        )
    )
    pp = ContextAssemblyPostprocessor(budget=400)
    out = pp.postprocess_nodes(nodes, query_str=Q)
    report = pp.last_report
    assert 1 < len(out) < len(nodes)
    assert get_counter()(llm_view(out)) <= report.tokens_after <= 400
    assert {d.stage for d in report.decisions if not d.kept} == {"select"}
    assert [d.id for d in report.kept] == [n.node.node_id for n in out]
    assert [n.node.metadata["assembly_position"] for n in out] == list(range(len(out)))
    assert out[0].node.metadata["assembly_report"]["tokens_after"] == report.tokens_after


def test_a_longer_template_gets_its_room_from_reserve() -> None:
    nodes = scored(
        *((text_node(f"p{i}", f"Paragraph {i} on database backend number {i}. " * 8), 1.0 - i / 10) for i in range(6))
    )
    template = "SOURCE FOLLOWS. " * 10 + "\n{metadata_str}\n\n{content}"
    pp = ContextAssemblyPostprocessor(budget=700, text_template=template, options={"reserve": 250})
    out = pp.postprocess_nodes(nodes, query_str=Q)
    assert out
    assert get_counter()(llm_view(out)) <= 700


def test_changing_a_field_rebuilds_the_assembler() -> None:
    nodes = scored(*((text_node(f"n{i}", f"passage {w} about cats"), 1.0) for i, w in enumerate(WORDS)))
    pp = ContextAssemblyPostprocessor(budget=1000)

    def ranks() -> list[int]:
        return [n.node.metadata["assembly_relevance_rank"] for n in pp.postprocess_nodes(nodes, query_str=Q)]

    assert ranks() == [0, 2, 3, 1]  # bookend: best first, second best last
    pp.order = "relevance"
    assert ranks() == [0, 1, 2, 3]


def test_options_reach_the_assembler() -> None:
    nodes = scored(
        (text_node("hi", "Databases in Django 4.2.", version="4.2"), 0.9),
        (text_node("lo", "Databases are stores.", version="4.2"), 0.1),
    )
    pp = ContextAssemblyPostprocessor(budget=500, options={"min_score": 0.5})
    assert [n.node.node_id for n in pp.postprocess_nodes(nodes, query_str=Q)] == ["hi"]
    assert pp.last_report.fate(1).reason == "below_threshold"


def test_target_version_field_wins_over_the_question() -> None:
    nodes = scored(
        (text_node("a", "Backends.", version="4.2", doc_id="d"), 0.9),
        (text_node("b", "Backends.", version="5.2", doc_id="d"), 0.8),
    )
    out = ContextAssemblyPostprocessor(budget=500, target_version="5.2").postprocess_nodes(nodes, query_str=Q)
    assert [n.node.node_id for n in out] == ["b"]


async def test_async_path_matches_sync_and_fires_the_event(collector: Collect) -> None:
    pp = ContextAssemblyPostprocessor(budget=500, options=BY_ORDER)
    sync = pp.postprocess_nodes(_db_nodes(), query_str=Q)
    asyn = await pp.apostprocess_nodes(_db_nodes(), query_str=Q)
    assert [n.model_dump() for n in asyn] == [n.model_dump() for n in sync]
    assert len(collector.events) == 2
    event = collector.events[-1]
    assert event.node_ids == ["db#0"]
    assert [d["reason"] for d in event.report["decisions"]] == ["kept", "merged"]


def test_serialises_as_a_llamaindex_component() -> None:
    pp = ContextAssemblyPostprocessor(budget=800, order="edges", options={"max_per_doc": 2})
    data = pp.to_dict()
    assert data["class_name"] == "ContextAssemblyPostprocessor"
    assert (data["budget"], data["order"], data["options"]) == (800, "edges", {"max_per_doc": 2})
    assert data["reranker"] is None  # a model by name or path is kept; a model object is not (test_serialise.py)
    assert isinstance(pp.to_json(), str)


def test_reranker_and_embedder_reach_the_assembler() -> None:
    def reranker(query: str, texts: list[str]) -> list[float]:
        return [float(len(t)) for t in texts]

    def embedder(texts: list[str]) -> list[list[float]]:
        return [[1.0, float(len(t))] for t in texts]

    assert ContextAssemblyPostprocessor(budget=100).assembler.options.reranker is None
    pp = ContextAssemblyPostprocessor(budget=100, reranker=reranker, embedder=embedder, options={"max_per_doc": 2})
    options = pp.assembler.options
    assert (options.reranker, options.embedder, options.max_per_doc) == (reranker, embedder, 2)
    assert {"rerank", "semantic_dedup"} <= {s.name for s in pp.assembler.stages}


def test_assigning_a_bad_option_fails_naming_it() -> None:
    pp = ContextAssemblyPostprocessor(budget=100)
    with pytest.raises(ConfigError, match="format must be one of"):
        pp.options = {"format": "html"}


def test_missing_question_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="needs the question"):
        ContextAssemblyPostprocessor(budget=100).postprocess_nodes(scored((text_node("n", "t"), 1.0)))


def test_node_embeddings_are_reused_when_asked_and_the_report_says_so() -> None:
    seen: list[str] = []

    def bag(texts: list[str]) -> Any:  # an embedding function: a bag of WORDS, counting its texts
        seen.extend(texts)
        return [[t.count(w) + 0.01 for w in WORDS] for t in texts]

    def nodes() -> list[NodeWithScore]:
        a = TextNode(id_="a", text="alpha retry", embedding=[1.0, 0.0, 0.0, 0.0])
        b = TextNode(id_="b", text="beta cache", embedding=[0.0, 1.0, 0.0, 0.0])
        return scored((a, 0.9), (b, 0.8), (text_node("c", "gamma timeout"), 0.7))

    assert "embedding" not in nodes_to_chunks(nodes(), MetadataKeys())[0]
    assert nodes_to_chunks(nodes(), MetadataKeys(), embeddings=True)[0]["embedding"] == [1.0, 0.0, 0.0, 0.0]
    pp = ContextAssemblyPostprocessor(budget=500, embedder=bag, node_embeddings=True)
    pp.postprocess_nodes(nodes(), query_str="alpha")
    assert seen == ["gamma timeout"]  # only the node without a vector was embedded
    report = pp.last_report
    assert report is not None
    notes = [n for n in report.notes if n["event"] == "embeddings"]
    assert notes == [{"stage": "semantic_dedup", "event": "embeddings", "supplied": 2, "of": 3}]
    seen.clear()
    plain = ContextAssemblyPostprocessor(budget=500, embedder=bag)
    plain.postprocess_nodes(nodes(), query_str="alpha")
    # the default embeds the texts ("gamma timeout" is in the model's shared cache by now)
    assert sorted(seen) == ["alpha retry", "beta cache"]
    assert plain.last_report is not None
    assert not [n for n in plain.last_report.notes if n["event"] == "embeddings"]
