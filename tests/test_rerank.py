"""Rerank stage with injected scorers (a plain callable is the scorer contract)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ctxassembly.errors import ChunkError, ConfigError, MissingExtraError
from ctxassembly.models import Embedder, embedder_for, model_kind, plan_batches
from ctxassembly.models.vectors import chunk_vectors
from ctxassembly.stages.rerank import Rerank, passage
from tests.conftest import chunks, context

pytestmark = pytest.mark.unit


def by_word(word: str):
    """A scorer: how often ``word`` occurs in each text."""

    def score(query: str, texts):
        return [t.count(word) for t in texts]

    return score


def ranked(*texts: str, scores=None):
    cs = chunks(*[(f"c{i}", t) for i, t in enumerate(texts)])
    return [c.with_meta(relevance_rank=i) if scores is None else c for i, c in enumerate(cs)]


def test_model_score_replaces_the_score_and_orders():
    cs = [
        c.__class__(**{**c.to_dict(), "score": 0.9 - i / 10, "meta": {"relevance_rank": i}})
        for i, c in enumerate(ranked("x", "x y y", "y"))
    ]
    ctx = context("q")
    out = Rerank(by_word("y")).run(cs, ctx)
    assert [c.id for c in out] == ["c1", "c2", "c0"]
    assert [c.score for c in out] == [2.0, 1.0, 0.0]
    facts = [ctx.ledger[c.index] for c in out]
    assert [f.rank for f in facts] == [0, 1, 2]
    assert facts[0].rerank.pre_score == pytest.approx(0.8)
    assert facts[0].retriever_score.score == pytest.approx(0.8)
    assert facts[0].rerank.pre_rank == 1
    assert cs[1].score == pytest.approx(0.8)  # input untouched


def test_ties_keep_the_incoming_order():
    out = Rerank(lambda q, ts: [1.0] * len(ts)).run(ranked("a", "b", "c"), context())
    assert [c.id for c in out] == ["c0", "c1", "c2"]


def test_fuse_blends_incoming_order():
    cs = ranked("a", "b", "c y")
    assert Rerank(by_word("y")).run(cs, context())[0].id == "c2"
    ctx = context()
    fused = Rerank(by_word("y"), rerank_fuse=5.0).run(cs, ctx)
    assert fused[0].id == "c0"  # the incoming order dominates at weight 5
    assert ctx.ledger[fused[0].index].rerank.score == 0.0


def test_min_score_and_top_k_record_fates():
    ctx = context()
    out = Rerank(by_word("y"), min_score=1, top_k=1).run(ranked("a", "y", "yy"), ctx)
    assert [c.id for c in out] == ["c2"]
    reasons = {d.index: d.reason for d in ctx.report.fates}
    assert reasons == {0: "below_threshold", 1: "rank_cutoff"}


def test_one_call_per_run():
    calls = []

    def scorer(q, texts):
        calls.append(len(texts))
        return [0.0] * len(texts)

    Rerank(scorer).run(ranked("a", "b", "c"), context())
    assert calls == [3]


def test_empty_list_is_fine():
    assert Rerank(by_word("y")).run([], context()) == []


@pytest.mark.parametrize(
    ("scorer", "match"),
    [
        (lambda q, ts: [1.0], "returned 1 scores for 2 chunks"),
        (lambda q, ts: [1.0, float("nan")], "non-finite score nan for chunk 'c1'"),
    ],
)
def test_bad_scorer_output_is_an_error(scorer, match):
    with pytest.raises(ConfigError, match=match):
        Rerank(scorer).run(ranked("a", "b"), context())


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"model": 42}, "reranker must be a CrossEncoder or SentenceTransformer"),
        ({"model": "  "}, "must not be empty"),
        ({"kind": "late"}, "kind must be 'auto', 'bi' or 'cross'"),
        ({"rerank_fuse": -1}, "rerank_fuse must be a non-negative number"),
        ({"k": 0}, "k must be positive"),
        ({"top_k": 0}, "top_k must be a positive int"),
        ({"batch_size": 0}, "batch_size must be a positive int"),
    ],
)
def test_bad_options(kwargs, match):
    kwargs = {"model": by_word("y"), **kwargs}
    with pytest.raises(ConfigError, match=match):
        Rerank(**kwargs)


def test_missing_extra_names_it(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "sentence_transformers" else real(name, *a)
    )
    with pytest.raises(MissingExtraError, match=r"pip install 'ctxassembly\[models\]'"):
        Rerank("cross-encoder/ms-marco-MiniLM-L-6-v2")
    with pytest.raises(MissingExtraError, match=r"sentence-transformers is not installed"):
        Embedder("sentence-transformers/all-MiniLM-L6-v2")


def _write(folder: Path, files: dict[str, object]) -> str:
    folder.mkdir()
    for name, content in files.items():
        (folder / name).write_text(json.dumps(content))
    return str(folder)


def test_model_kind_reads_the_saved_config(tmp_path):
    bi = _write(tmp_path / "bi", {"modules.json": [], "config.json": {"architectures": ["BertModel"]}})
    cross = _write(tmp_path / "cross", {"config.json": {"architectures": ["BertForSequenceClassification"]}})
    other = _write(tmp_path / "other", {"config.json": {"architectures": ["GPT2LMHeadModel"]}})
    empty = _write(tmp_path / "empty", {})
    assert model_kind(bi) == "bi"
    assert model_kind(cross) == "cross"
    with pytest.raises(ConfigError, match="neither a sequence-classification cross-encoder"):
        model_kind(other)
    with pytest.raises(ConfigError, match="cannot tell whether"):
        model_kind(empty)
    with pytest.raises(ConfigError, match="does not exist"):
        model_kind(str(tmp_path / "nowhere"))
    assert model_kind("cross-encoder/ms-marco-MiniLM-L-6-v2") == "cross"  # hub convention, offline


def fake_vectors(texts):
    """An embedding function: a bag of the words 'alpha', 'beta', 'gamma'."""
    return np.array([[t.count("alpha"), t.count("beta"), t.count("gamma") + 0.01] for t in texts], dtype=float)


def test_bi_encoder_path_uses_cosine_and_supplied_embeddings():
    emb = Embedder(fake_vectors)
    cs = ranked("gamma", "alpha alpha", "beta")
    cs[2] = cs[2].with_meta(embedding=[1.0, 0.0, 0.0])  # the caller says: this one is about alpha
    out = Rerank(emb).run(cs, context("alpha"))
    assert [c.id for c in out][:2] in (["c1", "c2"], ["c2", "c1"])
    assert out[0].score == pytest.approx(1.0, abs=1e-3)
    assert emb.embedded == 3  # question + the two chunks without an embedding


def test_bi_encoder_embeds_the_question_with_the_chunks_in_one_pass():
    calls = []

    def counting(texts):
        calls.append(list(texts))
        return fake_vectors(texts)

    emb = Embedder(counting)
    cs = ranked("gamma", "alpha alpha", "beta")
    cs[2] = cs[2].with_meta(embedding=[1.0, 0.0, 0.0])
    Rerank(emb).run(cs, context("alpha"))
    assert calls == [["alpha", "gamma", "alpha alpha"]]
    assert emb.passes == 1
    no_cache = Embedder(counting, cache_size=0)
    calls.clear()
    Rerank(no_cache).run(ranked("gamma", "beta"), context("alpha"))
    assert calls == [["alpha"], ["gamma", "beta"]]  # nothing is kept, so nothing is fetched ahead


def test_plan_batches_cuts_padding_and_covers_every_text_once():
    lengths = [200, *([20] * 40)]
    runs = plan_batches(lengths, max_batch=64, pass_cost=64)
    assert runs == [list(range(1, 41)), [0]]  # the long text gets a pass of its own
    assert plan_batches(lengths, pass_cost=10**6) == [[*range(1, 41), 0]]  # passes dearer than padding
    runs = plan_batches([5, 9, 7, 3, 8], max_batch=2, pass_cost=0)
    assert sorted(i for r in runs for i in r) == [0, 1, 2, 3, 4]
    assert all(len(r) <= 2 for r in runs)
    assert plan_batches([], max_batch=4) == []


def test_embedding_cache_is_shared_and_bounded():
    calls = []

    def counting(texts):
        calls.append(list(texts))
        return fake_vectors(texts)

    emb = embedder_for(counting)
    assert embedder_for(counting) is emb
    emb.embed(["alpha", "beta", "alpha"])
    emb.embed(["beta", "gamma"])
    assert calls == [["alpha", "beta"], ["gamma"]]
    small = Embedder(counting, cache_size=1)
    small.embed(["alpha", "beta"])
    assert len(small) == 1


def test_bad_embeddings_name_the_chunk():
    emb = Embedder(fake_vectors)
    cs = ranked("alpha", "beta")
    with pytest.raises(
        ChunkError, match=r"chunk 'c0': field 'meta\.embedding': has 2 dimensions, the embedder gives 3"
    ):
        chunk_vectors([cs[0].with_meta(embedding=[1.0, 0.0]), cs[1]], emb)
    with pytest.raises(ChunkError, match="expected a 1-d finite vector"):
        chunk_vectors([cs[0].with_meta(embedding=[[1.0]])], emb)
    with pytest.raises(ConfigError, match=r"embedder returned shape \(1,\) for 1 texts"):
        Embedder(lambda ts: [1.0]).embed(["x"])
    with pytest.raises(ConfigError, match="embedder must be a SentenceTransformer"):
        Embedder(3.5)
    with pytest.raises(ConfigError, match="cache_size must be a non-negative int"):
        Embedder(fake_vectors, cache_size=-1)
    with pytest.raises(ConfigError, match="batch_size must be a positive int, got 0"):
        Embedder(fake_vectors, batch_size=0)
    with pytest.raises(ConfigError, match=r"pass_cost must be a non-negative int \(tokens\), got -1"):
        Embedder(fake_vectors, pass_cost=-1)


def test_passage_puts_the_section_first():
    c = chunks({"id": "a", "text": "body", "section": "Settings > X"})[0]
    assert passage(c) == "Settings > X\nbody"
    assert passage(chunks(("b", "body"))[0]) == "body"


def test_assembler_wiring_leaves_the_model_free_pipeline_alone():
    from ctxassembly import Assembler

    head = ["admit", "depth", "version", "relevance", "horizon", "safety"]  # the cascade: see test_horizon.py
    core = [*head, "dedup", "merge"]
    assert [s.name for s in Assembler().stages] == [*core, "excerpt", "select", "arrange"]
    with_models = [s.name for s in Assembler(reranker=by_word("y"), embedder=fake_vectors).stages]
    assert with_models == [
        *head,
        "rerank",
        "dedup",
        "semantic_dedup",
        "merge",
        "excerpt",
        "select",
        "arrange",
    ]
    assert [s.name for s in Assembler(extract=True).stages] == [*core, "tables", "extract", "select", "arrange"]
    assert "extract" not in [s.name for s in Assembler(reranker=by_word("y"), extract=False).stages]
    assert [s.name for s in Assembler(reranker=by_word("y")).stages if getattr(s, "uses_model", False)] == ["rerank"]


def test_the_report_notes_supplied_embeddings_only_when_there_are_some():
    cs = ranked("gamma", "alpha alpha", "beta")
    cs[2] = cs[2].with_meta(embedding=[1.0, 0.0, 0.0])
    ctx = context("alpha")
    Rerank(Embedder(fake_vectors)).run(cs, ctx)
    assert [n for n in ctx.report.notes if n["event"] == "embeddings"] == [
        {"stage": "rerank", "event": "embeddings", "supplied": 1, "of": 3}
    ]
    plain = context("alpha")
    Rerank(Embedder(fake_vectors)).run(ranked("gamma", "beta"), plain)
    assert not [n for n in plain.report.notes if n["event"] == "embeddings"]
