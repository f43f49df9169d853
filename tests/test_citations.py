"""Citation ids and sources (issue 18, point 2): what the model reads, it can cite, and
every citation maps back to the real chunk id (report, LangChain metadata, LlamaIndex node).

Real loaders, splitters and framework objects; no model is needed (scores are given)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_text_splitters import RecursiveCharacterTextSplitter
from llama_index.core import SimpleDirectoryReader
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode

from ctxassembly import assemble, parse
from ctxassembly.metadata import MetadataKeys
from ctxassembly.render import Renderer
from ctxassembly.tokens import get_counter
from langchain_ctxassembly import ContextAssemblyCompressor, format_documents
from llamaindex_ctxassembly import ContextAssemblyPostprocessor

pytestmark = pytest.mark.integration

UUIDS = [
    "9b2f6a57-1c1e-4c1f-8d0e-5b7a3f0e2c11",
    "0d6b1e0a-7f49-4a55-b1f3-2a9e8c7d4e22",
    "c3a1d2e4-5f60-4b7a-9c8d-e0f1a2b3c433",
]
QUESTION = "How many retries does the client make?"


def _write(root: Path) -> Path:
    docs = root / "home" / "ana" / "projects" / "acme" / "docs"
    docs.mkdir(parents=True)
    (docs / "retries.txt").write_text(
        "Retries\n\nThe client retries a failed request 5 times, waiting 2 seconds between attempts.\n"
    )
    (docs / "timeouts.txt").write_text("Timeouts\n\nA request times out after 30 seconds unless timeout= is set.\n")
    (docs / "proxies.txt").write_text("Proxies\n\nSet HTTPS_PROXY to route requests through a proxy.\n")
    return docs


def load_directory(path: Path) -> list[Any]:
    """LangChain's DirectoryLoader + TextLoader over ``path`` (``*.txt``)."""
    with warnings.catch_warnings():
        # langchain-community warns on import that it is being sunset; its loaders are still
        # what a LangChain user loads files with
        warnings.filterwarnings("ignore", message="`langchain-community` is being sunset", category=DeprecationWarning)
        from langchain_community.document_loaders import DirectoryLoader, TextLoader

    return DirectoryLoader(str(path), glob="*.txt", loader_cls=TextLoader).load()


def test_the_report_maps_every_citation_to_the_real_id() -> None:
    chunks = [
        {"id": UUIDS[0], "text": "The client retries a failed request 5 times.", "score": 0.9},
        {"id": UUIDS[1], "text": "A request times out after 30 seconds.", "score": 0.5},
        {"id": UUIDS[2], "text": "The client retries a failed request 5 times.", "score": 0.4},  # duplicate
    ]
    res = assemble(QUESTION, chunks, budget=300, order="relevance")
    shown = [b["id"] for b in parse(res.text)]
    assert shown == [str(i + 1) for i in range(len(res.chunks))]
    assert not any(u in res.text for u in UUIDS)  # no UUID costs tokens in the context
    assert res.report.citations == {str(i + 1): c.id for i, c in enumerate(res.chunks)}
    for d in res.report.decisions:
        assert d.to_dict()["cite"] == d.cite
        assert (d.cite is None) == (not d.kept)
    assert res.report.to_dict()["citations"] == res.report.citations
    assert "[1]" in res.report.table()


def test_evidence_format_shows_the_citation_once_not_the_id() -> None:
    res = assemble(
        QUESTION, [{"id": UUIDS[0], "text": "Retries: 5.", "title": "Retries"}], budget=200, format="evidence"
    )
    assert res.text.splitlines()[0] == "[1] Retries (unversioned)"
    assert UUIDS[0] not in res.text


