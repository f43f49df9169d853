"""Prune stage: a pruner's per-sentence keep scores cut chunks verbatim, in reading order,
within reach of the budget; through assemble, the options and the report."""

from __future__ import annotations

import re
from typing import Any

import pytest

from ctxassembly import Assembler, assemble
from ctxassembly.errors import ConfigError
from ctxassembly.options import Options
from ctxassembly.stages import Excerpt, Prune
from ctxassembly.text.segments import segment
from tests.conftest import chunks, context, fates
from tests.samples import FILLER, RST

pytestmark = pytest.mark.unit

_WORD = re.compile(r"[a-z0-9_]+")
_STOP = frozenset({"what", "which", "how", "the", "is", "a", "an", "of", "in", "may", "be", "does", "do", "to"})


def question_words(question: str, passages: list[list[str]]) -> list[list[float]]:
    """A real, deterministic pruner: a sentence is kept (1.0) when it holds a question word."""
    words = set(_WORD.findall(question.lower())) - _STOP
    return [[1.0 if words & set(_WORD.findall(s.lower())) else 0.0 for s in p] for p in passages]


class Recorder:
    """A pruner that remembers what it was asked and answers with ``question_words``."""

    def __init__(self) -> None:
        self.calls: list[list[list[str]]] = []

    def __call__(self, question: str, passages: list[list[str]]) -> list[list[float]]:
        self.calls.append(passages)
        return question_words(question, passages)


def pieces(text: str) -> list[str]:
    return [p for p in text.split("\n\n") if p != "[…]"]


DOC = (
    "Sessions\n========\n\n"
    "Session data is stored in the database by default. "
    "The session cookie age defaults to 1209600 seconds. "
    "Templates render widgets at length. "
    "Another line on widgets follows here.\n\n"
    "Widgets are drawn by templates. The cookie is signed."
)


def test_keeps_the_sentences_at_the_threshold_verbatim_in_reading_order() -> None:
    ctx = context("How long is the session cookie age?", budget=1000)
    src = chunks({"id": "a", "text": DOC, "title": "Sessions", "section": "Sessions > Cookies", "version": "5.1"})
    out = Prune(question_words).run(src, ctx)
    assert len(out) == 1
    c = out[0]
    assert (c.id, c.title, c.section, c.version, c.index) == ("a", "Sessions", "Sessions > Cookies", "5.1", 0)
    assert c.text == (
        "[…]\n\nSession data is stored in the database by default. "
        "The session cookie age defaults to 1209600 seconds.\n\n[…]\n\nThe cookie is signed."
    )
    for p in pieces(c.text):
        assert p in DOC  # every kept piece is a verbatim slice
    positions = [DOC.index(p) for p in pieces(c.text)]
    assert positions == sorted(positions)
    cut = ctx.ledger[c.index].cut
    assert cut.by == ("pruned",)
    assert [DOC[a:b] for a, b in cut.spans] == pieces(c.text)
    note = ctx.report.notes[0]
    assert (note["stage"], note["event"], note["id"]) == ("prune", "pruned", "a")
    assert note["tokens_before"] == ctx.count_tokens(DOC)
    assert note["tokens_after"] == ctx.count_tokens(c.text) < note["tokens_before"]
    assert src[0].text == DOC  # the input chunk is not mutated


def test_the_pruner_is_asked_once_per_round_with_each_chunk_as_its_units() -> None:
    rec = Recorder()
    src = chunks(("a", DOC), ("b", RST))
    Prune(rec).run(src, context("cookie age", budget=1000))
    assert len(rec.calls) == 1
    assert rec.calls[0][0] == [DOC[u.start : u.end] for u in segment(DOC)]
    assert rec.calls[0][1] == [RST[u.start : u.end] for u in segment(RST)]
    # a list item, a code block and a table are each one unit, never split
    assert "| Backend | Max key (chars) |\n|---|---|\n| memcached | 250 |" in rec.calls[0][1]


@pytest.mark.parametrize(
    ("threshold", "kept"),
    [
        (0.0, None),  # everything passes: the chunk stays whole
        (0.3, "[…]\n\nThen second. And third."),  # contiguous sentences: one slice
        (0.7, "[…]\n\nAnd third."),
        (1.0, None),  # nothing reaches 1.0: left whole (empty="keep")
    ],
)
def test_threshold(threshold: float, kept: str | None) -> None:
    text = "First. Then second. And third."

    def graded(question: str, passages: list[list[str]]) -> list[list[float]]:
        return [[0.1, 0.5, 0.9] for _ in passages]

    out = Prune(graded, pruner_threshold=threshold).run(chunks(("a", text)), context("q"))
    assert out[0].text == (text if kept is None else kept)


def test_threshold_is_inclusive() -> None:
    out = Prune(lambda q, ps: [[0.5, 0.2] for _ in ps]).run(chunks(("a", "Kept one. Left two.")), context("q"))
    assert out[0].text == "Kept one.\n\n[…]"


def test_a_chunk_with_nothing_kept_stays_whole_and_is_noted() -> None:
    ctx = context("cookie age", budget=1000)
    src = chunks(("a", DOC), ("b", FILLER))
    out = Prune(question_words).run(src, ctx)
    assert [c.id for c in out] == ["a", "b"]
    assert out[1] is src[1]
    assert {"stage": "prune", "event": "nothing_kept", "id": "b", "index": 1, "best_score": 0.0} in ctx.report.notes


