"""LLMExtract with the real local model, SmolLM2-135M-Instruct (offline, CPU, 1 thread).

The model is weak; what is asserted is what the stage guarantees whatever the model
says: every kept piece is a verbatim slice of its source, every returned sentence is
either verified or recorded as discarded, and each chunk gets exactly one outcome.
Kept short: two chunks, 40 new tokens a call.
"""

from __future__ import annotations

import pytest

from ctxassembly.chunk import Chunk
from ctxassembly.llm.extract import LLMExtract
from ctxassembly.llm.readers import SmolLM2Reader

from .conftest import CACHE_DOC, SAVE_DOC, make_context, notes

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def smollm2() -> SmolLM2Reader:
    return SmolLM2Reader(max_new_tokens=40, threads=1).load()


def test_real_model_output_is_verified(smollm2: SmolLM2Reader) -> None:
    chunks = [
        Chunk(id="cache", text=CACHE_DOC, index=0, version="5.1"),
        Chunk(id="save", text=SAVE_DOC, index=1, version="5.1"),
    ]
    ctx = make_context("What is the default cache timeout?", budget=60)
    out = LLMExtract(smollm2, concurrency=2).run(chunks, ctx)
    assert [c.id for c in out] == ["cache", "save"]
    outcomes = {"extracted", "kept_whole", "no_evidence", "llm_failed"}
    assert sorted(n["id"] for n in ctx.report.notes if n["event"] in outcomes) == ["cache", "save"]
    for before, after in zip(chunks, out, strict=True):
        for piece in after.text.split("\n\n"):
            assert piece == "[…]" or piece in before.text
        info = after.meta.get("llm_extract")
        if info is not None:
            assert all(s in before.text for s in info["evidence"])
    for d in notes(ctx, "discarded"):
        assert d["sentence"] not in CACHE_DOC + SAVE_DOC
