"""The two adapters agree: one options model, one budget rule, one metadata convention."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.documents import Document
from llama_index.core.schema import NodeWithScore, TextNode
from pydantic import ValidationError

from ctxassembly.metadata import OUTPUT_KEYS, MetadataKeys
from ctxassembly.options import Options
from langchain_ctxassembly import ContextAssemblyCompressor
from llamaindex_ctxassembly import ContextAssemblyPostprocessor

pytestmark = pytest.mark.unit

ADAPTERS = [ContextAssemblyCompressor, ContextAssemblyPostprocessor]


@pytest.mark.parametrize("adapter", ADAPTERS)
@pytest.mark.parametrize(
    ("values", "match"),
    [
        ({"top_n": 3}, r"top_n\n  Extra inputs are not permitted"),
        ({"budget": "1500"}, r"budget must be a positive int \(tokens\), got '1500'"),
        ({"budget": 0}, r"budget must be a positive int \(tokens\), got 0"),
        ({"options": {"rerank_fuse": -5}}, r"rerank_fuse must be a number"),
        ({"options": {"semantic_threshold": 7}}, r"semantic_threshold must be"),
        ({"options": {"extract_share": 5}}, r"extract_share must be"),
        ({"options": {"top_n": 3}}, r"unknown option 'top_n'; valid options: absent_version, acl_field, agreed_share"),
        ({"options": {"order": "edges"}}, r"set order as a field of .*, not in options"),
        ({"options": {"budget": 10}}, r"set budget as a field of .*, not in options"),
    ],
)
def test_both_adapters_refuse_the_same_values_with_the_same_words(
    adapter: Any, values: dict[str, Any], match: str
) -> None:
    with pytest.raises(ValidationError, match=match):
        adapter(**{"budget": 100, **values})


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_unknown_option_lists_exactly_the_cores_names(adapter: Any) -> None:
    with pytest.raises(ValidationError) as caught:
        adapter(budget=100, options={"bogus": 1})
    listed = str(caught.value).split("valid options: ", 1)[1].split(" [", 1)[0]
    assert listed.split(", ") == sorted(Options.names())


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_options_reach_the_core_as_one_options_object(adapter: Any) -> None:
    made = adapter(budget=100, order="relevance", options={"max_per_doc": 2, "near_threshold": 0.5})
    options = made.assembler.options
    assert isinstance(options, Options)
    assert (options.order, options.max_per_doc, options.near_threshold) == ("relevance", 2, 0.5)


META = {"title": "Databases", "version": "4.2", "doc_id": "ref/databases", "source": "ref/databases.txt"}
TEXTS = {
    "a": "Django 4.2 supports SQLite 3.21.0 and later.",
    "b": "Django 4.2 supports PostgreSQL 12 and higher.",
}


def _langchain(**fields: Any) -> list[dict[str, Any]]:
    docs = [Document(id=i, page_content=t, metadata={**META, "score": 0.5}) for i, t in TEXTS.items()]
    out = ContextAssemblyCompressor(budget=300, **fields).compress_documents(docs, "SQLite in Django 4.2")
    return [d.metadata for d in out]


def _llamaindex(**fields: Any) -> list[dict[str, Any]]:
    nodes = [NodeWithScore(node=TextNode(id_=i, text=t, metadata=dict(META)), score=0.5) for i, t in TEXTS.items()]
    out = ContextAssemblyPostprocessor(budget=300, **fields).postprocess_nodes(nodes, query_str="SQLite in Django 4.2")
    return [n.node.metadata for n in out]


def test_one_metadata_convention_in_both() -> None:
    lc, li = _langchain(), _llamaindex()
    assert [m["assembly_chunk_id"] for m in lc] == [m["assembly_chunk_id"] for m in li] == ["a", "b"]
    for a, b in zip(lc, li, strict=True):
        assert set(OUTPUT_KEYS) <= set(a) & set(b)
        same = ("assembly_position", "assembly_status", "assembly_labels", "assembly_merged_from", "assembly_decision")
        assert {k: a[k] for k in same} == {k: b[k] for k in same}
        assert a["assembly_retriever_score"] == b["assembly_retriever_score"] == 0.5
        assert a["assembly_score"] == b["assembly_score"] != 0.5  # the assembly's own score
        report = dict(a["assembly_report"])
        assert report == b["assembly_report"]


def test_metadata_keys_is_one_class_for_both() -> None:
    import langchain_ctxassembly
    import llamaindex_ctxassembly

    assert langchain_ctxassembly.MetadataKeys is llamaindex_ctxassembly.MetadataKeys is MetadataKeys
