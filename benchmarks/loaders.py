"""The adapters fed what real loaders give, for /work/shared/bench/matrix.py --meta source.

* ``langchain_source``: LangChain ``Document``s with metadata ``{"source": url, "title": ...}``
  (a web loader) through ``ContextAssemblyCompressor``.
* ``llamaindex_file_path``: LlamaIndex nodes with ``file_path`` / ``file_name`` made from the
  URL's path (a directory reader over a docs mirror), the same ``title``, and a fresh
  ``ref_doc_id`` per file, through ``ContextAssemblyPostprocessor``.

Fair call as in benchmarks/adapters.py: question, candidates, target version only when the
question names it (passed as the adapter's ``target_version``).

    PYTHONPATH=$PWD python ../shared/bench/matrix.py --meta source \\
        --pipeline benchmarks/loaders.py:langchain_source --pipeline benchmarks/loaders.py:llamaindex_file_path
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit


def _target(record: dict[str, Any]) -> str | None:
    return record["target_version"] if record.get("version_explicit") else None


def langchain_source(record: dict[str, Any], budget: int) -> list[Any]:
    from langchain_core.documents import Document

    from langchain_ctxassembly import ContextAssemblyCompressor

    docs = []
    for c in record["candidates"]:
        meta = {k: c[k] for k in ("source", "title") if c.get(k) is not None}
        docs.append(Document(page_content=c["text"], metadata={"id": c["id"], **meta}))
    compressor = ContextAssemblyCompressor(budget=budget, target_version=_target(record))
    return compressor.compress_documents(docs, record["question"])


def llamaindex_file_path(record: dict[str, Any], budget: int) -> list[Any]:
    from llama_index.core.schema import NodeRelationship, NodeWithScore, RelatedNodeInfo, TextNode

    from llamaindex_ctxassembly import ContextAssemblyPostprocessor

    nodes = []
    for i, c in enumerate(record["candidates"]):
        meta: dict[str, Any] = {"id": c["id"]}
        if c.get("title"):
            meta["title"] = c["title"]
        if c.get("source"):
            path = urlsplit(c["source"]).path.strip("/").removesuffix(".html")
            meta["file_path"] = f"/data/mirror/{path}.md"
            meta["file_name"] = path.rsplit("/", 1)[-1] + ".md"
        node = TextNode(id_=f"n{i}", text=c["text"], metadata=meta)
        node.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=f"file-{i}")
        nodes.append(NodeWithScore(node=node, score=c.get("score")))
    pp = ContextAssemblyPostprocessor(budget=budget, target_version=_target(record))
    return pp.postprocess_nodes(nodes, query_str=record["question"])
