import pytest

from ctxassembly import ConfigError, Select
from ctxassembly.text.structure import structure
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


GROW_FILLER = "\n\n".join(f"Paragraph {i} on widgets and forms, at some length." * 3 for i in range(10))
GROW_TEXT = GROW_FILLER + "\n\nThe retry limit is 5.\n\n" + GROW_FILLER


def test_a_cut_chunk_gets_back_what_the_choice_left_of_the_budget() -> None:
    # the excerpt cuts the chunk to its share (200 tokens); alone in a 1,000-token budget it
    # fits whole, so select gives it back whole, offsets and all, and says so
    from ctxassembly import assemble

    given = {"id": "a", "text": GROW_TEXT, "start": 10, "end": 10 + len(GROW_TEXT)}
    res = assemble("What is the retry limit?", [given], budget=1000)
    (c,) = res.chunks
    assert c.text == GROW_TEXT
    assert "excerpt" not in c.meta
    assert (c.start, c.end) == (10, 10 + len(GROW_TEXT))
    events = [n["event"] for n in res.report.notes if n.get("stage") == "excerpt"]
    assert events == ["excerpted", "restored"]


def test_growing_a_cut_never_leaves_a_chosen_chunk_out() -> None:
    # two chunks that each fill their share when cut: the room left after both goes back to
    # the better-ranked one as the blocks beside its match, and the other stays
    from ctxassembly import assemble

    other = GROW_TEXT.replace("retry limit is 5", "retry delay is 3 seconds")
    budget = 620  # two cuts at the 250-token floor, and room for more of the first
    res = assemble(
        "What is the retry limit?",
        [{"id": "a", "text": GROW_TEXT}, {"id": "b", "text": other}],
        budget=budget,
    )
    assert [c.id for c in res.chunks] == ["a", "b"]
    a = res.chunks[0]
    assert "The retry limit is 5." in a.text
    notes = {(n["id"], n["event"]): n for n in res.report.notes if n.get("stage") == "excerpt"}
    widened = notes[("a", "widened")]
    assert widened["tokens_after"] > notes[("a", "excerpted")]["tokens_after"]
    assert widened["tokens_before"] == notes[("a", "excerpted")]["tokens_before"]
    assert res.report.tokens_after <= budget
    for part in a.text.split("\n\n"):
        assert part == "[…]" or part in GROW_TEXT


def test_grow_declines_what_is_no_cut_of_the_excerpt() -> None:
    from dataclasses import replace

    from ctxassembly import Excerpt
    from ctxassembly.stages.excerpt import grow

    ctx = context("What is the retry limit?", budget=1000)
    (c,) = Excerpt().run(chunks(("a", GROW_TEXT)), ctx)
    kept = ctx.ledger[0].blocks.kept  # the blocks the cut holds, recorded where it was made
    assert kept is not None
    assert 0 < len(kept) < len(structure(GROW_TEXT))
    assert grow(c, 0, ctx) is None  # no room
    assert grow(chunks(("a", GROW_TEXT))[0], 1000, ctx) is None  # not cut
    # a rewrite by a later stage (the text is no cut of the scored text) stays as it is
    assert grow(replace(c, text=c.text.replace("limit", "LIMIT")), 1000, ctx) is None
    back = grow(c, 1000, ctx)
    assert back is not None
    assert back.text == GROW_TEXT
    assert ctx.ledger[0].blocks.kept is None  # whole again
