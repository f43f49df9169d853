"""Semantic dedup with an injected embedding function (texts -> vectors)."""

from __future__ import annotations

import numpy as np
import pytest

from ctxassembly.errors import ConfigError
from ctxassembly.models import Embedder
from ctxassembly.stages.semantic import SemanticDedup
from tests.conftest import chunks, context

pytestmark = pytest.mark.unit

TOPICS = ("retry", "timeout", "cache")


def topic_vectors(texts):
    """An embedding function: one axis per topic word, so paraphrases on a topic coincide."""
    return np.array([[float(w in t) for w in TOPICS] + [0.01] for t in texts])


def test_paraphrase_dropped_higher_ranked_copy_stays():
    ctx = context()
    cs = chunks(
        ("a", "The retry policy repeats failed jobs."),
        ("b", "Failed jobs are repeated by the retry policy."),
        ("c", "The cache is in memory."),
    )
    out = SemanticDedup(Embedder(topic_vectors)).run(cs, ctx)
    assert [c.id for c in out] == ["a", "c"]
    assert ctx.ledger[out[0].index].duplicates == ("b",)
    d = ctx.report.fate(1)
    assert (d.stage, d.reason, d.detail["duplicate_of"], d.detail["kind"]) == (
        "semantic_dedup",
        "duplicate",
        "a",
        "semantic",
    )


def test_a_different_number_makes_a_conflict_not_a_duplicate():
    cs = chunks(("a", "The retry limit is 3 attempts."), ("b", "The retry limit is 5 attempts."))
    ctx = context()
    out = SemanticDedup(Embedder(topic_vectors)).run(cs, ctx)
    assert [c.id for c in out] == ["a", "b"]
    assert ctx.ledger[out[0].index].conflicts_with == ("b",)
    assert ctx.ledger[out[1].index].conflicts_with == ("a",)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Retries are supported.", "Retries are not supported."),
        ("Retry was added in version 3.1.", "Retry was added in version 3.2."),
    ],
)
def test_negation_and_version_guard(a, b):
    out = SemanticDedup(Embedder(topic_vectors)).run(chunks(("a", a), ("b", b)), context())
    assert len(out) == 2


def test_supplied_embeddings_are_used_and_nothing_is_embedded_twice():
    calls = []

    def counting(texts):
        calls.append(list(texts))
        return topic_vectors(texts)

    stage = SemanticDedup(Embedder(counting))
    cs = chunks(("a", "retry one"), ("b", "cache two"), ("c", "timeout three"))
    cs[0] = cs[0].with_meta(embedding=[0.0, 0.0, 1.0, 0.0])  # the caller says: about the cache
    out = stage.run(cs, context())
    assert [c.id for c in out] == ["a", "c"]  # b duplicates a by the supplied vector
    stage.run(chunks(("b", "cache two"), ("c", "timeout three")), context())
    assert calls == [["cache two", "timeout three"]]


def test_short_lists_and_threshold_validation():
    stage = SemanticDedup(Embedder(topic_vectors))
    assert stage.run([], context()) == []
    one = chunks(("a", "x"))
    assert stage.run(one, context()) == one
    for bad in (0, 1.5, True):
        with pytest.raises(ConfigError, match="semantic_threshold must be in"):
            SemanticDedup(Embedder(topic_vectors), semantic_threshold=bad)


def test_idempotent():
    stage = SemanticDedup(Embedder(topic_vectors))
    cs = chunks(("a", "retry a"), ("b", "retry b"), ("c", "cache"))
    once = stage.run(cs, context())
    again = stage.run(list(once), context())
    assert [c.id for c in again] == [c.id for c in once]
