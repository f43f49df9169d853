"""A pruner through the LangChain compressor: the returned Documents carry the pruned text,
verbatim, with their ids and metadata; the caller's Documents are not changed."""

from __future__ import annotations

import copy

import pytest
from langchain_core.documents import Document

from langchain_ctxassembly import ContextAssemblyCompressor
from tests.test_prune import DOC, pieces, question_words

pytestmark = pytest.mark.unit

Q = "How long is the session cookie age?"


def test_a_callable_pruner_cuts_documents_verbatim() -> None:
    docs = [
        Document(id="a", page_content=DOC, metadata={"title": "Sessions", "version": "5.1"}),
        Document(id="b", page_content="Paint the fence green. It dries overnight.", metadata={"title": "Paint"}),
    ]
    before = copy.deepcopy(docs)
    compressor = ContextAssemblyCompressor(budget=500, options={"pruner": question_words})
    assert "prune" in [s.name for s in compressor.assembler.stages]
    out = compressor.compress_documents(docs, Q)
    by_id = {d.id: d for d in out}
    assert by_id["a"].page_content == (
        "[…]\n\nSession data is stored in the database by default. "
        "The session cookie age defaults to 1209600 seconds.\n\n[…]\n\nThe cookie is signed."
    )
    assert all(p in DOC for p in pieces(by_id["a"].page_content))
    assert (by_id["a"].metadata["title"], by_id["a"].metadata["version"]) == ("Sessions", "5.1")
    assert by_id["b"].page_content == docs[1].page_content  # nothing kept: left whole for select to judge
    assert docs == before
    notes = [n for n in compressor.last_report.notes if n["stage"] == "prune"]
    assert {(n["event"], n["id"]) for n in notes} == {("pruned", "a"), ("nothing_kept", "b")}


def test_a_bad_pruner_option_fails_at_construction() -> None:
    with pytest.raises(ValueError, match="pruner_threshold must be a number in"):
        ContextAssemblyCompressor(budget=500, options={"pruner": question_words, "pruner_threshold": 2})
