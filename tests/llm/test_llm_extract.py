"""LLMExtract with deterministic LLM test doubles: verification, restoration, concurrency,
bypass, failures, framework LLMs, and the assembler's fates."""

from __future__ import annotations

import json

import pytest
from langchain_core.language_models import FakeListChatModel
from llama_index.core.llms import MockLLM

from ctxassembly import Assembler
from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.llm import Bypass, locate, parse_json
from ctxassembly.llm.extract import LLMExtract, read_evidence
from ctxassembly.render import render
from ctxassembly.stages import Arrange, Select

from .conftest import AsyncLLMDouble, ScriptedLLMDouble, indexed, make_context, notes, prompt_id

pytestmark = pytest.mark.unit

Q = "Can I pass positional arguments to Model.save() in Django 5.1?"


def reply(cid: str, *sentences: str) -> str:
    return json.dumps({"chunk_id": cid, "evidence": list(sentences)})


# -- parsing and location -------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"chunk_id": "a", "evidence": ["x y z"]}', {"chunk_id": "a", "evidence": ["x y z"]}),
        (
            'Here you go:\n```json\n{"chunk_id": "a", "evidence": ["x"]}\n```\nHope it helps',
            {"chunk_id": "a", "evidence": ["x"]},
        ),
        ("{'chunk_id': 'a', 'evidence': ['x',]}", {"chunk_id": "a", "evidence": ["x"]}),
        ('{"chunk_id": "a", "evidence": ["x",],}', {"chunk_id": "a", "evidence": ["x"]}),
        ('The answer is ["one", "two"].', ["one", "two"]),
        ("no json here", None),
        ('{"chunk_id": "a", "evidence": ["cut off by max_new_tokens', None),
    ],
)
def test_parse_json_is_lenient(text: str, expected: object) -> None:
    assert parse_json(text) == expected


def test_read_evidence_falls_back_to_lines() -> None:
    ev = read_evidence('- "The default timeout is 300 seconds."\n* Another line.\n')
    assert ev.form == "lines"
    assert ev.sentences == ("The default timeout is 300 seconds.", "Another line.")


def test_read_evidence_accepts_sentence_objects() -> None:
    ev = read_evidence('{"chunk_id": 7, "evidence": [{"sentence": "a b c"}, {"text": "d e f"}, 3]}')
    assert ev == type(ev)(("a b c", "d e f"), "7", "json")


def test_locate_normalises_whitespace_only() -> None:
    src = "The default\n  timeout is 300 seconds.\nNext."
    span = locate("The default timeout is 300   seconds.", src)
    assert span is not None
    assert src[span[0] : span[1]] == "The default\n  timeout is 300 seconds."
    assert locate("the default timeout is 300 seconds.", src) is None  # case is exact
    assert locate("The default timeout is 301 seconds.", src) is None
    assert locate("timeout", src) is None  # shorter than min_chars proves nothing


# -- verification ------------------------------------------------------------------------
def test_verbatim_evidence_is_kept_with_its_conditions(save_chunk: Chunk, cache_chunk: Chunk) -> None:
    llm = ScriptedLLMDouble({"cache#2": reply("cache#2", "The default timeout is 300 seconds.")})
    ctx = make_context("What is the default cache timeout?")
    out = LLMExtract(llm).run(indexed(cache_chunk, save_chunk), ctx)
    cut = out[0]
    assert "The default timeout is 300 seconds." in cut.text
    assert cut.text.startswith("Cache timeouts\n==============")  # its heading, restored
    # the neighbouring sentence states a condition (None, 0): restored from the source
    assert "A timeout of None means that entries never expire, and 0 expires them at once." in cut.text
    assert ctx.ledger[cut.index].llm_extract["evidence"] == ["The default timeout is 300 seconds."]
    for piece in cut.text.split("\n\n"):
        assert piece == "[…]" or piece in cache_chunk.text  # every piece is a verbatim slice
    assert {n["why"] for n in notes(ctx, "restored", id="cache#2")} >= {"section heading"}
    assert out[1] is not None
    assert len(llm.prompts) == 2


def test_invented_sentence_is_discarded_and_recorded(save_chunk: Chunk) -> None:
    invented = "Django 5.1 stores every model in a blockchain ledger by default."
    llm = ScriptedLLMDouble({"save#1": reply("save#1", invented)})
    ctx = make_context(Q)
    out = LLMExtract(llm).run(indexed(save_chunk, save_chunk), ctx)
    assert all(invented not in c.text for c in out)
    assert out[0].text == save_chunk.text  # nothing verified: the chunk stays whole
    d = notes(ctx, "discarded", index=0)
    assert d
    assert d[0]["sentence"] == invented
    assert d[0]["why"] == "not verbatim in the source chunk"
    assert "restored_unit" not in d[0]
    assert notes(ctx, "no_evidence", index=0)


