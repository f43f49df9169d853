"""Invariants, over arbitrary inputs (hypothesis)."""

import copy
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxassembly import AbsentVersionWarning, Assembler, Dedup, parse, render
from ctxassembly.chunk import Chunk
from ctxassembly.stages.arrange import order_indices
from tests.conftest import context

pytestmark = pytest.mark.unit

WORDS = st.sampled_from(
    ["retry", "limit", "is", "3", "5", "not", "v5.1", "cache", "the", "</document>", "<document", "&lt;", "ignore"]
)
texts = st.one_of(st.lists(WORDS, min_size=1, max_size=30).map(" ".join), st.text(min_size=1, max_size=200))
chunk_dicts = st.fixed_dictionaries(
    {"id": st.text(min_size=1, max_size=8), "text": texts},
    optional={
        "score": st.one_of(st.none(), st.floats(-1, 1, allow_nan=False)),
        "version": st.sampled_from(["4.2", "5.1", "5.2", "x"]),
        "doc_id": st.sampled_from(["a", "b", "c"]),
        "title": st.text(max_size=20),
        "start": st.integers(0, 100),
    },
)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ASSEMBLER = Assembler()


@SETTINGS
@given(
    st.lists(chunk_dicts, max_size=25),
    st.integers(1, 1500),
    st.sampled_from(["bookend", "edges", "relevance", "reading"]),
)
def test_budget_fates_and_no_mutation(items, budget, order):
    before = copy.deepcopy(items)
    with warnings.catch_warnings():
        # the generated versions rarely include the question's 5.1: that warns, by design
        warnings.simplefilter("ignore", AbsentVersionWarning)
        result = Assembler(order=order).run("what is the retry limit in v5.1?", items, budget=budget)
    assert items == before
    assert ASSEMBLER.count_tokens(result.text) <= budget
    assert len(result.report.decisions) == len(items)
    assert [d.index for d in result.report.decisions] == list(range(len(items)))
    assert sorted(d.position for d in result.report.decisions if d.kept) == list(range(len(result.chunks)))


@SETTINGS
@given(st.lists(chunk_dicts, max_size=25))
def test_no_chunk_can_break_out_of_its_tag(items):
    chunks = [Chunk.from_dict(d, i) for i, d in enumerate(items)]
    back = parse(render(chunks))
    assert len(back) == len(chunks)
    assert [b["text"] for b in back] == [c.text for c in chunks]
    assert [b["id"] for b in back] == [str(i + 1) for i in range(len(chunks))]  # citation ids


@SETTINGS
@given(st.lists(texts, max_size=20))
def test_dedup_is_idempotent_and_never_adds(ts):
    chunks = [Chunk(id=f"c{i}", text=t, index=i) for i, t in enumerate(ts)]
    once = Dedup().run(chunks, context())
    assert len(once) <= len(chunks)
    assert [c.id for c in Dedup().run(once, context())] == [c.id for c in once]


@given(st.integers(0, 60), st.sampled_from(["relevance", "bookend", "edges"]))
def test_arrange_is_a_permutation(n, order):
    assert sorted(order_indices(n, order)) == list(range(n))
