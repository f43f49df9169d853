import pytest

from ctxassembly import ConfigError, Select
from tests.conftest import chunks, context, fates

pytestmark = pytest.mark.unit


def test_skip_not_break():
    cs = chunks(("a", "word " * 50), ("big", "word " * 500), ("c", "word " * 30))
    ctx = context(budget=100)
    out = Select().run(cs, ctx)
    assert [c.id for c in out] == ["a", "c"]
    assert fates(ctx) == {1: "over_budget"}
    assert ctx.ledger.call.selection.tokens <= 100


def test_reserve_and_per_document_cap():
    cs = chunks(
        {"id": "a", "text": "x " * 40, "doc_id": "d"},
        {"id": "b", "text": "y " * 40, "doc_id": "d"},
        {"id": "c", "text": "z " * 40, "doc_id": "e"},
    )
    ctx = context(budget=200)
    assert [c.id for c in Select(max_per_doc=1).run(cs, ctx)] == ["a", "c"]
    assert fates(ctx) == {1: "doc_cap"}
    assert [c.id for c in Select(reserve=150).run(cs, context(budget=200))] == ["a"]


def test_custom_cost_and_empty():
    cs = chunks(("a", "x"), ("b", "y"))
    assert len(Select(cost=lambda c, ctx: 60).run(cs, context(budget=100))) == 1
    assert Select().run([], context()) == []


@pytest.mark.parametrize(("kwargs", "match"), [({"reserve": -1}, "reserve"), ({"max_per_doc": 0}, "max_per_doc")])
def test_bad_config(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        Select(**kwargs)


def test_the_lower_bound_only_saves_counting():
    """A tokenizer's lower bound lets select skip counting chunks that cannot fit; what is
    kept, dropped and recorded is the same as with full counts."""
    from ctxassembly.assembler import to_chunks
    from ctxassembly.data import SAMPLE_QUESTIONS, retriever
    from ctxassembly.tokens import get_counter

    bounded = get_counter()
    plain = get_counter(bounded.__wrapped__)  # the same counts, no lower bound
    assert bounded.lower_bound is not None
    assert plain.lower_bound is None
    for question, _, _ in SAMPLE_QUESTIONS:
        cs = to_chunks(retriever().retrieve(question, k=30))
        runs = []
        for counter in (bounded, plain):
            ctx = context(budget=300, count_tokens=counter)
            out = Select().run(cs, ctx)
            runs.append(([c.id for c in out], fates(ctx), ctx.ledger.call.selection.tokens))
        assert runs[0] == runs[1]


def test_fill_cuts_the_overflowing_chunk_to_what_is_left() -> None:
    from ctxassembly import Excerpt

    filler = "\n\n".join(f"Paragraph {i} on widgets and forms." * 3 for i in range(12))
    cs = chunks(("a", "word " * 60), ("b", filler + "\n\nThe retry limit is 5.\n\n" + filler))
    ctx = context("What is the retry limit?", budget=200)
    out = Select(fit=Excerpt().fit).run(cs, ctx)
    assert [c.id for c in out] == ["a", "b"]
    assert "The retry limit is 5." in out[1].text
    assert ctx.ledger.call.selection.tokens <= 200
    plain = Select().run(cs, context("What is the retry limit?", budget=200))
    assert [c.id for c in plain] == ["a"]