def test_invented_sentence_beside_a_real_one(save_chunk: Chunk) -> None:
    real = "Use keyword arguments such as update_fields instead."
    invented = "Positional arguments are converted automatically."
    ctx = make_context(Q)
    out = LLMExtract(ScriptedLLMDouble({"save#1": reply("save#1", real, invented)})).run(
        indexed(save_chunk, save_chunk), ctx
    )
    assert real in out[0].text
    assert invented not in out[0].text
    assert ctx.ledger[out[0].index].llm_extract["discarded"] == [invented]


def test_dropped_negation_is_restored_from_the_source(save_chunk: Chunk) -> None:
    # the model "copies" the sentence but drops the "not" (and the version): the copy is
    # discarded, the source sentence comes back verbatim, the lost facts are recorded
    careless = "Passing positional arguments to Model.save() is supported."
    ctx = make_context(Q)
    out = LLMExtract(ScriptedLLMDouble({"save#1": reply("save#1", careless)})).run(indexed(save_chunk, save_chunk), ctx)
    text = out[0].text
    assert careless not in text
    assert "Passing positional arguments to Model.save() is not supported since Django 5.1." in text
    d = notes(ctx, "discarded", index=0)[0]
    assert "neg:not:1" in d["facts_lost"]
    assert "num:5.1" in d["facts_lost"]
    assert any("near copy" in n["why"] for n in notes(ctx, "restored", index=0))


def test_condition_neighbour_is_restored_when_the_model_omits_it(save_chunk: Chunk) -> None:
    # the model keeps only the advice; the negation it depends on is the previous sentence
    ctx = make_context(Q)
    stage = LLMExtract(
        ScriptedLLMDouble({"save#1": reply("save#1", "Use keyword arguments such as update_fields instead.")})
    )
    text = stage.run(indexed(save_chunk, save_chunk), ctx)[0].text
    assert "is not supported since Django 5.1." in text
    assert any(n["why"].startswith("condition") for n in notes(ctx, "restored", index=0))


def test_partial_sentence_grows_to_the_whole_unit(cache_chunk: Chunk) -> None:
    ctx = make_context("cache timeout")
    out = LLMExtract(ScriptedLLMDouble({"cache#2": reply("cache#2", "default timeout is 300")})).run(
        indexed(cache_chunk, cache_chunk), ctx
    )
    assert "The default timeout is 300 seconds." in out[0].text


def test_chunk_id_mismatch_is_noted_and_verified_against_the_asked_chunk(cache_chunk: Chunk) -> None:
    ctx = make_context("cache")
    out = LLMExtract(ScriptedLLMDouble({"cache#2": reply("other", "The default timeout is 300 seconds.")})).run(
        indexed(cache_chunk, cache_chunk), ctx
    )
    assert notes(ctx, "chunk_id_mismatch", named="other")
    assert ctx.ledger[out[0].index].llm_extract["evidence"] == ["The default timeout is 300 seconds."]


def test_on_empty_drop_records_a_fate(save_chunk: Chunk, cache_chunk: Chunk) -> None:
    ctx = make_context("cache")
    llm = ScriptedLLMDouble({"cache#2": reply("cache#2", "The default timeout is 300 seconds.")})
    out = LLMExtract(llm, on_empty="drop").run(indexed(cache_chunk, save_chunk), ctx)
    assert [c.id for c in out] == ["cache#2"]
    assert ctx.report.fate(1).reason == "no_evidence"


def test_failing_llm_keeps_the_chunk_whole(save_chunk: Chunk) -> None:
    def broken(prompt: str) -> str:
        raise RuntimeError("503 from the provider")

    ctx = make_context(Q)
    chunks = indexed(save_chunk, save_chunk)
    assert LLMExtract(broken).run(chunks, ctx) == chunks
    assert notes(ctx, "llm_failed")[0]["why"] == "RuntimeError: 503 from the provider"


def test_timeout_counts_as_a_failure(save_chunk: Chunk) -> None:
    slow = AsyncLLMDouble(lambda p: reply(prompt_id(p), "x"), delay=0.5)
    ctx = make_context(Q)
    chunks = indexed(save_chunk, save_chunk)
    assert LLMExtract(slow, timeout=0.05).run(chunks, ctx) == chunks
    assert notes(ctx, "llm_failed")[0]["why"] == "timeout after 0.05 s"


def test_input_chunks_are_not_mutated(save_chunk: Chunk) -> None:
    chunks = indexed(save_chunk, save_chunk)
    before = [(c.text, dict(c.meta)) for c in chunks]
    LLMExtract(
        ScriptedLLMDouble({"save#1": reply("save#1", "Use keyword arguments such as update_fields instead.")})
    ).run(chunks, make_context(Q))
    assert [(c.text, dict(c.meta)) for c in chunks] == before


