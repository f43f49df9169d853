"""What a new user trips over first (issue 29), through the real objects a user has:
LangChain Documents from DirectoryLoader/TextLoader and the text splitters, LlamaIndex
nodes from SimpleDirectoryReader and MarkdownNodeParser (the app in tests/user_app.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from llama_index.core import SimpleDirectoryReader
from llama_index.core.schema import NodeWithScore

from ctxassembly import AbsentVersionError, AbsentVersionWarning, assemble, parse
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


# -- point 2: an absent target version warns, and a documented option chooses ---------------


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return user_app.write_project(tmp_path_factory.mktemp("app"))


@pytest.fixture(scope="module")
def lc_docs(project: Path) -> list[Any]:
    return user_app.split_langchain(user_app.load_langchain(project))


@pytest.fixture(scope="module")
def li_nodes(project: Path) -> list[Any]:
    return user_app.load_llamaindex(project)


def _release(source: str) -> str:
    return next(p for p in Path(source).parts if p.startswith("tally-")).removeprefix("tally-")


STDERR = "How do I read stderr separately with the runner?"


def test_an_absent_caller_target_warns_and_answers_for_the_latest(lc_docs: list[Any]) -> None:
    compressor = ContextAssemblyCompressor(budget=1000, target_version="9.9")
    with pytest.warns(AbsentVersionWarning, match=r"target_version '9.9' matches no candidate's version \(present: "):
        out = compressor.compress_documents(lc_docs, STDERR)
    assert out
    assert {_release(d.metadata["source"]) for d in out} == {"8.2.1"}
    report = compressor.last_report
    assert report is not None
    note = next(n for n in report.notes if n["event"] == "absent_version")
    assert (note["version"], note["asked_by"], note["policy"]) == ("9.9", "target_version", "latest")
    assert report.target_version == "8.2.1"
    assert report.reasons["superseded"] > 0


def test_absent_version_empty_keeps_the_target_and_error_raises(lc_docs: list[Any]) -> None:
    empty = ContextAssemblyCompressor(budget=1000, target_version="9.9", options={"absent_version": "empty"})
    with pytest.warns(AbsentVersionWarning, match="every versioned chunk leaves"):
        assert empty.compress_documents(lc_docs, STDERR) == []
    strict = ContextAssemblyCompressor(budget=1000, target_version="9.9", options={"absent_version": "error"})
    with pytest.raises(AbsentVersionError, match=r"target_version '9.9' matches no candidate's version") as info:
        strict.compress_documents(lc_docs, STDERR)
    assert (info.value.version, info.value.present) == ("9.9", ["7.1.2", "8.1.7", "8.2.1"])
    # a version that is there: no warning (pytest turns any warning into an error here)
    kept = ContextAssemblyCompressor(budget=1000, target_version="8.1").compress_documents(lc_docs, STDERR)
    assert {_release(d.metadata["source"]) for d in kept} == {"8.1.7"}


def test_a_question_naming_an_absent_version_warns(li_nodes: list[Any]) -> None:
    scored = [NodeWithScore(node=n, score=1.0 - i / 100) for i, n in enumerate(li_nodes)]
    pp = ContextAssemblyPostprocessor(budget=1000)
    with pytest.warns(AbsentVersionWarning, match=r"the question names '9.9'.*latest version of each document"):
        out = pp.postprocess_nodes(scored, query_str="How do I read stderr with tally 9.9?")
    assert {_release(n.node.metadata["file_path"]) for n in out} == {"8.2.1"}
    with pytest.raises(AbsentVersionError, match=r"the question names '9\.9'"):
        ContextAssemblyPostprocessor(budget=1000, options={"absent_version": "error"}).postprocess_nodes(
            scored, query_str="How do I read stderr with tally 9.9?"
        )
