"""The version stage through the LlamaIndex postprocessor with what directory readers give."""

from __future__ import annotations

import pytest
from llama_index.core.schema import MetadataMode, NodeRelationship, NodeWithScore, RelatedNodeInfo, TextNode

from llamaindex_ctxassembly import ContextAssemblyPostprocessor

pytestmark = pytest.mark.unit

TEXT = "Django supports PostgreSQL {pg} and higher. The psycopg adapter is required for connections."


def nodes() -> list[NodeWithScore]:
    # SimpleDirectoryReader: file_path / file_name metadata and a fresh ref_doc_id per file
    out = []
    for i, (v, pg) in enumerate((("5.2", "14"), ("5.1", "13"), ("4.2", "12"))):
        node = TextNode(
            id_=f"node-{v}",
            text=TEXT.format(pg=pg),
            metadata={"file_path": f"/data/django-{v}-ref-databases.md", "file_name": f"django-{v}-ref-databases.md"},
        )
        node.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=f"file-uuid-{i}")
        out.append(NodeWithScore(node=node, score=0.8 - i / 10))
    return out


def test_version_only_in_file_path_question_names_it() -> None:
    out = ContextAssemblyPostprocessor(budget=300).postprocess_nodes(
        nodes(), query_str="Which PostgreSQL does Django 4.2 support?"
    )
    assert [n.node.node_id for n in out] == ["node-4.2"]
    assert out[0].node.metadata["version"] == "4.2"  # the label the core counted and the LLM reads
    assert out[0].node.metadata["assembly_version_from"] == "path"
    assert "version: 4.2" in out[0].node.get_content(metadata_mode=MetadataMode.LLM)


def test_version_only_in_file_path_latest_per_file() -> None:
    out = ContextAssemblyPostprocessor(budget=300).postprocess_nodes(
        nodes(), query_str="Which PostgreSQL is supported?"
    )
    assert [n.node.node_id for n in out] == ["node-5.2"]
