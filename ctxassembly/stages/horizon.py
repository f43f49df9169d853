"""Horizon stage: a cascade, so that only the head of the ranking pays for the costly stages.

A retriever may hand over 1,000 candidates for a budget that holds five of them. After
the relevance ranking, only the best chunks whose *estimated* size adds up to
``horizon`` x the budget (and never fewer than ``min_chunks`` of them) go on to the
stages that cost per chunk (injection scan, de-duplication, merge, excerpt, token
counting in select); the others leave with reason ``beyond_horizon``, their rank and the
horizon in the detail, so every input chunk still has exactly one fate.

The estimate (characters / ``chars_per_token``) decides only where the horizon falls;
the budget is always spent in real tokens by the select stage.

The horizon must never starve the selection: when the head loses so much to duplicates
or injections that select runs out of chunks before the budget is spent, the pipeline
undoes the stages after the horizon and runs them again over a head twice as deep
(:meth:`Horizon.starved` is the test, ``ledger.call.widened`` the doubling; see
:func:`ctxassembly.pipeline.run`), until the selection is full or every chunk is
inside. Text caches make the second pass cost only its new chunks.
"""

from __future__ import annotations

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.kinds import Reason
from ctxassembly.pipeline import Context, StageBase

__all__ = ["Horizon"]


class Horizon(StageBase):
    """Pass on the head of a ranked list; record the rest as ``beyond_horizon``.

    Usage (the default :class:`~ctxassembly.Assembler` places it after relevance)::

        Assembler(horizon=4)     # the head holds ~4 budgets of text (the default)
        Assembler(horizon=None)  # every candidate goes through every stage

    :param horizon: how many budgets of (estimated) text the head holds.
    :param min_chunks: the head is never shorter than this.
    :param chars_per_token: the size estimate's characters per token (cl100k averages
        about 4 on English prose, fewer on code: the multiple leaves room for that).
    :param slack: select counts as starved when more than this share of the budget is
        left unspent while chunks wait beyond the horizon.
    :raises ConfigError: a horizon below 1, a min_chunks below 1, a non-positive
        chars_per_token or a slack outside [0, 1).
    """

    name = "horizon"
    reads = frozenset({"widened", "selection"})
    writes = frozenset({"horizon_total", "horizon_cut"})

    def __init__(
        self, horizon: float = 4.0, *, min_chunks: int = 20, chars_per_token: float = 4.0, slack: float = 0.1
    ) -> None:
        if isinstance(horizon, bool) or not isinstance(horizon, (int, float)) or not horizon >= 1:
            raise ConfigError(f"horizon must be a number of budgets >= 1 (or None for no horizon), got {horizon!r}")
        if isinstance(min_chunks, bool) or not isinstance(min_chunks, int) or min_chunks < 1:
            raise ConfigError(f"min_chunks must be a positive int, got {min_chunks!r}")
        if not chars_per_token > 0:
            raise ConfigError(f"chars_per_token must be positive, got {chars_per_token!r}")
        if not 0 <= slack < 1:
            raise ConfigError(f"slack must be in [0, 1), got {slack!r}")
        self.horizon = float(horizon)
        self.min_chunks = min_chunks
        self.chars_per_token = chars_per_token
        self.slack = slack

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        state = ctx.ledger.call
        scale = 2**state.widened
        limit = self.horizon * ctx.budget * scale
        floor = self.min_chunks * scale
        reach, cut = 0.0, len(chunks)
        for i, c in enumerate(chunks):
            if i >= floor and reach >= limit:
                cut = i
                break
            reach += len(c.text) / self.chars_per_token
        ctx.ledger.update_call(horizon_total=len(chunks), horizon_cut=cut)
        if cut == len(chunks):
            return chunks
        horizon = round(limit)
        for rank in range(cut, len(chunks)):
            ctx.report.drop(chunks[rank], self.name, Reason.BEYOND_HORIZON, rank=rank, horizon=horizon, head=cut)
        ctx.report.note(self.name, "cut", head=cut, of=len(chunks), horizon_tokens=horizon, widened=state.widened)
        return chunks[:cut]

    def starved(self, ctx: Context) -> bool:
        """True when the last pass left the budget unspent for want of chunks: select
        kept every chunk it was offered, or left more than ``slack`` of its budget, while
        chunks wait beyond the horizon."""
        state = ctx.ledger.call
        selection = state.selection
        total = state.horizon_total or 0
        cut = total if state.horizon_cut is None else state.horizon_cut
        if cut >= total or selection is None:
            return False
        left = selection.available - selection.tokens
        if left <= 0:
            return False
        return selection.overflow == 0 or left > self.slack * selection.available
