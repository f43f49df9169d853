import pytest

from ctxassembly import ConfigError, Excerpt
from ctxassembly.stages.excerpt import blocks
from tests.conftest import chunks, context

pytestmark = pytest.mark.unit

FILLER = "\n\n".join(f"Paragraph {i} talks about templates, forms and widgets at some length." * 3 for i in range(8))
TEXT = FILLER + "\n\nThe default retry limit is 5 attempts.\n\n* item one\n  continues here\n\n" + FILLER


def test_a_large_chunk_is_cut_to_its_matching_blocks_verbatim():
    ctx = context("What is the default retry limit?", budget=200)
    out = Excerpt(0.4).run(chunks(("a", TEXT)), ctx)
    text = out[0].text
    assert "The default retry limit is 5 attempts." in text
    assert ctx.count_tokens(text) <= 80 + 10
    for part in text.split("\n\n"):
        assert part == "[…]" or part in TEXT
    assert out[0].meta["excerpt"] is True
    assert ctx.report.notes[0]["event"] == "excerpted"


def test_small_chunks_stay_whole():
    cs = chunks(("a", "short text"))
    assert Excerpt().run(cs, context(budget=1000)) == cs


def test_blocks_keep_list_items_whole():
    assert "* item one\n  continues here" in blocks(TEXT)


def test_bad_share():
    with pytest.raises(ConfigError, match="max_share"):
        Excerpt(0)
