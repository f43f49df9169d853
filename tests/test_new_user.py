"""What a new user trips over first (issue 29), through the real objects a user has:
LangChain Documents from DirectoryLoader/TextLoader and the text splitters, LlamaIndex
nodes from SimpleDirectoryReader and MarkdownNodeParser (the app in tests/user_app.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from llama_index.core import SimpleDirectoryReader
from llama_index.core.schema import NodeWithScore

from ctxassembly import assemble, parse
from langchain_ctxassembly import ContextAssemblyCompressor
from llamaindex_ctxassembly import ContextAssemblyPostprocessor
from tests import user_app

pytestmark = pytest.mark.integration


# -- point 3: empty and whitespace-only texts leave with a reason ---------------------------


def _write_blank_files(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "a_retries.txt").write_text("Retries\n\nThe client retries a failed request 5 times.\n")
    (root / "b_empty.txt").write_text("")
    (root / "c_blank.txt").write_text("  \n\n\t \n")
    (root / "d_invisible.txt").write_text("\u200b\ufeff \n")  # zero-width space, BOM: nothing to read
    return root


@pytest.mark.parametrize("text", ["", " ", "\n\n", "\t \u00a0\n", "\u200b", "\ufeff\u200d "])
def test_a_text_with_nothing_to_read_leaves_as_empty(text: str) -> None:
    chunks = [{"id": "a", "text": "The retry limit is 5.", "score": 1.0}, {"id": "b", "text": text, "score": 2.0}]
    res = assemble("What is the retry limit?", chunks, budget=300)
    fate = res.report.fate(1)
    assert (fate.stage, fate.reason, fate.detail["chars"]) == ("input", "empty", len(text))
    assert [b["text"] for b in parse(res.text)] == ["The retry limit is 5."]
    assert res.report.reasons["empty"] == 1


def test_a_visible_character_is_not_empty() -> None:
    res = assemble("q", [{"id": "a", "text": "\u200b-"}, {"id": "b", "text": " x "}], budget=300)
    assert res.report.reasons["kept"] == 2


def test_langchain_loader_documents_with_no_text_leave_as_empty(tmp_path: Path) -> None:
    docs = user_app.load_langchain(_write_blank_files(tmp_path / "docs"), glob="*.txt")
    assert len(docs) == 4  # the loader hands over empty files as Documents
    compressor = ContextAssemblyCompressor(budget=400)
    out = compressor.compress_documents(docs, "How many retries?")
    assert [Path(d.metadata["source"]).name for d in out] == ["a_retries.txt"]
    report = compressor.last_report
    assert report is not None
    empty = {Path(docs[d.index].metadata["source"]).name for d in report.dropped if d.reason == "empty"}
    assert empty == {"b_empty.txt", "c_blank.txt", "d_invisible.txt"}
    context = compressor.format_documents(out)
    assert len(parse(context)) == 1  # no empty block


def test_llamaindex_reader_documents_with_no_text_leave_as_empty(tmp_path: Path) -> None:
    documents = SimpleDirectoryReader(str(_write_blank_files(tmp_path / "docs"))).load_data()
    scored = [NodeWithScore(node=d, score=1.0) for d in documents]
    pp = ContextAssemblyPostprocessor(budget=400)
    out = pp.postprocess_nodes(scored, query_str="How many retries?")
    assert [Path(n.node.metadata["file_path"]).name for n in out] == ["a_retries.txt"]
    assert pp.last_report is not None
    assert pp.last_report.reasons["empty"] == len(documents) - 1
