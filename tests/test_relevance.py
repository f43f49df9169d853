import pytest

from ctxassembly import Assembler, ChunkError, ConfigError, Relevance
from ctxassembly.ledger import Given
from ctxassembly.stages.relevance import SIGNALS
from ctxassembly.stages.version import VersionFilter
from tests.conftest import chunks, context, fates

pytestmark = pytest.mark.unit


def scored():
    return chunks(
        {"id": "a", "text": "unrelated words here", "score": 0.9},
        {"id": "b", "text": "the retry limit is five", "score": 0.5},
        {"id": "c", "text": "nothing", "score": None},
        {"id": "d", "text": "more filler", "score": 0.1},
    )


def test_threshold_drops_below_and_records_it():
    ctx = context("retry limit")
    out = Relevance(min_score=0.3).run(scored(), ctx)
    assert {c.id for c in out} == {"a", "b", "c"}  # None score skips the threshold under "rank"
    assert fates(ctx) == {3: "below_threshold"}


def test_lexical_and_order_fuse():
    # order says a then b, lexical says b then the rest: 1/60 + 1/61 each, a tie kept in incoming order
    out = Relevance(weights={"order": 1, "lexical": 1}).run(scored(), context("retry limit"))
    assert [c.id for c in out][:2] == ["a", "b"]
    assert out[0].score == out[1].score
    assert Relevance().run(scored(), context("retry limit"))[0].id == "b"  # the default: lexical 2
    ctx = context("retry limit")
    out = Relevance(weights={"order": 1, "lexical": 2}).run(scored(), ctx)
    assert out[0].id == "b"
    assert ctx.ledger[out[0].index].retriever_score == Given(0.5)
    assert ctx.ledger[out[0].index].rank == 0


def test_the_chunk_that_says_the_question_s_words_together_ranks_first():
    # BM25 prefers "apart" (it says "timeout" twice); only "together" says "visibility timeout"
    pair = chunks(
        ("apart", "timeout of the broker, visibility of the worker pool, timeout of the task"),
        ("together", "the visibility timeout of the broker and of the worker"),
        ("other", "unrelated words"),
    )

    def ranked(weights):
        return [c.id for c in Relevance(weights=weights).run(pair, context("the visibility timeout"))]

    assert ranked({"lexical": 1})[:2] == ["apart", "together"]
    assert ranked({"lexical": 1, "phrase": 2})[:2] == ["together", "apart"]
    assert ranked({"phrase": 1}) == ["together", "apart", "other"]  # no phrase: ranked after, in incoming order
    assert "phrase" in SIGNALS


def test_the_call_records_how_far_the_retriever_and_bm25_agree_on_the_head():
    texts = ["the retry limit is five", "retry after a delay", "a limit on retries", "filler one", "filler two"]
    agree = chunks(*((f"c{i}", t) for i, t in enumerate(texts)))  # the retriever's head is BM25's
    ctx = context("retry limit")
    Relevance().run(agree, ctx)
    assert ctx.ledger.call.head_agreement == 3
    apart = chunks(*((f"c{i}", t) for i, t in enumerate(reversed(texts))))  # the matches come last
    ctx = context("retry limit")
    Relevance().run(apart, ctx)
    assert ctx.ledger.call.head_agreement == 1  # of the first three, only "a limit on retries"
    # a text the list gives twice is one place of the head, not two
    ctx = context("retry limit")
    twice = chunks(("a", texts[3]), ("b", texts[3]), ("c", texts[0]), ("d", texts[1]), ("e", texts[4]), ("f", texts[2]))
    Relevance().run(twice, ctx)
    assert ctx.ledger.call.head_agreement == 2
    ctx = context("retry limit")
    Relevance(weights={"lexical": 1}).run(chunks(*((f"c{i}", t) for i, t in enumerate(texts))), ctx)
    assert ctx.ledger.call.head_agreement is None  # the order was not weighed: nothing to compare


def test_score_only_ranks_by_score_with_none_last():
    out = Relevance(weights={"score": 1}).run(scored(), context())
    assert [c.id for c in out] == ["a", "b", "d", "c"]


def test_order_only_keeps_the_incoming_order():
    assert [c.id for c in Relevance(weights={"order": 1}).run(scored(), context())] == ["a", "b", "c", "d"]


def test_repeated_texts_do_not_push_others_down():
    cs = chunks(("a", "x"), ("a2", "x"), ("b", "y"))
    out = Relevance(weights={"order": 1}).run(cs, context())
    assert [c.score for c in out][1:] == pytest.approx([1 / 60, 1 / 61], abs=1e-6)  # a2 ties a; b is 2nd text


