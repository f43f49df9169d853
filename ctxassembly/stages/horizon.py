"""Depth and horizon: a cascade, so that only the head of the ranking pays for the costly stages.

The *depth* (:class:`Depth`) comes first, before any stage reads a text: only the
retriever's best candidates whose estimated size adds up to ``depth`` x the budget (and
never fewer than ``min_chunks``, 100 by default) are read at all; the rest leave as
``beyond_horizon`` with their retriever rank. A thousand candidates for a budget of five
chunks then cost what a hundred do. The relevance ranking can lift a chunk only within
that depth. It widens like the horizon, when the selection starves, and when no chunk
within it carries the target version the caller or the question asked for.

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

import math
from collections.abc import Sequence

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.kinds import Reason
from ctxassembly.ledger import Selection
from ctxassembly.pipeline import SHRINK_SLACK, Context, Stage, StageBase

__all__ = ["Depth", "Horizon"]


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
    shrinks = True
    reads = frozenset({"widened", "selection"})
    writes = frozenset({"horizon_total", "horizon_cut"})

    def __init__(
        self, horizon: float = 4.0, *, min_chunks: int = 20, chars_per_token: float = 4.0, slack: float = 0.1
    ) -> None:
        self.horizon = _budgets("horizon", horizon, "for no horizon")
        _check_head(min_chunks, chars_per_token, slack)
        self.min_chunks = min_chunks
        self.chars_per_token = chars_per_token
        self.slack = slack

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        state = ctx.ledger.call
        scale = 2**state.widened
        limit = self.horizon * ctx.budget * scale
        floor = self.min_chunks * scale
        cut = _head(chunks, floor, limit, self.chars_per_token)
        ctx.ledger.update_call(horizon_total=len(chunks), horizon_cut=cut)
        if cut == len(chunks):
            return chunks
        horizon = round(limit)
        ctx.report.drop_ranked(chunks[cut:], self.name, Reason.BEYOND_HORIZON, cut, horizon=horizon, head=cut)
        ctx.report.note(self.name, "cut", head=cut, of=len(chunks), horizon_tokens=horizon, widened=state.widened)
        return chunks[:cut]

    def starved(self, ctx: Context) -> bool:
        """True when the last pass left more than ``slack`` of the budget unspent while
        chunks wait beyond the horizon (a selection full to within the slack is full, even
        when select kept every chunk it was offered: more chunks could only fill crumbs)."""
        state = ctx.ledger.call
        selection = state.selection
        total = state.horizon_total or 0
        cut = total if state.horizon_cut is None else state.horizon_cut
        return cut < total and _starved(selection, self.slack)


class Depth(StageBase):
    """Read only the retriever's head: the best candidates by retriever score (a missing
    score ranks last; ties and score-less lists keep the incoming order) whose estimated
    size adds up to ``depth`` budgets, and never fewer than ``min_chunks``; the rest leave
    as ``beyond_horizon`` (``rank`` in the detail is the retriever's). The kept chunks go
    on in their incoming order, so a list within the depth is untouched.

    Usage (the default :class:`~ctxassembly.Assembler` places it after admit)::

        Assembler(depth=16)    # read ~16 budgets of text, at least 100 chunks (the default)
        Assembler(depth=None)  # read every candidate

    :param depth: how many budgets of (estimated) text are read.
    :param min_chunks: never fewer chunks than this are read.
    :param chars_per_token: the size estimate's characters per token.
    :param slack: the pass ran dry when select kept every chunk it was offered and left
        more than this share of the budget unspent.
    :raises ConfigError: a depth below 1, a min_chunks below 1, a non-positive
        chars_per_token or a slack outside [0, 1).
    """

    name = "depth"
    reads = frozenset({"widened", "selection", "target_unseen"})
    writes = frozenset({"depth_total", "depth_cut"})

    def __init__(
        self, depth: float = 16.0, *, min_chunks: int = 100, chars_per_token: float = 4.0, slack: float = 0.1
    ) -> None:
        self.depth = _budgets("depth", depth, "to read every candidate")
        _check_head(min_chunks, chars_per_token, slack)
        self.min_chunks = min_chunks
        self.chars_per_token = chars_per_token
        self.slack = slack

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        scale = 2**ctx.ledger.call.widened
        floor = self.min_chunks * scale
        if len(chunks) <= floor:  # the common case: nothing to cut, nothing to sort
            ctx.ledger.update_call(depth_total=len(chunks), depth_cut=len(chunks))
            return chunks
        limit = self.depth * ctx.budget * scale
        order = _by_score(chunks)
        cut = _head([chunks[i] for i in order], floor, limit, self.chars_per_token)
        ctx.ledger.update_call(depth_total=len(chunks), depth_cut=cut)
        if cut == len(order):
            return chunks
        depth = round(limit)
        beyond = [chunks[i] for i in order[cut:]]
        ctx.report.drop_ranked(beyond, self.name, Reason.BEYOND_HORIZON, cut, depth=depth, head=cut)
        ctx.report.note(self.name, "cut", head=cut, of=len(chunks), depth_tokens=depth, widened=ctx.ledger.call.widened)
        kept = sorted(order[:cut])
        return [chunks[i] for i in kept]

    def hopeless(self, chunks: list[Chunk], ctx: Context, rest: Sequence[Stage]) -> bool:
        """The pass under way will be starved (:meth:`starved`) whatever ``rest``, the stages
        still to run in it, do with ``chunks``: candidates wait beyond the depth and either the
        version stage found no chunk of the asked target, or select would keep every chunk
        whole and still leave more than ``slack`` of the budget (when every stage before it
        in ``rest`` only shrinks, :attr:`~ctxassembly.pipeline.StageBase.shrinks`). The
        pipeline then widens without running the rest of a pass it would roll back."""
        if not ctx.ledger.call.unread:
            return False
        if self.doomed(ctx):
            return True
        at = next((i for i in range(len(rest) - 1, -1, -1) if callable(getattr(rest[i], "starves", None))), None)
        if at is None or not all(isinstance(s, StageBase) and s.shrinks for s in rest[:at]):
            return False
        starves = rest[at].starves  # type: ignore[attr-defined]  # found by getattr above
        return bool(starves(chunks, ctx, self.slack, SHRINK_SLACK))

    def doomed(self, ctx: Context) -> bool:
        """The pass under way is one to roll back, whatever the stages still to run in it do:
        candidates wait beyond the depth and the version stage found no chunk of the target
        the caller or the question asked for (:func:`~ctxassembly.pipeline.run` asks after
        each stage up to the horizon, and runs none after it)."""
        state = ctx.ledger.call
        return state.unread and state.target_unseen is not None

    def starved(self, ctx: Context) -> bool:
        """True when candidates wait beyond the depth and the last pass either ran out of
        chunks (select kept every chunk it was offered and left more than ``slack`` of the
        budget; a pass whose chunks did not all fit has chunks enough: the next ones down
        the ranking would only fill its crumbs) or found no chunk of the target version
        the caller or the question asked for (the version stage's ``target_unseen``: it
        warns only once everything is read)."""
        state = ctx.ledger.call
        if not state.unread:
            return False
        selection = state.selection
        ran_dry = selection is not None and selection.overflow == 0 and _starved(selection, self.slack)
        return state.target_unseen is not None or ran_dry


def _by_score(chunks: list[Chunk]) -> list[int]:
    """Positions of ``chunks``, best retriever score first (a missing score last, ties in
    the incoming order). With finite scores (what validation lets through from a mapping)
    one float key does it: the stable sort keeps ties in order."""
    scores = [c.score for c in chunks]
    if all(s is None or math.isfinite(s) for s in scores):
        keys = [math.inf if s is None else -s for s in scores]
        return sorted(range(len(keys)), key=keys.__getitem__)
    return sorted(range(len(scores)), key=lambda i: (scores[i] is None, -(scores[i] or 0.0), i))


def _head(chunks: list[Chunk], floor: int, limit: float, chars_per_token: float) -> int:
    """How many of ``chunks`` (best first) the head holds: at least ``floor``, then until
    their estimated tokens reach ``limit``."""
    reach = 0.0
    for i, c in enumerate(chunks):
        if i >= floor and reach >= limit:
            return i
        reach += len(c.text) / chars_per_token
    return len(chunks)


def _budgets(name: str, value: float, none_means: str) -> float:
    """``value``, a number of budgets (>= 1), as a float; else the error naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 1:
        raise ConfigError(f"{name} must be a number of budgets >= 1 (or None {none_means}), got {value!r}")
    return float(value)


def _check_head(min_chunks: int, chars_per_token: float, slack: float) -> None:
    """The settings the depth and the horizon share, checked alike."""
    if isinstance(min_chunks, bool) or not isinstance(min_chunks, int) or min_chunks < 1:
        raise ConfigError(f"min_chunks must be a positive int, got {min_chunks!r}")
    if not chars_per_token > 0:
        raise ConfigError(f"chars_per_token must be positive, got {chars_per_token!r}")
    if not 0 <= slack < 1:
        raise ConfigError(f"slack must be in [0, 1), got {slack!r}")


def _starved(selection: Selection | None, slack: float) -> bool:
    """Select left more than ``slack`` of its budget unspent."""
    if selection is None:
        return False
    return selection.available - selection.tokens > slack * selection.available
