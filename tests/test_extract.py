"""Extract stage: verbatim, query-focused, structure-aware; evidence kept with its sentence."""

from __future__ import annotations

import numpy as np
import pytest

from ctxassembly.errors import ConfigError
from ctxassembly.models import Embedder
from ctxassembly.stages.extract import Extract, clip
from tests.conftest import chunks, context
from tests.samples import FILLER, RST

pytestmark = pytest.mark.unit


def extract(text, question, budget=400, **kw):
    ctx = context(question, budget=budget)
    return Extract(**kw).run(chunks(("a", text)), ctx)[0], ctx


def pieces(text):
    return [p for p in text.split("\n\n[…]\n\n") if p not in ("", "[…]")]


def test_output_is_verbatim_and_marked():
    out, ctx = extract(RST, "How long may a cache key be?", budget=300)
    assert out.text != RST
    assert "The cache key may be at most 250 characters long." in out.text
    for p in pieces(out.text.removeprefix("[…]\n\n").removesuffix("\n\n[…]")):
        assert p in RST
    cut = ctx.ledger[out.index].cut
    assert cut.by == ("extract",)
    assert all(RST[a:b] in out.text for a, b in cut.spans)
    assert ctx.report.notes[0]["event"] == "extracted"
    assert ctx.count_tokens(out.text) <= Extract().cap(300) + 10


def test_short_chunks_stay_whole():
    cs = chunks(("a", "The retry limit is 5. It is not configurable."))
    assert Extract().run(cs, context("retry limit", budget=1000)) == cs


# Evidence fidelity: each case is (chunk text, question, the sentence that answers,
# the evidence that sentence depends on). Extraction must keep all of it.
CASES = [
    (  # a negation in the next sentence
        f"{FILLER}\n\nThe cache key may be at most 250 characters long. "
        f"This limit is not enforced on Windows.\n\n{FILLER}",
        "How long may a cache key be?",
        "The cache key may be at most 250 characters long.",
        ["This limit is not enforced on Windows."],
    ),
    (  # a unit stated in the sentence before
        f"{FILLER}\n\nAll timeouts below are in seconds. The session timeout defaults to 1209600.\n\n{FILLER}",
        "What is the session timeout default?",
        "The session timeout defaults to 1209600.",
        ["All timeouts below are in seconds."],
    ),
    (  # a version constraint from the enclosing directive
        f"{FILLER}\n\n.. versionchanged:: 5.1\n\n    The sitemap protocol default is https.\n\n{FILLER}",
        "What is the sitemap protocol default?",
        "The sitemap protocol default is https.",
        [".. versionchanged:: 5.1"],
    ),
    (  # a table header with its units
        f"{FILLER}\n\n| Backend | Max key (chars) |\n|---|---|\n| memcached | 250 |\n| redis | 512 |\n\n{FILLER}",
        "What is the max key of memcached?",
        "| memcached | 250 |",
        ["| Backend | Max key (chars) |"],
    ),
    (  # a numbered step with its lead-in
        f"{FILLER}\n\nTo rotate the secret key, you must do this:\n\n"
        f"#. Add the old key to SECRET_KEY_FALLBACKS.\n#. Deploy.\n\n{FILLER}",
        "How do I rotate the secret key with SECRET_KEY_FALLBACKS?",
        "#. Add the old key to SECRET_KEY_FALLBACKS.",
        ["To rotate the secret key, you must do this:"],
    ),
    (  # "only" in the previous sentence and a back-reference
        f"{FILLER}\n\nThe pool is only available on PostgreSQL 16. It is enabled with the pool option.\n\n{FILLER}",
        "How is the connection pool enabled with the pool option?",
        "It is enabled with the pool option.",
        ["The pool is only available on PostgreSQL 16."],
    ),
]


@pytest.mark.parametrize(("text", "question", "answer", "evidence"), CASES)
def test_evidence_fidelity(text, question, answer, evidence):
    out, _ = extract(text, question, budget=300)
    assert out.text != text, "the chunk should have been cut"
    assert answer in out.text
    for e in evidence:
        assert e in out.text, f"lost the evidence {e!r}"
    for p in pieces(out.text.removeprefix("[…]\n\n").removesuffix("\n\n[…]")):
        assert p in text


def test_embedder_adds_a_semantic_signal():
    text = f"{FILLER}\n\nThe pool keeps connections open between requests.\n\n{FILLER}"

    def vectors(texts):  # an embedding function: "connection reuse" is about the pool sentence
        return np.array([[float("pool" in t or "reuse" in t), 0.1] for t in texts])

    out, _ = extract(text, "connection reuse?", budget=250, embedder=Embedder(vectors))
    assert "The pool keeps connections open between requests." in out.text
    lexical, _ = extract(text, "connection reuse?", budget=250)
    assert "The pool keeps connections open between requests." not in lexical.text


def test_horizon_leaves_low_ranked_chunks_whole():
    big = [(f"c{i}", f"{FILLER}\n\nThe limit is {i} items.\n\n{FILLER}") for i in range(6)]
    ctx = context("limit", budget=300)
    out = Extract(reach=1).run(chunks(*big), ctx)
    assert ctx.ledger[out[0].index].cut is not None
    assert ctx.ledger[out[-1].index].cut is None


def test_clip_cuts_at_a_word_boundary():
    assert clip("short text", 240) == "short text"
    assert clip("alpha beta gamma", None) == "alpha beta gamma"
    assert clip("alpha beta gamma", 12) == "alpha beta"
    assert clip("x" * 30, 10) == "x" * 10  # no space to cut at: a hard cut


def embedded_by(extractor, text, question, budget=250):
    """The unit texts an Extract sends to its embedder (the question first)."""
    seen = []

    def vectors(texts):
        seen.extend(texts)
        return np.ones((len(texts), 2))

    extractor.embedder = Embedder(vectors)
    extractor.run(chunks(("a", text)), context(question, budget=budget))
    return seen


def test_cascade_reads_units_in_their_context():
    """A unit with no word of the question, under a directive that matches it, is among the
    units the embedder re-scores: "150 characters or fewer." is the answer to "how long"."""
    attrs = "\n\n".join(f".. attribute:: field{i}\n\n    Optional. Holds value {i} of the record." for i in range(12))
    text = f"Fields\n======\n\n{attrs}\n\n.. attribute:: username\n\n    Required. 150 characters or fewer.\n"
    seen = embedded_by(Extract(semantic_top=3), text, "How long can a username be?")
    assert seen[0] == "How long can a username be?"
    assert len(seen) == 4
    assert "150 characters or fewer." in seen


def test_semantic_chars_clips_what_the_embedder_reads():
    long_item = "- The username " + "really " * 80 + "matters."
    text = f"{FILLER}\n\n{long_item}\n\n{FILLER}"
    seen = embedded_by(Extract(semantic_chars=60), text, "username?", budget=200)
    assert max(len(t) for t in seen) <= 60
    full = embedded_by(Extract(semantic_chars=None), text, "username?", budget=200)
    assert long_item in full


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"extract_share": 0}, "extract_share must be in"),
        ({"semantic_weight": -1}, "semantic_weight must be >= 0"),
        ({"reach": 0.5}, "reach must be >= 1"),
        ({"semantic_top": 0}, "semantic_top must be a positive int or None, got 0"),
        ({"semantic_chars": 2.5}, "semantic_chars must be a positive int or None, got 2.5"),
    ],
)
def test_bad_options(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        Extract(**kwargs)
