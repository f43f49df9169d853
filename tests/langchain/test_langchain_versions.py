"""The version stage through the LangChain compressor with what web loaders give: a URL."""

from __future__ import annotations

import pytest
from langchain_core.documents import Document

from langchain_ctxassembly import ContextAssemblyCompressor

pytestmark = pytest.mark.unit

URL = "https://docs.example.org/en/{v}/ref/databases/"
TEXT = "Django supports PostgreSQL {pg} and higher. The psycopg adapter is required for connections."


def docs() -> list[Document]:
    # what WebBaseLoader + RecursiveCharacterTextSplitter give: source (and title), no version
    return [
        Document(
            id=f"{v}-db", page_content=TEXT.format(pg=pg), metadata={"source": URL.format(v=v), "title": "Databases"}
        )
        for v, pg in (("5.2", "14"), ("5.1", "13"), ("4.2", "12"))
    ]


def test_version_only_in_source_question_names_it() -> None:
    out = ContextAssemblyCompressor(budget=300).compress_documents(docs(), "Which PostgreSQL does Django 4.2 support?")
    assert [d.id for d in out] == ["4.2-db"]
    facts = out[0].metadata
    assert facts["assembly_report"]["target_version"] == "4.2"
    assert facts["assembly_labels"]["version"] == "4.2"
    assert facts["assembly_version_from"] == "path"
    assert out[0].metadata["source"] == URL.format(v="4.2")  # the caller's metadata, untouched


def test_version_only_in_source_latest_per_page() -> None:
    # LangChain's adapter takes the doc id from "source": it holds the version, the
    # document identity must not, or every version would be "current"
    out = ContextAssemblyCompressor(budget=300).compress_documents(docs(), "Which PostgreSQL is supported?")
    assert [d.id for d in out] == ["5.2-db"]
    assert out[0].metadata["assembly_decision"]["reason"] == "kept"
