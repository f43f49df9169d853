"""The model stages with real models: all-MiniLM-L6-v2 (by path) and a tiny BERT
cross-encoder built by the session fixture and loaded through ``CrossEncoder(path)``."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from ctxassembly import Assembler, assemble
from ctxassembly.errors import ConfigError
from ctxassembly.models import Embedder, embedder_for, free_cores, load_cross_encoder, model_kind, torch_threads
from ctxassembly.stages.extract import Extract
from ctxassembly.stages.rerank import Rerank
from ctxassembly.stages.semantic import SemanticDedup
from tests.conftest import chunks, context

pytestmark = pytest.mark.integration

DOCS = [
    ("pizza", "A margherita pizza is topped with tomato, mozzarella and basil."),
    ("reset", "A password reset link is valid for three days by default."),
    ("weather", "It rained all afternoon in the mountains."),
]


def test_bi_encoder_rerank_puts_the_relevant_chunk_first(minilm):
    ctx = context("How long does a password reset link stay valid?")
    out = Rerank(minilm).run(chunks(*DOCS), ctx)
    assert out[0].id == "reset"
    assert ctx.ledger[out[0].index].rerank.score > ctx.ledger[out[1].index].rerank.score + 0.2


def test_a_folder_is_typed_from_its_config(minilm_path, cross_encoder_path):
    assert model_kind(minilm_path) == "bi"
    assert model_kind(str(cross_encoder_path)) == "cross"
    assert Rerank(minilm_path).kind == "bi"
    assert Rerank(str(cross_encoder_path)).kind == "cross"


def test_cross_encoder_by_path_and_instance_score_in_one_batch(cross_encoder_path):
    stage = Rerank(str(cross_encoder_path))
    assert stage._cross is None  # weights load on first use
    cs = chunks(*DOCS)
    out = stage.run(cs, context("password reset"))
    assert sorted(c.id for c in out) == sorted(d for d, _ in DOCS)
    assert all(np.isfinite(c.score) for c in out)
    instance = load_cross_encoder(str(cross_encoder_path))
    again = Rerank(instance).scores("password reset", cs)
    assert again == pytest.approx(stage.scores("password reset", cs), abs=1e-5)


def test_semantic_dedup_with_minilm(minilm):
    cs = chunks(
        ("a", "The password reset link expires after three days."),
        ("b", "After three days, the link to reset a password expires."),
        ("c", "The password reset link expires after 5 days."),
        ("d", "Pizza dough needs flour, water, salt and yeast."),
    )
    ctx = context()
    out = SemanticDedup(minilm, semantic_threshold=0.85).run(cs, ctx)
    assert [c.id for c in out] == ["a", "c", "d"]
    assert ctx.report.fate(1).detail["kind"] == "semantic"
    assert "a" in ctx.ledger[out[1].index].conflicts_with  # "5 days" differs from "three days"


def test_reranker_and_dedup_share_one_cache(minilm):
    emb = embedder_for(minilm)
    emb.clear()
    cs = chunks(*DOCS)
    Rerank(minilm).run(cs, context("pizza"))
    before = emb.embedded
    SemanticDedup(minilm).run(cs, context())
    assert emb.embedded == before  # every chunk vector came from the cache
    assert Rerank(minilm).embedder is SemanticDedup(minilm).embedder


def test_embedder_by_path_loads_lazily(minilm_path):
    emb = Embedder(minilm_path)
    assert emb._model is None
    vecs = emb.embed(["a sentence", "another sentence"])
    assert vecs.shape == (2, 384)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)


def test_planned_passes_give_the_vectors_of_one_pass(minilm):
    """Grouping texts by length (no padding to the longest) changes the cost, not the vectors."""
    texts = ["short one", "a somewhat longer sentence about caching", "x " * 150, "middle sized text here"]
    emb = Embedder(minilm, cache_size=0, pass_cost=0)
    got = emb.embed(texts)
    assert emb.passes > 1
    want = minilm.encode(texts, batch_size=len(texts), normalize_embeddings=True, show_progress_bar=False)
    assert np.allclose(got, want, atol=1e-4)


def test_small_passes_run_on_at_most_two_threads_and_restore_the_setting(minilm, monkeypatch):
    import torch

    before = torch.get_num_threads()
    seen = []
    encode = minilm.encode

    def spy(texts, **kw):
        seen.append((len(texts), torch.get_num_threads()))
        return encode(texts, **kw)

    monkeypatch.setattr(minilm, "encode", spy)  # on this instance only; undone after the test
    # busy_cores="ignore": the count must not depend on what else the machine runs meanwhile
    Embedder(minilm, cache_size=0, busy_cores="ignore").embed(["one short question"])
    Embedder(minilm, cache_size=0, small_pass_threads=1, busy_cores="ignore").embed(["one short question"])
    Embedder(minilm, cache_size=0, small_pass_threads=None).embed(["one short question"])
    assert seen == [(1, min(2, before)), (1, 1), (1, before)]
    assert torch.get_num_threads() == before


def test_a_pass_leaves_a_busy_core_alone_and_gives_the_same_vectors(minilm, monkeypatch):
    import torch

    import ctxassembly.models.embedder as embedder_module

    before = torch.get_num_threads()
    seen = []
    encode = minilm.encode

    def spy(texts, **kw):
        seen.append(torch.get_num_threads())
        return encode(texts, **kw)

    texts = ["a password reset link is valid for three days", "the cache keeps a vector per text " * 30]
    monkeypatch.setattr(minilm, "encode", spy)
    quiet = Embedder(minilm, cache_size=0, pass_cost=0, busy_cores="ignore")
    want = quiet.embed(texts)
    monkeypatch.setattr(embedder_module, "free_cores", lambda reads=3: 1)  # another thread holds a core
    busy = Embedder(minilm, cache_size=0, pass_cost=0)
    got = busy.embed(texts)
    assert busy.passes == 2
    assert busy.yielded == 2
    assert seen == [min(2, before)] * 2 + [1, 1]
    assert np.allclose(got, want, atol=1e-6)  # a reduction's order may differ on one thread
    assert torch.get_num_threads() == before
    monkeypatch.setattr(embedder_module, "free_cores", lambda reads=3: None)  # the load cannot be read
    unread = Embedder(minilm, cache_size=0, pass_cost=0)
    unread.embed(texts)
    assert unread.yielded == 0
    assert seen[-2:] == [min(2, before)] * 2
    with pytest.raises(ConfigError, match="busy_cores must be 'yield' or 'ignore', got 'never'"):
        Embedder(minilm, busy_cores="never")


@pytest.mark.skipif(not os.path.exists("/proc/loadavg"), reason="the run queue is read from /proc/loadavg")
def test_free_cores_counts_a_busy_process():
    cores = len(os.sched_getaffinity(0))
    quiet = free_cores()
    assert quiet is not None
    assert 0 <= quiet <= cores
    spin = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)  # until it is running, not a measurement
        busy = free_cores()
        assert busy is not None
        assert busy <= cores - 1
    finally:
        spin.kill()
        spin.wait()


def test_torch_threads_lowers_and_restores():
    import torch

    before = torch.get_num_threads()
    with torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with torch_threads(None), torch_threads(before + 1):
        assert torch.get_num_threads() == before  # never raised, only lowered
    with pytest.raises(ConfigError, match="small_pass_threads must be a positive int or None, got 0"):
        Embedder(minilm_fake, small_pass_threads=0)


def minilm_fake(texts):
    return np.ones((len(texts), 3))


def test_extract_with_minilm_keeps_the_answer(minilm):
    filler = " ".join(f"Paragraph {i} describes template loaders and their caching in detail." for i in range(12))
    text = f"{filler}\n\nA password reset link is valid for three days by default.\n\n{filler}"
    out = Extract(minilm).run(chunks(("a", text)), context("How long is a password reset link valid?", budget=300))
    assert "A password reset link is valid for three days by default." in out[0].text
    assert len(out[0].text) < len(text) / 2


def test_assemble_with_models_end_to_end(minilm):
    filler = " ".join(f"Sentence {i} is about forms and widgets." for i in range(40))
    cands = [
        {"id": "long", "text": f"{filler}\n\nThe password reset link is valid for 3 days.\n\n{filler}", "score": 0.5},
        {"id": "dup", "text": "The reset link for passwords stays valid for 3 days.", "score": 0.4},
        {"id": "pizza", "text": "Pizza dough needs flour.", "score": 0.3},
    ]
    q = "How long is the password reset link valid?"
    res = assemble(q, cands, budget=300, reranker=minilm, embedder=minilm)
    assert "valid for 3 days" in res.text
    assert [d.reason for d in res.report.decisions].count("kept") >= 1
    assert {"rerank", "semantic_dedup", "excerpt"} <= set(res.report.timings_ms)
    res = assemble(q, cands, budget=300, reranker=minilm, embedder=minilm, extract=True)
    assert "valid for 3 days" in res.text
    assert {"rerank", "semantic_dedup", "extract", "tables"} <= set(res.report.timings_ms)
    assert res.report.tokens_after <= 300


def test_arun_runs_model_pipelines_in_a_worker_thread(minilm):
    seen = []

    def scorer(query, texts):
        seen.append(threading.current_thread() is threading.main_thread())
        return [float(len(t)) for t in texts]

    asm = Assembler(reranker=scorer, rerank_fuse=None, order="relevance")
    res = asyncio.run(asm.arun("q", [{"id": "a", "text": "x"}, {"id": "b", "text": "longer"}], budget=200))
    assert seen == [False]
    assert res.chunks[0].id == "b"
