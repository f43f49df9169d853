"""Grouping texts into forward passes by length: no short sentence padded to a long chunk."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["plan_batches", "token_lengths"]


def token_lengths(model: Any, texts: list[str]) -> list[int]:
    """Tokens each text fills in the model's input (its tokenizer, truncated as the model
    truncates); characters / 4 when the model has no usable tokenizer."""
    limit = getattr(model, "max_seq_length", None) or 512
    tokenizer = getattr(model, "tokenizer", None)
    if callable(tokenizer):
        try:
            ids = tokenizer(texts, add_special_tokens=True, truncation=True, max_length=limit)["input_ids"]
            return [len(x) for x in ids]
        except (TypeError, KeyError, ValueError):  # a tokenizer without this call signature
            pass
    return [min(limit, 2 + len(t) // 4) for t in texts]


def plan_batches(lengths: Sequence[int], *, max_batch: int = 64, pass_cost: int = 64) -> list[list[int]]:
    """Group texts into forward passes at the least cost: padded tokens plus ``pass_cost`` per pass.

    A pass pads every text to its longest, so one pass over a 200-token unit and forty
    20-token sentences computes 8,200 token positions for 1,000 real ones. The texts are
    sorted by length and cut into runs by dynamic programming (exact for this cost).

    :returns: lists of indices into ``lengths``, each at most ``max_batch`` long.
    """
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    n = len(order)
    best = [0.0] + [float("inf")] * n
    cut = [0] * (n + 1)
    for j in range(1, n + 1):
        longest = lengths[order[j - 1]]  # sorted ascending: the last text of a run is its longest
        for i in range(max(0, j - max_batch), j):
            cost = best[i] + pass_cost + (j - i) * longest
            if cost < best[j]:
                best[j], cut[j] = cost, i
    runs = []
    j = n
    while j > 0:
        runs.append(order[cut[j] : j])
        j = cut[j]
    return runs[::-1]