def test_empty_drop_records_the_reason() -> None:
    ctx = context("cookie age", budget=1000)
    out = Prune(question_words, empty="drop").run(chunks(("a", DOC), ("b", FILLER)), ctx)
    assert [c.id for c in out] == ["a"]
    assert fates(ctx) == {1: "no_evidence"}
    assert ctx.report.fate(1).detail == {"best_score": 0.0, "threshold": 0.5}


def test_only_chunks_within_reach_are_pruned() -> None:
    rec = Recorder()
    many = chunks(*[(f"c{i}", DOC) for i in range(40)])
    ctx = context("cookie age", budget=100)
    out = Prune(rec, reach=2.0).run(many, ctx)
    asked = sum(len(call) for call in rec.calls)
    pruned = [c for c in out if ctx.ledger[c.index].cut is not None]
    assert 1 < asked < 40
    assert len(pruned) == asked
    assert all(c.text == DOC for c in out[asked:])  # beyond reach: whole, for select to judge
    # the rounds stop once reach x budget tokens of pruned text lie ahead
    sizes = [ctx.count_tokens(c.text) for c in out[:asked]]
    assert sum(sizes[:-1]) < 200 <= sum(sizes)


def test_chunks_without_text_are_not_sent() -> None:
    rec = Recorder()
    out = Prune(rec).run(chunks(("a", "   \n"), ("b", DOC)), context("cookie age"))
    assert rec.calls == [[[DOC[u.start : u.end] for u in segment(DOC)]]]
    assert out[0].text == "   \n"


def test_no_chunks() -> None:
    assert Prune(question_words).run([], context("q")) == []


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ([], "pruner returned 0 score lists for 1 passages"),
        ([[1.0]], r"pruner returned 1 scores for passage 0 of \d+ sentences"),
        (None, "pruner must return one list of scores per passage, got None"),
        ([["x", 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]], "pruner returned non-numeric scores for passage 0"),
        ([[1.5, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]], r"pruner scores must be in \[0, 1\], got 1.5 for passage 0"),
        ([[float("nan"), 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]], r"pruner scores must be in \[0, 1\], got nan"),
    ],
)
def test_a_wrong_answer_from_the_pruner_is_a_config_error(answer: Any, message: str) -> None:
    assert len(segment(DOC)) == 7
    with pytest.raises(ConfigError, match=message):
        Prune(lambda q, ps: answer).run(chunks(("a", DOC)), context("q"))


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"pruner": 3}, "pruner must be a callable .* got 3"),
        ({"pruner": question_words, "pruner_threshold": 1.5}, r"pruner_threshold must be .*\[0, 1\], got 1\.5"),
        ({"pruner": question_words, "pruner_threshold": True}, r"pruner_threshold must be .* got True"),
        ({"pruner": question_words, "empty": "maybe"}, r"empty must be one of \('keep', 'drop'\), got 'maybe'"),
        ({"pruner": question_words, "reach": 0.5}, r"reach must be a number >= 1 \(budgets of text\), got 0.5"),
    ],
)
def test_stage_settings_are_checked(kw: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Prune(**kw)


# -- through the options and assemble ---------------------------------------------------


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"pruner": 3}, "pruner must be a callable \\(question, passages\\) -> scores or a model's .*, got 3"),
        ({"pruner": ""}, "pruner must be a non-empty str, got ''"),
        ({"pruner": ["a"]}, r"pruner must be a callable .*, got \['a'\]"),
        ({"pruner": Excerpt()}, "pruner must be .*got the stage .*; a stage goes in Assembler"),
        ({"pruner_threshold": -0.1}, r"pruner_threshold must be a number in \[0, 1\], got -0.1"),
        ({"pruner_threshold": "0.5"}, r"pruner_threshold must be a number in \[0, 1\], got '0.5'"),
        ({"pruner_trust_remote_code": "yes"}, "pruner_trust_remote_code must be True or False, got 'yes'"),
        ({"pruner": question_words, "extract": True}, "pruner and extract=True both replace the excerpt"),
    ],
)
def test_bad_options_name_the_field(kw: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Options(**kw)
    with pytest.raises(ConfigError, match=message):
        assemble("q", [{"id": "a", "text": "t"}], budget=100, **kw)


def test_the_pruner_runs_in_place_of_the_excerpt() -> None:
    names = [s.name for s in Options(pruner=question_words, pruner_threshold=0.25).build_stages()]
    assert "prune" in names
    assert "excerpt" not in names
    assert names.index("merge") < names.index("prune") < names.index("select")
    prune = next(s for s in Assembler(pruner=question_words, pruner_threshold=0.25).stages if isinstance(s, Prune))
    assert (prune.pruner, prune.pruner_threshold) == (question_words, 0.25)
    assert "prune" not in [s.name for s in Options().build_stages()]  # off by default


def test_assemble_with_a_callable_pruner_on_a_dev_question(dev_data: Any) -> None:
    rec = next(r for r in dev_data.records("django") if "PBKDF2" in r["question"])
    result = assemble(rec["question"], rec["candidates"], budget=1000, pruner=question_words)
    by_id = {c["id"]: c["text"] for c in rec["candidates"]}
    cuts = [n for n in result.report.notes if n["stage"] == "prune" and n["event"] == "pruned"]
    assert cuts
    assert all(n["tokens_after"] < n["tokens_before"] for n in cuts)
    pruned = [c for c in result.chunks if c.meta.get("pruned")]
    assert pruned
    for c in pruned:
        for p in pieces(c.text):
            assert p in by_id[c.id]  # verbatim
    assert any(a in result.text for a in rec["answer"])
    assert result.report.tokens_after <= 1000
