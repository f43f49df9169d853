import pytest

from ctxassembly import ConfigError, Merge
from tests.conftest import chunks, context, fates

pytestmark = pytest.mark.unit

SOURCE = "Alpha beta gamma. Delta epsilon zeta. Eta theta iota."


def piece(cid, start, end, doc="d", version="1"):
    return {"id": cid, "text": SOURCE[start:end], "doc_id": doc, "version": version, "start": start, "end": end}


def test_touching_and_overlapping_chunks_merge_in_reading_order_without_repeating_text():
    cs = chunks(piece("b", 18, 37), piece("a", 0, 20), piece("c", 37, len(SOURCE)))
    ctx = context()
    out = Merge().run(cs, ctx)
    assert len(out) == 1
    assert out[0].text == SOURCE
    assert (out[0].start, out[0].end) == (0, len(SOURCE))
    assert out[0].id == "b"  # the best-ranked part names the merged chunk
    assert ctx.ledger[out[0].index].merged_from == ("a", "b", "c")
    assert fates(ctx) == {1: "merged", 2: "merged"}
    assert ctx.report.fate(1).detail == {"merged_into": "b"}


def test_a_gap_merges_only_when_allowed_and_is_bridged():
    cs = chunks(piece("a", 0, 17), piece("b", 18, 37))
    assert len(Merge().run(cs, context())) == 2
    out = Merge(merge_gap=1).run(cs, context())
    assert out[0].text == SOURCE[0:17] + "\n\n" + SOURCE[18:37]


def test_other_documents_versions_and_missing_offsets_never_merge():
    cs = chunks(
        piece("a", 0, 20),
        piece("b", 20, 37, doc="other"),
        piece("c", 20, 37, version="2"),
        {"id": "n", "text": "x", "doc_id": "d", "version": "1"},
    )
    assert len(Merge().run(cs, context())) == 4


def test_a_contained_chunk_disappears_into_its_container():
    out = Merge().run(chunks(piece("a", 0, 37), piece("b", 5, 20)), context())
    assert [c.text for c in out] == [SOURCE[0:37]]


def test_empty_and_bad_gap():
    assert Merge().run([], context()) == []
    with pytest.raises(ConfigError, match="gap must be >= 0"):
        Merge(-1)


def test_a_run_is_cut_so_no_merged_chunk_outgrows_its_share_of_the_budget():
    words = [f"w{i} " * 10 for i in range(6)]
    text = "".join(words)
    pos, specs = 0, []
    for i, w in enumerate(words):
        specs.append({"id": f"s{i}", "text": w, "doc_id": "d", "start": pos, "end": pos + len(w)})
        pos += len(w)
    assert text == "".join(s["text"] for s in specs)
    ctx = context(budget=200)  # share 0.4 -> at most 80 tokens per merged chunk
    out = Merge().run(chunks(*specs), ctx)
    assert 1 < len(out) < 6
    assert all(ctx.count_tokens(c.text) <= 80 for c in out)
    assert "".join(c.text for c in sorted(out, key=lambda c: c.start)) == text
    with pytest.raises(ConfigError, match="max_share"):
        Merge(max_share=0)


def test_offsets_that_disagree_with_the_texts_never_merge():
    # section-relative offsets: every chunk starts at 0 of "its" document
    cs = chunks(
        {"id": "a", "text": "first section", "doc_id": "h", "start": 0, "end": 13},
        {"id": "b", "text": "other section", "doc_id": "h", "start": 0, "end": 13},
        {"id": "c", "text": "short", "doc_id": "h", "start": 13, "end": 40},
    )
    ctx = context()
    assert [c.id for c in Merge().run(cs, ctx)] == ["a", "b", "c"]
    assert [n["event"] for n in ctx.report.notes] == ["offsets_disagree", "offsets_disagree"]
