"""No odd value fails a call: metadata of every awkward type, through the core and both
adapters (hypothesis). A value the core cannot use is a decision on its chunk; one it can
carry travels; the call always returns."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document
from llama_index.core.schema import MetadataMode, NodeRelationship, NodeWithScore, RelatedNodeInfo, TextNode

from ctxassembly import assemble
from ctxassembly.chunk import Chunk
from ctxassembly.errors import ChunkError
from langchain_ctxassembly import ContextAssemblyCompressor
from llamaindex_ctxassembly import ContextAssemblyPostprocessor

pytestmark = pytest.mark.unit


class _Raises:
    """A value whose dunder methods raise, one or all of them."""

    def __init__(self, which: frozenset[str]) -> None:
        self._which = which

    def _maybe(self, name: str) -> None:
        if name in self._which:
            raise RuntimeError(f"{name} raises")

    def __repr__(self) -> str:
        self._maybe("repr")
        return "<_Raises>"

    def __str__(self) -> str:
        self._maybe("str")
        return "raises"

    def __eq__(self, other: object) -> bool:
        self._maybe("eq")
        return self is other

    def __hash__(self) -> int:
        self._maybe("hash")
        return id(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> _Raises:
        self._maybe("deepcopy")
        return self

    def __copy__(self) -> _Raises:
        self._maybe("copy")
        return self

    def __reduce__(self) -> Any:
        raise TypeError("cannot pickle")


def _self_referential() -> list[Any]:
    x: list[Any] = [1]
    x.append(x)
    return x


DUNDERS = ("repr", "str", "eq", "hash", "deepcopy", "copy")
# Hypothesis prints (and so reprs) what it draws: it draws recipes, the tests build the values.
RECIPES = st.one_of(
    st.tuples(st.just("raises"), st.frozensets(st.sampled_from(DUNDERS), min_size=1)),
    st.tuples(st.just("huge"), st.integers(0, 9)),  # repr and str raise past 4,300 digits
    st.tuples(st.just("self"), st.none()),
    st.tuples(st.just("generator"), st.none()),
    st.tuples(
        st.just("plain"),
        st.one_of(
            st.integers(),
            st.floats(allow_nan=True, allow_infinity=True),
            st.binary(max_size=20),
            st.text(max_size=30),
            st.none(),
            st.booleans(),
            st.recursive(
                st.one_of(st.integers(), st.text(max_size=5), st.binary(max_size=5), st.floats()),
                lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c, max_size=3),
                max_leaves=8,
            ),
        ),
    ),
)


def _make(recipe: tuple[str, Any]) -> Any:
    kind, arg = recipe
    if kind == "raises":
        return _Raises(arg)
    if kind == "huge":
        return 10**5000 + arg
    if kind == "self":
        return _self_referential()
    if kind == "generator":
        return (x for x in range(3))
    return arg


KEYS = st.sampled_from(
    [
        "id",
        "doc_id",
        "title",
        "section",
        "version",
        "date",
        "start",
        "end",
        "score",
        "source",
        "url",
        "file_path",
        "status",
        "acl",
        "release",
        "tokens",
        "start_index",
        "end_index",
        "other",
    ]
)
METADATA = st.dictionaries(KEYS, RECIPES, max_size=5)


def _meta(recipes: dict[str, tuple[str, Any]]) -> dict[str, Any]:
    return {k: _make(r) for k, r in recipes.items()}


SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
Q = "What is the cache timeout?"


def _text(i: int) -> str:
    return f"The cache timeout is {i}00 seconds by default. It applies to every backend {i}."


@SETTINGS
@given(st.lists(METADATA, min_size=1, max_size=4))
def test_the_core_never_fails_on_odd_metadata(metas):
    records = [{**_meta(m), "text": _text(i)} for i, m in enumerate(metas)]
    out = assemble(Q, records, budget=300)
    assert len(out.report.decisions) == len(records)


@SETTINGS
@given(st.lists(METADATA, min_size=1, max_size=4))
def test_the_langchain_compressor_never_fails_on_odd_metadata(metas):
    docs = [Document(page_content=_text(i), metadata=_meta(m)) for i, m in enumerate(metas)]
    out = ContextAssemblyCompressor(budget=300).compress_documents(docs, Q)
    assert len(out) <= len(docs)


@SETTINGS
@given(st.lists(METADATA, min_size=1, max_size=4), st.booleans())
def test_the_llamaindex_postprocessor_never_fails_on_odd_metadata(metas, labels_only):
    nodes = [
        NodeWithScore(node=TextNode(id_=f"n{i}", text=_text(i), metadata=_meta(m)), score=1.0)
        for i, m in enumerate(metas)
    ]
    out = ContextAssemblyPostprocessor(budget=300, labels_only=labels_only).postprocess_nodes(nodes, query_str=Q)
    for n in out:
        n.node.get_content(metadata_mode=MetadataMode.LLM)


def test_a_doc_id_whose_eq_raises_does_not_fail_the_llamaindex_call():
    bad = _Raises(frozenset({"eq", "hash"}))
    a = TextNode(id_="a", text=_text(1), metadata={"doc_id": bad})
    b = TextNode(id_="b", text=_text(2), metadata={"doc_id": bad})
    a.relationships[NodeRelationship.NEXT] = RelatedNodeInfo(node_id="b")
    b.relationships[NodeRelationship.PREVIOUS] = RelatedNodeInfo(node_id="a")
    pp = ContextAssemblyPostprocessor(budget=300)
    pp.postprocess_nodes([NodeWithScore(node=a, score=1.0), NodeWithScore(node=b, score=0.5)], query_str=Q)
    assert len(pp.last_report.decisions) == 2


@pytest.mark.parametrize("field", ["title", "start", "score", "id", "doc_id"])
def test_an_error_message_survives_a_value_whose_repr_raises(field):
    with pytest.raises(ChunkError, match=rf"field '{field}'.*_Raises"):
        Chunk.from_dict({"id": "a", "text": "t", field: _Raises(frozenset({"repr", "str"}))})


def test_an_error_message_survives_a_huge_int():
    with pytest.raises(ChunkError, match=r"field 'start'.*int of \d+ digits"):
        Chunk.from_dict({"id": "a", "text": "t", "start": -(10**5000)})


def test_an_uncopyable_value_is_shallow_copied_with_a_note():
    bad = _Raises(frozenset({"deepcopy", "copy"}))
    docs = [Document(page_content=_text(1), metadata={"handle": bad, "tags": ["x"]})]
    comp = ContextAssemblyCompressor(budget=300)
    [out] = comp.compress_documents(docs, Q)
    assert out.metadata["handle"] is bad
    assert out.metadata["tags"] == ["x"]
    assert out.metadata["tags"] is not docs[0].metadata["tags"]
    assert any(n["event"] == "shallow_copy" for n in comp.last_report.notes)


def test_an_unhashable_location_with_an_offset_is_no_crash() -> None:
    # found by the fuzz: a changelog-continuation key built from a list-valued ``source``
    source: list[Any] = [1]
    source.append(source)
    records = [{"id": "a", "text": "The cache timeout is 300 seconds by default.", "start": 0, "source": source}]
    out = assemble(Q, records, budget=300)
    assert [c.id for c in out.chunks] == ["a"]