def test_order_k_keeps_the_retrievers_head_and_lowers_the_places_below_it():
    # order_k 30: the order signal's first place still counts 1/60, the next ones fall off
    # as 1/(2 * (30 + rank)), faster than 1/(60 + rank); the default is plain RRF
    cs = chunks(("a", "x"), ("b", "y"), ("c", "z"))
    out = Relevance(weights={"order": 1}, order_k=30).run(cs, context())
    assert [c.score for c in out] == pytest.approx([1 / 60, 1 / 62, 1 / 64], abs=1e-6)
    plain = Relevance(weights={"order": 1}).run(chunks(("a", "x"), ("b", "y"), ("c", "z")), context())
    assert [c.score for c in plain] == pytest.approx([1 / 60, 1 / 61, 1 / 62], abs=1e-6)
    assert Relevance().order_k == Relevance(order_k=60).order_k == 60


@pytest.mark.parametrize(("policy", "expect"), [("drop", {2: "missing_score"}), ("rank", {})])
def test_none_score_policies(policy, expect):
    ctx = context()
    Relevance(none_score=policy).run(scored(), ctx)
    assert fates(ctx) == expect


def test_none_score_error_names_the_chunk():
    with pytest.raises(ChunkError, match="chunk 'c': field 'score'"):
        Relevance(none_score="error").run(scored(), context())


def test_top_k():
    ctx = context()
    assert len(Relevance(top_k=2).run(scored(), ctx)) == 2
    assert set(fates(ctx).values()) == {"rank_cutoff"}


def test_empty_and_one():
    assert Relevance().run([], context()) == []
    assert len(Relevance().run(chunks(("a", "x")), context())) == 1


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"weights": {"vibes": 1}}, "unknown relevance signal"),
        ({"weights": {"order": -1}}, "non-negative"),
        ({"weights": {"order": 0}}, "at least one"),
        ({"none_score": "skip"}, "none_score must be"),
        ({"rrf_k": 0}, "rrf_k must be positive"),
        ({"order_k": 0}, "order_k must be positive"),
        ({"top_k": 0}, "top_k must be"),
    ],
)
def test_bad_config(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        Relevance(**kwargs)


def test_define_ranks_the_chunk_that_defines_the_named_option_first() -> None:
    cs = chunks(
        ("mention", "Set max_retries and timeout in the config; max_retries is read at start. max_retries!"),
        ("defines", ".. option:: max_retries\n\n    How often a call is retried. Default 5."),
    )
    ctx = context("What is the default of max_retries?")
    out = Relevance(weights={"define": 1.0}).run(cs, ctx)
    assert [c.id for c in out] == ["defines", "mention"]
    assert "define" in SIGNALS


def test_the_names_of_markup_roles_are_not_words_of_the_content():
    # a reference page marks every entry up with the same role (``:fixture:`...```): the
    # role's name is markup, so a question with that word is not answered by the markup
    question = "Which fixture is session scoped?"
    index = "Reference: " + ", ".join(
        f":fixture:`{n}`" for n in ("capsys", "caplog", "monkeypatch", "recwarn", "pytestconfig", "tmp_path")
    )
    answer = "The tmp_path_factory lasts the whole session."
    other = "Markers select tests by name and keyword."
    cs = chunks(("index", index), ("answer", answer), ("other", other))
    out = Relevance(weights={"lexical": 1}).run(cs, context(question))
    assert out[0].id == "answer"


def _release_and_entry(labels: bool) -> list[dict[str, object]]:
    texts = {
        "changelog": "5.5.0\n=====\n\n:release-date: 2025-03-31\n\n"
        "- Redis: the visibility timeout of the broker is read from the transport options.",
        "redis": "Visibility Timeout\n------------------\n\nThe default visibility timeout for Redis is 1 hour.",
        "caveats": "Caveats\n=======\n\nA task not acknowledged within the visibility timeout is redelivered.",
        "sqs": "Options\n=======\n\nRegion\n------\n\nThe SQS visibility timeout is 30 minutes.",
    }
    return [
        {"id": d, "text": t, "score": 0.5, **({"version": "5.5", "title": d} if labels else {})}
        for d, t in texts.items()
    ]


@pytest.mark.parametrize(("labels", "first"), [(True, "redis"), (False, "changelog")])
def test_the_target_version_is_no_name_to_define(labels: bool, first: str) -> None:
    # "5.5" names only the release heading "5.5.0" among the names chunks define; with the
    # versions on the labels the version stage has already chosen 5.5, so the entry that
    # defines the visibility timeout ranks first. With text only the number is kept: it is
    # the one hint of which passages are 5.5's.
    q = "In Celery 5.5, what is the default visibility timeout when Redis is the broker?"
    a = Assembler(stages=[VersionFilter(), Relevance(weights={"define": 1})])
    res = a.run(q, _release_and_entry(labels), budget=1000, target_version="5.5")
    assert res.chunks[0].id == first
