"""What a new user trips over first (issue 29), through the real objects a user has:
LangChain Documents from DirectoryLoader/TextLoader and the text splitters, LlamaIndex
nodes from SimpleDirectoryReader and MarkdownNodeParser (the app in tests/user_app.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document
from llama_index.core import SimpleDirectoryReader
from llama_index.core.schema import NodeWithScore

from ctxassembly import AbsentVersionError, AbsentVersionWarning, ConfigError, assemble, parse
from ctxassembly.errors import UntrainedModelWarning
from ctxassembly.metadata import MetadataKeys
from ctxassembly.versioning.headings import heading_version, release_headings
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


# -- point 1: a changelog is many versions in one file ------------------------------------


def _changes(docs: list[Any], release: str) -> list[Any]:
    source = [d.metadata["source"] for d in docs]
    return [d for d, s in zip(docs, source, strict=True) if s.endswith("CHANGES.rst") and _release(s) == release]


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("Version 7.1.2", ("7.1.2", False)),
        ("7.1.2 (2020-04-27)", ("7.1.2", True)),
        ("[8.2.0] - 2024-05-01", ("8.2.0", True)),
        ("v1.4.0rc1 (unreleased)", ("1.4.0rc1", True)),
        ("Release 5.5.0 — May 3, 2019", ("5.5.0", True)),
        ("5.5.2", ("5.5.2", False)),
        ("Dropped support for MariaDB 10.4", None),
        ("What's new in 5.1", None),
        ("Python 3.12 support", None),
    ],
)
def test_version_headings_are_parsed_generally(heading: str, expected: tuple[str, bool] | None) -> None:
    assert heading_version(heading) == expected


def test_released_line_below_a_bare_heading_makes_it_a_release() -> None:
    text = ".. _v-2:\n\nVersion 2.0.1\n-------------\n\nReleased 2020-04-27\n\n- a fix\n\n2.0.0\n=====\n\n- other\n"
    assert [(v, dated) for _, v, dated in release_headings(text)] == [("2.0.1", True), ("2.0.0", False)]
    assert release_headings("## [8.2.0] - 2024-05-01\n\n### Fixed\n") == ((0, "8.2.0", True),)


def test_a_changelog_section_gets_its_release_and_older_ones_leave(lc_docs: list[Any]) -> None:
    compressor = ContextAssemblyCompressor(budget=4000, order="reading")
    out = compressor.compress_documents(lc_docs, STDERR)
    report = compressor.last_report
    assert report is not None
    changes = [d for d in out if d.metadata["source"].endswith("CHANGES.rst")]
    labels = [d.metadata["assembly_labels"]["version"] for d in changes]
    assert set(labels) <= {"8.2.0", "8.2.1"}, labels  # the releases since the 8.1.7 docs
    assert "8.2.0" in labels
    for d in changes:
        assert d.metadata["assembly_version_from"] == "text"
        assert _release(d.metadata["source"]) == "8.2.1"
    answer = next(d for d in changes if "result.stderr" in d.page_content)
    assert answer.metadata["assembly_labels"]["version"] == "8.2.0"
    # every 8.2.1 CHANGES chunk under an older release heading left as other_version
    newest = {id(d): i for i, d in enumerate(lc_docs)}
    describes = {
        d.detail["describes"] for d in report.dropped if d.reason == "other_version" and "describes" in d.detail
    }
    assert {"8.0.0", "7.0"} <= describes, describes
    old = next(d for d in _changes(lc_docs, "8.2.1") if "mix_stderr=False" in d.page_content)
    fate = report.fate(newest[id(old)])
    assert (fate.reason, fate.detail["describes"], fate.detail["from"]) == ("other_version", "7.0", "text")
    context = compressor.format_documents(out)
    assert "mix_stderr=False" not in context
    assert 'version="8.2.0"' in context


def test_a_changelog_section_of_the_target_release_stays_when_the_question_names_it(lc_docs: list[Any]) -> None:
    compressor = ContextAssemblyCompressor(budget=4000, target_version="7.1")
    out = compressor.compress_documents(lc_docs, "What changed in 7.1.2?")
    changes = [d for d in out if d.metadata["source"].endswith("CHANGES.rst")]
    assert changes
    assert {d.metadata["assembly_labels"]["version"] for d in changes} == {"7.1.2"}
    assert {_release(d.metadata["source"]) for d in changes} == {"7.1.2"}


def test_llamaindex_changelog_nodes_are_labelled_with_their_release(li_nodes: list[Any]) -> None:
    scored = [NodeWithScore(node=n, score=1.0 - i / 100) for i, n in enumerate(li_nodes)]
    pp = ContextAssemblyPostprocessor(budget=4000)
    out = pp.postprocess_nodes(scored, query_str=STDERR)
    changes = [n for n in out if n.node.metadata["file_path"].endswith("CHANGES.rst")]
    assert changes
    assert {n.node.metadata["assembly_labels"]["version"] for n in changes} <= {"8.2.0", "8.2.1"}
    assert all("mix_stderr=False" not in n.node.get_content() for n in out)


def _page(records: list[dict[str, Any]], doc_id: str, versions: tuple[str, ...]) -> list[dict[str, Any]]:
    return [{**r, "score": 1.0} for r in records if r["doc_id"] == doc_id and r["version"] in versions]


def test_the_pytest_changelog_sections_are_about_their_releases(dev_data: Any) -> None:
    corpus = dev_data.corpus("pytest")
    page = _page(corpus, "changelog", ("8.3", "9.2"))
    res = assemble("What changed?", page, budget=100_000, max_share=None)
    kept = [c for c in res.chunks if c.meta.get("version_key") == "heading"]
    assert kept
    for c in kept:  # the latest docs, 9.2: the releases since the 8.3 docs
        assert c.id.startswith("9.2:")
        assert c.meta["version_from"] == "text"
        assert c.version.split(".")[:2] in (["8", "4"], ["9", "0"], ["9", "1"], ["9", "2"]), c.version
    older = [d for d in res.report.dropped if d.reason == "other_version" and d.detail.get("from") == "text"]
    assert len(older) > 100  # the sections of 8.3.0 and before, in the 9.2 changelog
    assert all(d.id.startswith("9.2:") for d in older)
    # the 8.3 docs' copy of the 8.3 sections answers a question that names 8.3
    res = assemble("What changed in pytest 8.3?", page, budget=100_000, max_share=None)
    assert res.report.target_version == "8.3"
    labels = {c.version for c in res.chunks if c.meta.get("version_key") == "heading"}
    assert labels
    assert all(v.split(".")[0] == "8" for v in labels), labels


def test_the_celery_changelog_sections_are_about_their_releases(dev_data: Any) -> None:
    corpus = dev_data.corpus("celery")
    page = [
        {**r, "score": 1.0}
        for r in corpus
        if r["doc_id"] in ("history/changelog-5.5", "history/changelog-5.7") and r["version"] in ("5.5", "5.7")
    ]
    res = assemble("What changed?", page, budget=100_000, max_share=None)
    headed = [c for c in res.chunks if c.meta.get("version_key") == "heading"]
    assert len(headed) >= 20
    for c in headed:  # the latest docs, 5.7: its own changelog's releases
        assert c.id.startswith("5.7:history/changelog-5.7")
        assert c.version.startswith("5.7"), c.version
    inputs = {r["id"]: r for r in page}
    older = [d for d in res.report.dropped if inputs[d.id]["doc_id"] == "history/changelog-5.5"]
    by_docs = {v: [d for d in older if inputs[d.id]["version"] == v] for v in ("5.5", "5.7")}
    # the 5.7 docs' copy of the 5.5 changelog: every release section leaves as another version's
    assert len(by_docs["5.7"]) > 60
    assert all(d.reason == "other_version" and d.detail["from"] == "text" for d in by_docs["5.7"])
    assert all(d.detail["describes"].startswith("5.5") for d in by_docs["5.7"])
    assert all(d.reason == "superseded" for d in by_docs["5.5"])  # the 5.5 docs' own copy
    # a question that names 5.5: the 5.5 docs' sections stay, labelled with their 5.5 releases
    res = assemble("What changed in Celery 5.5?", page, budget=100_000, max_share=None)
    assert res.report.target_version == "5.5"
    labels = {c.version for c in res.chunks if c.meta.get("version_key") == "heading"}
    assert len(labels) > 5
    assert all(v.startswith("5.5") for v in labels), labels


def test_a_real_markdown_changelog_split_by_headers_gets_its_releases(tmp_path: Path) -> None:
    # Black's CHANGES.md of two releases (tests/data/black_changes), one folder a release,
    # loaded and split as the Markdown splitter's users do (headings stripped into metadata)
    import gzip
    import warnings

    from langchain_text_splitters import MarkdownHeaderTextSplitter

    with warnings.catch_warnings():  # as tests/user_app.py: the package warns that it is being sunset
        warnings.filterwarnings("ignore", message="`langchain-community` is being sunset", category=DeprecationWarning)
        from langchain_community.document_loaders import TextLoader

    splitter = MarkdownHeaderTextSplitter([("#", "Header 1"), ("##", "Header 2"), ("###", "Header 3")])
    docs = []
    for release in ("23.12.1", "25.1.0"):
        path = tmp_path / "black" / release / "CHANGES.md"
        path.parent.mkdir(parents=True)
        data = Path(__file__).parent / "data" / "black_changes" / f"CHANGES-{release}.md.gz"
        path.write_text(gzip.decompress(data.read_bytes()).decode("utf-8"), encoding="utf-8")
        (loaded,) = TextLoader(str(path), encoding="utf-8").load()
        for part in splitter.split_text(loaded.page_content):
            docs.append(Document(part.page_content, metadata={**loaded.metadata, **part.metadata}))
    assert not any(d.page_content.startswith("## ") for d in docs)  # the release is only in Header 2
    compressor = ContextAssemblyCompressor(budget=100_000, options={"max_share": None})
    out = compressor.compress_documents(docs, "What changed in the stable style?")
    report = compressor.last_report
    assert report is not None
    assert report.target_version == "25.1.0"
    labels = {d.metadata["assembly_labels"]["version"] for d in out}
    # the 25.1.0 file's sections of the releases since the 23.12.1 docs, each labelled with its own
    assert {"25.1.0", "24.1.0", "24.10.0"} <= labels
    assert all(v == "25.1.0" or v.startswith("24.") for v in labels), labels
    assert all(Path(d.metadata["source"]).parent.name == "25.1.0" for d in out)
    assert all(d.metadata["assembly_version_from"] == "text" for d in out if d.metadata["Header 2"] != "25.1.0")
    older = [d for d in report.dropped if d.reason == "other_version"]
    assert {"23.12.0", "23.7.0"} <= {d.detail["describes"] for d in older}
    assert all(d.detail["describes"].startswith("23.") for d in older)
    assert {d.reason for d in report.dropped if Path(docs[d.index].metadata["source"]).parent.name == "23.12.1"} == {
        "superseded"
    }


def test_the_django_deprecation_timeline_sections_are_about_their_releases(dev_data: Any) -> None:
    corpus = dev_data.corpus("django")
    page = _page(corpus, "internals/deprecation", ("5.1", "5.2"))
    res = assemble("Which features were removed?", page, budget=100_000, max_share=None)
    fates = {d.id: d for d in res.report.decisions}
    by_section = {}
    for r in page:
        if r["version"] == "5.2":
            by_section.setdefault(r["section"].split(" > ")[-1], []).append(fates[r["id"]])
    # "6.0" is newer than the 5.2 docs that hold it: it announces, it is no release; it stays
    assert all(d.kept for d in by_section["6.0"])
    # the sections of 5.1 and before describe older releases: other_version, from the text
    for section in ("5.1", "5.0", "4.0", "1.5"):
        assert all((d.reason, d.detail["describes"]) == ("other_version", section) for d in by_section[section])


# -- point 5: labels for plain files ----------------------------------------------------------


def test_markdown_header_splitter_headers_are_the_section_label(lc_docs: list[Any]) -> None:
    md = [
        d for d in lc_docs if d.metadata["source"].endswith("options.md") and _release(d.metadata["source"]) == "8.2.1"
    ]
    out = ContextAssemblyCompressor(budget=2000, order="reading").compress_documents(
        md, "How do multiple options work?"
    )
    sections = [d.metadata["assembly_labels"].get("section") for d in out]
    assert "Options > Multiple Values > Defaults" in sections
    assert "Options > Multiple Values" in sections
    assert len(set(sections)) == len(sections)  # two chunks of one file no longer look the same


def test_llamaindex_markdown_header_path_and_own_heading_are_the_section(li_nodes: list[Any]) -> None:
    md = [n for n in li_nodes if n.metadata["file_path"].endswith("options.md") and "8.2.1" in n.metadata["file_path"]]
    # merge_gap=None: the parser's neighbours would merge into one node (the first one's section)
    pp = ContextAssemblyPostprocessor(budget=2000, order="reading", options={"merge_gap": None})
    out = pp.postprocess_nodes([NodeWithScore(node=n, score=1.0) for n in md], query_str="How do options work?")
    sections = [n.node.metadata["assembly_labels"].get("section") for n in out]
    assert sections == [
        "Options",
        "Options > Naming",
        "Options > Multiple Values",
        "Options > Multiple Values > Defaults",
    ]


def test_a_plain_file_chunk_is_labelled_with_its_own_leading_heading(lc_docs: list[Any]) -> None:
    rst = [d for d in lc_docs if d.metadata["source"].endswith(("testing.rst", "CHANGES.rst"))]
    rst = [d for d in rst if _release(d.metadata["source"]) == "8.2.1"]
    out = ContextAssemblyCompressor(budget=3000, order="reading").compress_documents(rst, STDERR)
    sections = {d.metadata["assembly_labels"].get("section") for d in out}
    assert {"Testing Tally Applications", "Version 8.2.1"} <= sections
    # a chunk that opens mid-section names none: no label is made up
    assert any(d.metadata["assembly_labels"].get("section") is None for d in out)


def test_the_header_keys_are_configurable() -> None:
    docs = [Document(page_content="Set retries=5.", metadata={"h1": "Client", "h2": "Retries", "source": "a.md"})]
    out = ContextAssemblyCompressor(budget=300, keys=MetadataKeys(headers=("h1", "h2"))).compress_documents(docs, "q")
    assert out[0].metadata["assembly_labels"]["section"] == "Client > Retries"
    given = Document(page_content="## Own\n\nx", metadata={"section": "Given", "Header 1": "Ignored"})
    assert (
        ContextAssemblyCompressor(budget=300).compress_documents([given], "q")[0].metadata["assembly_labels"]["section"]
        == "Given"
    )
    with pytest.raises(ConfigError, match=r"MetadataKeys.headers: expected a metadata key"):
        MetadataKeys(headers=())


# -- point 4: a readable report table ---------------------------------------------------------


def test_the_report_table_reads_for_a_person(lc_docs: list[Any]) -> None:
    uuids = [f"{i:08x}-7f49-4a55-b1f3-2a9e8c7d4e22" for i in range(len(lc_docs))]
    docs = [
        Document(id=u, page_content=d.page_content, metadata=d.metadata) for u, d in zip(uuids, lc_docs, strict=True)
    ]
    compressor = ContextAssemblyCompressor(budget=400)
    compressor.compress_documents(docs, STDERR)
    report = compressor.last_report
    assert report is not None
    lines = report.table().splitlines()
    assert lines[0].startswith(f"{STDERR!r}: kept {len(report.kept)} of {len(docs)}, ")
    assert lines[1].split() == ["#", "cite", "id", "from", "version", "fate", "stage", "reason", "detail"]
    assert not any(u in report.table() for u in uuids)  # short ids, unique within the call
    rows = {int(line.split()[0]): line for line in lines[3:]}
    for d in report.decisions:
        row = rows[d.index]
        assert d.id[:8] + "…" in row
        if d.kept:
            assert f"[{d.cite}]" in row
        if d.reason == "over_budget":
            assert "tokens=None" not in row
            assert re.search(r"tokens=\d+ \(text\) \+ labels|tokens=\d+,", row), row
    kept_changes = [d for d in report.kept if "CHANGES.rst" in rows[d.index]]
    assert any(" 8.2.0 " in rows[d.index] for d in kept_changes)  # the version column
    assert "testing.rst › Testing Tally Applications" in report.table()  # source and section
    # a long detail is no longer cut at 60 characters
    superseded = next(rows[d.index] for d in report.dropped if d.reason == "superseded")
    assert "superseded_by=" in superseded


# -- point 6: the command line, as a subprocess -------------------------------------------------

REPO = Path(__file__).resolve().parents[1]


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "ctxassembly", *args],
        check=False,
        cwd=REPO,
        env=full,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_cli_assembles_langchain_shaped_jsonl(tmp_path: Path, lc_docs: list[Any]) -> None:
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(d.model_dump_json() + "\n" for d in lc_docs))
    assert '"page_content"' in path.read_text()
    r = _cli("assemble", str(path), "-q", STDERR, "--budget", "600", "--format", "json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["chunks"]
    assert {_release(c["meta"]["source"]) for c in out["chunks"]} == {"8.2.1"}
    blocks = parse(out["text"])
    assert {b["source"] for b in blocks} <= {"CHANGES.rst", "testing.rst", "options.md"}
    assert out["report"]["reasons"].get("invalid", 0) == 0


def test_cli_names_the_malformed_line_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "a", "text": "fine"}\n\n{"id": "b", "text": "cut off\n{"id": "c", "text": "fine"}\n')
    r = _cli("assemble", str(path), "-q", "anything")
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    assert r.stderr.strip().count("\n") == 0, r.stderr
    assert re.match(rf"error: {re.escape(str(path))}:3: not JSON \(", r.stderr), r.stderr
    path.write_text('[{"id": "a", "text": "fine"},\n 7]\n')
    r = _cli("assemble", str(path), "-q", "anything")
    assert (r.returncode, r.stderr.strip()) == (2, f"error: {path}: item 1: expected a JSON object (a chunk), got int")
    path.write_text('{"id": "a", "body": "no text field"}\n')
    r = _cli("assemble", str(path), "-q", "anything")
    assert r.returncode == 2
    assert r.stderr.startswith("error: no candidate could be read; the first: chunk 'a': field 'text'"), r.stderr


def test_cli_eval_html_says_matplotlib_is_missing_before_the_run(tmp_path: Path) -> None:
    fake = tmp_path / "site" / "matplotlib"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('no matplotlib here')\n")
    r = _cli("eval", "--html", str(tmp_path / "r.html"), env={"PYTHONPATH": str(tmp_path / "site")})
    assert r.returncode == 2
    assert r.stderr.strip() == "error: matplotlib is not installed; install it with: pip install 'ctxassembly[eval]'"
    assert r.stdout == ""  # no table printed first
    assert not (tmp_path / "r.html").exists()


# -- point 7: a cross-encoder that is not one -------------------------------------------------


def test_a_bi_encoder_loaded_as_a_cross_encoder_is_reported(minilm_path: str, lc_docs: list[Any]) -> None:
    from sentence_transformers import CrossEncoder

    not_a_reranker = CrossEncoder(minilm_path, device="cpu")  # loads, with a newly initialised head
    compressor = ContextAssemblyCompressor(budget=600, reranker=not_a_reranker)
    with pytest.warns(
        UntrainedModelWarning, match=r"newly initialised classification head: the checkpoint is BertModel"
    ):
        out = compressor.compress_documents(lc_docs, STDERR)
    assert out  # the call goes on
    report = compressor.last_report
    assert report is not None
    note = next(n for n in report.notes if n["event"] == "untrained_head")
    assert note["stage"] == "rerank"
    assert minilm_path in note["why"]
    # the second call says it again in its report (the warning is the process's, once)
    compressor.compress_documents(lc_docs, STDERR)
    assert any(n["event"] == "untrained_head" for n in compressor.last_report.notes)  # type: ignore[union-attr]


def test_a_trained_cross_encoder_is_not_reported(cross_encoder_path: Path, lc_docs: list[Any]) -> None:
    from sentence_transformers import CrossEncoder

    compressor = ContextAssemblyCompressor(budget=600, reranker=CrossEncoder(str(cross_encoder_path), device="cpu"))
    compressor.compress_documents(lc_docs, STDERR)  # no warning (pytest makes any warning an error here)
    assert not any(n["event"] == "untrained_head" for n in compressor.last_report.notes)  # type: ignore[union-attr]


def test_a_changelog_chunk_far_below_an_old_heading_is_bounded_by_it(lc_docs: list[Any]) -> None:
    # the chunk right above the 7.0 entries (with their heading) is not among the candidates:
    # the file's headings run newest first, so the nearest heading above bounds the entries
    changes = _changes(lc_docs, "8.2.1")
    entry = next(d for d in changes if "mix_stderr=False" in d.page_content)
    above = max((d for d in changes if d.metadata["start_index"] < entry.metadata["start_index"]), key=_start)
    assert "Version 7.0" in above.page_content
    docs = [d for d in lc_docs if d is not above]
    compressor = ContextAssemblyCompressor(budget=4000)
    compressor.compress_documents(docs, STDERR)
    fate = compressor.last_report.fate(next(i for i, d in enumerate(docs) if d is entry))  # type: ignore[union-attr]
    assert (fate.reason, fate.detail["describes"]) == ("other_version", "8.0.0 or older")  # older than 8.1.7


def _start(doc: Any) -> int:
    return int(doc.metadata["start_index"])
