"""Summarize with a deterministic LLM test double: labelled, with provenance and the
verbatim excerpt, off unless asked for, bypassed where rewriting is not allowed."""

from __future__ import annotations

import pytest

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.llm.summarize import Summarize
from ctxassembly.render import parse, render

from .conftest import ScriptedLLMDouble, indexed, make_context, notes

pytestmark = pytest.mark.unit

SUMMARY = "Positional arguments to save() are not supported from 5.1; use keyword arguments."


def test_summary_is_labelled_with_provenance_and_excerpt(save_chunk: Chunk, cache_chunk: Chunk) -> None:
    llm = ScriptedLLMDouble({"save#1": "Summary: " + SUMMARY, "cache#2": ""})
    ctx = make_context("positional arguments save", budget=60)
    stage = Summarize(llm, excerpt_tokens=30, bypass=None)
    stage.bypass = type(stage.bypass)(min_tokens=20)  # both doc chunks are long enough here
    out = stage.run(indexed(save_chunk.with_meta(status="current"), cache_chunk), ctx)
    s = out[0]
    assert s.text.startswith("[model-written summary of save#1 · Saving objects · version 5.1]\n" + SUMMARY)
    summary = ctx.ledger[s.index].summary
    excerpt = summary["excerpt"]
    assert "[original excerpt, verbatim]\n" + excerpt in s.text
    for piece in excerpt.split("\n\n"):
        assert piece == "[…]" or piece in save_chunk.text
    assert "positional arguments" in excerpt.lower()
    assert summary["provenance"] == {"id": "save#1", "section": "Saving objects", "version": "5.1"}
    assert ctx.ledger.status(s) == "current; summary"
    block = parse(render([ctx.ledger.returned(s)]))[0]
    assert block["status"] == "current; summary"
    assert block["id"] == "1"  # the citation id; the real id is in the summary's provenance line
    # an empty reply: the chunk stays as it was, and the report says so
    assert out[1] == indexed(save_chunk, cache_chunk)[1]
    assert notes(ctx, "llm_failed")[0]["why"] == "empty summary"


def test_short_and_verbatim_chunks_are_not_summarised(cache_chunk: Chunk) -> None:
    llm = ScriptedLLMDouble({}, default=SUMMARY)
    ctx = make_context("cache", budget=200)
    law = Chunk(id="law", text=cache_chunk.text * 3, meta={"verbatim_required": True})
    chunks = indexed(law, cache_chunk, cache_chunk)
    assert Summarize(llm).run(chunks, ctx) == chunks  # default: chunks under 160 tokens stay whole
    assert llm.prompts == []
    assert {n["why"].split(":")[0] for n in notes(ctx, "bypass")} == {
        "verbatim required (meta 'verbatim_required')",
        "short",
    }


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"words": 2}, "words must be an int >= 5, got 2"),
        ({"excerpt_tokens": 5}, "excerpt_tokens must be an int >= 10, got 5"),
        ({"prompt": "{id} {text} {question}"}, r"prompt must contain \{words\}"),
    ],
)
def test_bad_settings_raise(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        Summarize(lambda p: "", **kwargs)  # type: ignore[arg-type]
