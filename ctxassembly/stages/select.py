"""Select stage: greedy by relevance inside a real token budget.

The cost of a chunk is the tokens of its *rendered* block (labels and tags included)
plus the separator, so the budget is the budget of the text the model reads. A chunk
that does not fit is skipped and the next one tried (skip, not break): a small chunk
further down can still fill the space. ``reserve`` keeps tokens back for the rest of
the prompt (system prompt, question, answer). With a ``fit`` function, a chunk that does
not fit whole is cut to what is left (its best-matching blocks), so a tight budget is not
left a quarter empty. With a ``grow`` function, what the chosen chunks leave of the budget
then goes back to the cut ones, best-ranked first (more of their own text, or all of it):
a cut is only as deep as the budget forces, and growing a cut never leaves a chunk out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.kinds import Reason
from ctxassembly.ledger import Selection
from ctxassembly.pipeline import Context, StageBase

__all__ = ["Select"]


class Select(StageBase):
    """Keep the best chunks that fit the budget.

    :param reserve: tokens of the budget kept back for the rest of the prompt.
    :param max_per_doc: at most this many chunks from one document (``doc_cap``).
    :param render: ``(chunk, status) -> (head, body, tail)`` as it will stand in the context,
        ``status`` the label the ledger gives it (the assembler passes the renderer's
        parts); the tokens of the three plus
        ``separator_tokens`` are the chunk's cost. Defaults to the bare text. Counting the
        parts apart lets the body's count be shared with other stages (BPE merges across
        the seams only ever save tokens; the assembler re-checks the rendered total).
    :param cost: ``(chunk, ctx) -> tokens``, replacing the rendered-size cost entirely.
    :param fit: ``(chunk, tokens, ctx) -> cut chunk | None``: a chunk that does not fit
        whole is cut to what is left of the budget (the assembler passes
        :meth:`~ctxassembly.stages.excerpt.Excerpt.fit`); ``None``: whole chunks only.
    :param grow: ``(chunk, tokens, ctx) -> grown chunk | None``: after the choice, a cut chunk
        gets back more of its text within ``tokens`` (the assembler passes
        :meth:`~ctxassembly.stages.excerpt.Excerpt.grower`); ``None``: cuts stay as they are.
    :param fit_tries: at most this many chunks per call are offered to ``fit`` (in rank
        order): a chunk far down the ranking is not worth a fragment.
    :raises ConfigError: a negative reserve or a cap below 1.
    """

    name = "select"
    shrinks = True  # what it keeps it cuts (fit) or gives back up to the whole chunk (grow)
    reads = frozenset({"version", "status_note", "blocks"})  # the shown status (render), fit's block scores
    # cut, blocks: a chunk fit cuts to the room left, or grow gives more of its text back
    writes = frozenset({"selection", "cut", "blocks"})

    def __init__(
        self,
        *,
        reserve: int = 0,
        max_per_doc: int | None = None,
        render: Callable[[Chunk, str | None], tuple[str, str, str]] | None = None,
        separator_tokens: int = 0,
        cost: Callable[[Chunk, Context], int] | None = None,
        fit: Callable[[Chunk, int, Context], Chunk | None] | None = None,
        fit_tries: int = 3,
        grow: Callable[[Chunk, int, Context], Chunk | None] | None = None,
    ) -> None:
        if reserve < 0:
            raise ConfigError(f"reserve must be >= 0 tokens, got {reserve!r}")
        if max_per_doc is not None and max_per_doc < 1:
            raise ConfigError(f"max_per_doc must be >= 1 or None, got {max_per_doc!r}")
        self.reserve = reserve
        self.max_per_doc = max_per_doc
        self.render = render
        self.separator_tokens = separator_tokens
        self.cost = cost
        self.fit = fit
        self.fit_tries = fit_tries
        self.grow = grow

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        available = ctx.budget - self.reserve
        per_doc: Counter[str] = Counter()
        out, costs, used, overflow, tries = [], [], 0, 0, 0
        # a cheap lower bound on a text's tokens, when the tokenizer has one (tokens.letter_runs)
        at_least = ctx.count_tokens.lower_bound
        for candidate in chunks:
            c = candidate
            doc = c.doc_id or c.id
            if self.max_per_doc is not None and per_doc[doc] >= self.max_per_doc:
                ctx.report.drop(c, self.name, Reason.DOC_CAP, doc_id=doc, max_per_doc=self.max_per_doc)
                continue
            remaining = available - used
            if self.cost is not None:
                cost: int | None = self.cost(c, ctx)
            else:
                head, body, tail = self.render(c, _status(ctx, c)) if self.render is not None else ("", c.text, "")
                if at_least is not None and at_least(body) > remaining:
                    cost = None  # the body alone cannot fit: no need to count it
                else:
                    frame = ctx.count_tokens(head) + ctx.count_tokens(tail) + self.separator_tokens
                    cost = _tokens_within(body, remaining - frame, ctx.count_tokens)
                    cost = None if cost is None else cost + frame
            if (
                (cost is None or cost > remaining)
                and self.fit is not None
                and self.cost is None
                and tries < self.fit_tries
            ):
                tries += 1
                fitted = self._fitted(c, remaining, ctx)
                if fitted is not None:
                    c, cost = fitted
            if cost is None or cost > remaining:
                ctx.report.drop(c, self.name, Reason.OVER_BUDGET, tokens=cost, remaining=max(remaining, 0))
                overflow += 1
                continue
            used += cost
            per_doc[doc] += 1
            out.append(c)
            costs.append(cost)
        if self.grow is not None and self.cost is None:
            used = self._grown(out, costs, available - used, ctx) + used
        # what the horizon reads to tell a full selection from a starved one
        ctx.ledger.update_call(selection=Selection(tokens=used, available=available, overflow=overflow))
        return out

    def starves(self, chunks: list[Chunk], ctx: Context, slack: float, per_chunk: int = 0) -> bool:
        """True when ``chunks``, every one kept whole (at its cost plus ``per_chunk``
        tokens), leave more than ``slack`` of the budget unspent: then this stage keeps all
        it is offered of them and reports a starved selection (no overflow), whatever it
        cuts or grows. Texts are counted only while the sum can still stay below the bar."""
        available = ctx.budget - self.reserve
        bar = available - slack * available  # a selection must spend less than this to starve
        spent = per_chunk * len(chunks) + self.separator_tokens * len(chunks)
        if spent >= bar:
            return False
        if self.cost is not None:
            for c in chunks:
                spent += self.cost(c, ctx) - self.separator_tokens
                if spent >= bar:
                    return False
            return True
        # the bodies' cheap lower bounds first, rendering one chunk at a time: a long list
        # reaches the bar after a few chunks, and nothing is counted then
        at_least = ctx.count_tokens.lower_bound
        parts, floor = [], spent
        for c in chunks:
            part = self.render(c, _status(ctx, c)) if self.render is not None else ("", c.text, "")
            parts.append(part)
            if at_least is not None:
                floor += at_least(part[1])
                if floor >= bar:
                    return False
        for head, body, tail in parts:
            spent += ctx.count_tokens(head) + ctx.count_tokens(body) + ctx.count_tokens(tail)
            if spent >= bar:
                return False
        return True

    def _grown(self, out: list[Chunk], costs: list[int], room: int, ctx: Context) -> int:
        """Give ``room`` tokens back to the cut chunks of ``out`` (in place), best-ranked
        first; the tokens spent."""
        assert self.grow is not None
        spent = 0
        ledger = ctx.ledger
        for k, c in enumerate(out):
            if room - spent <= 0:
                break
            blocks = ledger[c.index].blocks
            if blocks is None or blocks.kept is None:
                continue  # no cut of the excerpt: nothing to give back (grow would say so, after a render)
            body = self.render(c, _status(ctx, c))[1] if self.render is not None else c.text
            frame = costs[k] - ctx.count_tokens(body)
            grown = self.grow(c, costs[k] + room - spent - frame, ctx)
            if grown is None:
                continue
            h, b, t = self.render(grown, _status(ctx, grown)) if self.render is not None else ("", grown.text, "")
            cost = ctx.count_tokens(h) + ctx.count_tokens(b) + ctx.count_tokens(t) + self.separator_tokens
            if cost - costs[k] > room - spent:
                continue
            spent += cost - costs[k]
            out[k], costs[k] = grown, cost
        return spent

    def _fitted(self, c: Chunk, remaining: int, ctx: Context) -> tuple[Chunk, int] | None:
        """``c`` cut (by ``fit``) to what is left of the budget, with its cost, or ``None``."""
        assert self.fit is not None
        head, _, tail = self.render(c, _status(ctx, c)) if self.render is not None else ("", "", "")
        frame = ctx.count_tokens(head) + ctx.count_tokens(tail) + self.separator_tokens
        cut = self.fit(c, remaining - frame, ctx)
        if cut is None:
            return None
        h, body, t = self.render(cut, _status(ctx, cut)) if self.render is not None else ("", cut.text, "")
        cost = ctx.count_tokens(h) + ctx.count_tokens(body) + ctx.count_tokens(t) + self.separator_tokens
        return (cut, cost) if cost <= remaining else None


def _status(ctx: Context, c: Chunk) -> str | None:
    return ctx.ledger.status(c)


def _tokens_within(text: str, limit: int, count: Callable[[str], int]) -> int | None:
    """Tokens of ``text``, or ``None`` when a prefix alone already exceeds ``limit``.

    Counting a 400-token chunk to learn that it does not fit in the last 30 tokens of a
    budget is most of the work on long lists; a prefix of 8 characters per allowed token
    settles it in O(limit). (BPE may split the prefix's last token differently, hence the
    margin of one; the assembler re-checks the rendered total in any case.)
    """
    cut = 8 * (max(limit, 0) + 2)
    if len(text) > cut and count(text[:cut]) > limit + 1:
        return None
    return count(text)