# -- concurrency -------------------------------------------------------------------------------
@pytest.mark.parametrize("bound", [1, 3])
def test_calls_run_concurrently_within_the_bound(cache_chunk: Chunk, bound: int) -> None:
    chunks = [Chunk(id=f"c{i}", text=cache_chunk.text, index=i) for i in range(8)]
    llm = AsyncLLMDouble(lambda p: reply(prompt_id(p), "The default timeout is 300 seconds."))
    ctx = make_context("cache timeout", budget=400)
    out = LLMExtract(llm, concurrency=bound).run(chunks, ctx)
    assert llm.calls == 8
    assert llm.max_in_flight == bound
    assert all("The default timeout is 300 seconds." in c.text for c in out)


async def test_arun_inside_a_running_loop(cache_chunk: Chunk) -> None:
    chunks = [Chunk(id=f"c{i}", text=cache_chunk.text, index=i) for i in range(4)]
    llm = AsyncLLMDouble(lambda p: reply(prompt_id(p), "The default timeout is 300 seconds."))
    stage = LLMExtract(llm, concurrency=2)
    out = await stage.arun(chunks, make_context("cache", budget=200))
    assert llm.max_in_flight == 2
    assert len(out) == 4
    # the sync entry point also works while this loop runs (a fresh loop in a worker thread)
    assert len(stage.run(chunks, make_context("cache", budget=200))) == 4


def test_blocking_llm_runs_in_threads_within_the_bound(cache_chunk: Chunk) -> None:
    import threading
    import time

    lock, state = threading.Lock(), {"now": 0, "max": 0}

    def blocking(prompt: str) -> str:
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.03)
        with lock:
            state["now"] -= 1
        return reply(prompt_id(prompt), "The default timeout is 300 seconds.")

    chunks = [Chunk(id=f"c{i}", text=cache_chunk.text, index=i) for i in range(6)]
    LLMExtract(blocking, concurrency=2).run(chunks, make_context("cache", budget=400))
    assert state["max"] == 2


# -- bypass rules ---------------------------------------------------------------------------
def test_short_precise_set_is_not_sent(cache_chunk: Chunk) -> None:
    llm = ScriptedLLMDouble({})
    ctx = make_context("cache", budget=1000)
    chunks = indexed(cache_chunk)
    assert LLMExtract(llm).run(chunks, ctx) == chunks
    assert llm.prompts == []
    assert notes(ctx, "bypass", scope="all")[0]["why"].startswith("short and precise: 1 chunks")


def test_verbatim_required_and_tables_are_left_alone(cache_chunk: Chunk) -> None:
    contract = Chunk(id="contract", text=cache_chunk.text, meta={"verbatim_required": True})
    table = Chunk(
        id="tbl",
        text="Limits\n\n| setting | default |\n|---|---|\n| TIMEOUT | 300 |\n| MAX_ENTRIES | 300 |\n\n"
        + cache_chunk.text,
    )
    llm = ScriptedLLMDouble({})
    ctx = make_context("cache", budget=100)
    chunks = indexed(contract, table, cache_chunk)
    out = LLMExtract(llm).run(chunks, ctx)
    assert out[0] == chunks[0]
    assert out[1] == chunks[1]
    assert [prompt_id(p) for p in llm.prompts] == ["cache#2"]
    whys = {n["id"]: n["why"] for n in notes(ctx, "bypass")}
    assert whys == {"contract": "verbatim required (meta 'verbatim_required')", "tbl": "contains a table"}


def test_latency_budget_bypasses_when_calls_would_overrun(cache_chunk: Chunk) -> None:
    llm = ScriptedLLMDouble({})
    chunks = [Chunk(id=f"c{i}", text=cache_chunk.text, index=i) for i in range(6)]
    stage = LLMExtract(llm, concurrency=2, bypass=Bypass(latency_budget_ms=500, call_ms=400))
    ctx = make_context("cache", budget=400)
    assert stage.run(chunks, ctx) == chunks
    assert llm.prompts == []
    assert notes(ctx, "bypass", scope="all")[0]["why"] == "latency: 6 calls estimated at 1200 ms > budget 500 ms"
    # within the budget: the calls run
    fast = LLMExtract(llm, concurrency=6, bypass=Bypass(latency_budget_ms=500, call_ms=400))
    fast.run(chunks, make_context("cache", budget=400))
    assert len(llm.prompts) == 6