def test_langchain_loader_documents_show_their_file_name_and_cite_back(tmp_path: Path) -> None:
    docs_dir = _write(tmp_path)
    loaded = load_directory(docs_dir)
    splits = RecursiveCharacterTextSplitter(chunk_size=200, chunk_overlap=0, add_start_index=True).split_documents(
        loaded
    )
    docs = [Document(id=UUIDS[i], page_content=d.page_content, metadata=d.metadata) for i, d in enumerate(splits)]
    assert all(str(docs_dir) in d.metadata["source"] for d in docs)  # loaders write absolute paths
    compressor = ContextAssemblyCompressor(budget=400)
    out = compressor.compress_documents(docs, QUESTION)
    context = compressor.format_documents(out)
    blocks = parse(context)
    assert str(tmp_path) not in context  # no absolute path (tokens, and a home directory) in the prompt
    names = {Path(d.metadata["source"]).name for d in docs}
    assert {b["source"] for b in blocks} <= names
    assert blocks[0]["source"] == "retries.txt"
    for i, (block, doc) in enumerate(zip(blocks, out, strict=True)):
        facts = doc.metadata  # the flat assembly_* keys of ctxassembly.metadata
        assert block["id"] == facts["assembly_cite"] == facts["assembly_labels"]["id"] == str(i + 1)
        assert facts["assembly_chunk_id"] == doc.id
        assert compressor.last_report.citations[facts["assembly_cite"]] == doc.id  # type: ignore[union-attr]
    # re-rendering the returned documents gives the context the core counted
    assert context == compressor.assemble(docs, QUESTION).context
    # a subset, in another order, keeps its citation ids: a reply's [2] still means the same document
    assert len(out) > 1
    again = parse(format_documents(list(reversed(out))))
    assert [b["id"] for b in again] == [d.metadata["assembly_cite"] for d in reversed(out)]
    # documents of two calls would repeat ids: they are numbered afresh instead
    other = compressor.compress_documents(docs, "Which proxy variable is read?")
    mixed = parse(format_documents([*out, *other]))
    assert [b["id"] for b in mixed] == [str(i + 1) for i in range(len(out) + len(other))]


def test_llamaindex_reader_nodes_show_their_file_name_and_cite(tmp_path: Path) -> None:
    docs_dir = _write(tmp_path)
    documents = SimpleDirectoryReader(str(docs_dir)).load_data()
    nodes = SentenceSplitter(chunk_size=128, chunk_overlap=0).get_nodes_from_documents(documents)
    scored = [NodeWithScore(node=n, score=1.0 - i / 10) for i, n in enumerate(nodes)]
    pp = ContextAssemblyPostprocessor(budget=400, order="relevance")
    out = pp.postprocess_nodes(scored, query_str=QUESTION)
    assert out
    report = pp.last_report
    assert report is not None
    for i, n in enumerate(out):
        view = n.node.get_content(metadata_mode=MetadataMode.LLM)
        name = Path(n.node.metadata["file_path"]).name
        assert view.startswith(f"cite: {i + 1}\nsource: {name}\n")
        assert str(tmp_path) not in view  # the stock view shows the absolute file_path
        assert report.citations[str(i + 1)] == n.node.node_id
        assert n.node.metadata["cite"] == n.node.metadata["assembly_cite"] == str(i + 1)
        assert n.node.metadata["assembly_chunk_id"] == n.node.node_id
        assert "assembly_cite" not in view  # the LLM reads the label, not the fact
        assert "cite" not in n.node.get_content(metadata_mode=MetadataMode.EMBED)
    assert "cite" not in scored[0].node.metadata  # the caller's nodes are untouched


def test_llamaindex_titled_node_shows_no_source_and_keys_move_the_labels() -> None:
    # the core shows a source only without a title: the LLM view must not show one either
    texts = [
        TextNode(text="The client retries 5 times.", metadata={"title": "Retries", "source": "/a/r.md"}),
        TextNode(text="Timeouts are 30 seconds.", metadata={"file_path": "/a/b/timeouts.md"}),
    ]
    nodes = [NodeWithScore(node=n) for n in texts]
    pp = ContextAssemblyPostprocessor(budget=400, order="reading", keys=MetadataKeys(cite="ref", source="from"))
    out = pp.postprocess_nodes(nodes, query_str=QUESTION)
    views = [n.node.get_content(metadata_mode=MetadataMode.LLM) for n in out]
    assert views[0].startswith("ref: 1\ntitle: Retries\n")
    assert "r.md" not in views[0]
    assert views[1].startswith("ref: 2\nfrom: timeouts.md\n")


def test_a_given_source_url_is_shown_whole_and_a_title_replaces_it() -> None:
    url = "https://docs.example.org/en/2.1/guide/retries.html"
    chunks = [
        {"id": "a", "text": "The client retries 5 times.", "source": url},
        {"id": "b", "text": "Timeouts are 30 seconds.", "source": url.replace("retries", "timeouts"), "title": "T"},
    ]
    res = assemble(QUESTION, chunks, budget=300, order="relevance")
    blocks = {b["text"]: b for b in parse(res.text)}
    assert blocks[chunks[0]["text"]]["source"] == url
    assert "source" not in blocks[chunks[1]["text"]]


def test_select_budgets_with_the_labels_the_context_shows() -> None:
    # the rendered context, citation ids and sources included, stays within the budget
    chunks = [
        {"id": f"u{i}", "text": f"Paragraph {i} about retries. " * 12, "source": f"/x/y/doc{i}.md"} for i in range(30)
    ]
    count = get_counter()
    for budget in (120, 250, 600):
        res = assemble(QUESTION, chunks, budget=budget)
        assert count(res.text) <= budget
        assert res.text == Renderer("xml").render(res.chunks)