def test_latency_bypass_uses_measured_call_time(cache_chunk: Chunk) -> None:
    llm = AsyncLLMDouble(lambda p: reply(prompt_id(p), "x"), delay=0.05)
    stage = LLMExtract(llm, concurrency=1, bypass=Bypass(latency_budget_ms=100))
    chunks = [Chunk(id=f"c{i}", text=cache_chunk.text, index=i) for i in range(4)]
    stage.run(chunks, make_context("cache", budget=300))  # no estimate yet: runs, and measures
    assert llm.calls == 4
    assert stage.caller.seconds_per_call is not None
    ctx = make_context("cache", budget=300)
    stage.run(chunks, ctx)
    assert llm.calls == 4
    assert notes(ctx, "bypass", scope="all")[0]["why"].startswith("latency: 4 calls estimated at")


# -- configuration ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"concurrency": 0}, "concurrency must be a positive int, got 0"),
        ({"timeout": 0}, r"timeout must be > 0 seconds or None, got 0"),
        ({"reach": 0.5}, r"reach must be >= 1 \(budgets of text\), got 0.5"),
        ({"on_empty": "ignore"}, "on_empty must be 'keep' or 'drop', got 'ignore'"),
        ({"prompt": "Answer {question}"}, r"prompt must contain \{id\}, \{text\}"),
    ],
)
def test_bad_settings_raise(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        LLMExtract(lambda p: "", **kwargs)  # type: ignore[arg-type]


def test_not_an_llm_raises() -> None:
    with pytest.raises(ConfigError, match="reader must be a callable prompt -> str"):
        LLMExtract(42)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"short_chunks": -1}, "short_chunks and min_tokens must be >= 0"),
        ({"latency_budget_ms": 0}, "latency_budget_ms must be > 0 or None, got 0"),
    ],
)
def test_bad_bypass_raises(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        Bypass(**kwargs)  # type: ignore[arg-type]


# -- framework LLMs ----------------------------------------------------------------------------
def test_langchain_chat_model(save_chunk: Chunk) -> None:
    # FakeListChatModel: LangChain's own stand-in for a remote chat model (none exists here)
    model = FakeListChatModel(responses=[reply("save#1", "Use keyword arguments such as update_fields instead.")] * 2)
    out = LLMExtract(model, concurrency=1).run(indexed(save_chunk, save_chunk), make_context(Q))
    assert all("is not supported since Django 5.1." in c.text and "post_save" not in c.text for c in out)


def test_llamaindex_llm(save_chunk: Chunk) -> None:
    # MockLLM: LlamaIndex's stand-in for a remote LLM; it echoes the prompt, so the
    # "evidence" is the whole prompt read one line a line: only source lines verify
    ctx = make_context(Q)
    out = LLMExtract(MockLLM()).run(indexed(save_chunk, save_chunk), ctx)
    assert out[0].text == save_chunk.text  # every source line echoed: all kept, chunk whole
    assert notes(ctx, "discarded")  # the instruction lines are not in the chunk


# -- in the assembler -----------------------------------------------------------------------
def test_every_input_has_one_fate_in_a_pipeline(save_chunk: Chunk, cache_chunk: Chunk) -> None:
    llm = ScriptedLLMDouble(
        {
            "save#1": reply("save#1", "Use keyword arguments such as update_fields instead."),
            "cache#2": reply("cache#2", "A hallucinated sentence about caches that is nowhere."),
        }
    )
    stages = [LLMExtract(llm, on_empty="drop"), Select(), Arrange("relevance")]
    res = Assembler(stages=stages).run(Q, [save_chunk, cache_chunk, {"id": "x", "text": "tiny"}], budget=80)
    assert len(res.report.decisions) == 3
    assert res.report.decisions[1].reason == "no_evidence"
    assert res.report.decisions[0].kept
    assert "is not supported since Django 5.1." in res.text
    assert render(res.chunks) == res.text


def test_assembler_option_runs_the_stage_before_select(save_chunk: Chunk, cache_chunk: Chunk) -> None:
    llm = ScriptedLLMDouble({"save#1": reply("save#1", "Use keyword arguments such as update_fields instead.")})
    assembler = Assembler(llm_stage=LLMExtract(llm), max_share=None)  # whole chunks reach the LLM
    names = [s.name for s in assembler.stages]
    assert names.index("llm_extract") == names.index("select") - 1
    law = Chunk(id="law", text=cache_chunk.text.replace("cache", "store"), meta={"verbatim_required": True})
    res = assembler.run(Q, [save_chunk, cache_chunk, law], budget=120)
    assert "is not supported since Django 5.1." in res.text
    assert "post_save" not in res.chunks[0].text
    assert len(res.report.decisions) == 3
    assert any(n["event"] == "bypass" and n["stage"] == "llm_extract" for n in res.report.notes)
