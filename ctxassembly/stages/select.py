"""Select stage: greedy by relevance inside a real token budget.

The cost of a chunk is the tokens of its *rendered* block (labels and tags included)
plus the separator, so the budget is the budget of the text the model reads. A chunk
that does not fit is skipped and the next one tried (skip, not break): a small chunk
further down can still fill the space. ``reserve`` keeps tokens back for the rest of
the prompt (system prompt, question, answer).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.stages.base import Context

__all__ = ["Select"]


class Select:
    """Keep the best chunks that fit the budget.

    :param reserve: tokens of the budget kept back for the rest of the prompt.
    :param max_per_doc: at most this many chunks from one document (``doc_cap``).
    :param cost: ``chunk -> tokens`` it takes in the context; the assembler passes the
        renderer's block cost. Defaults to the chunk text's tokens.
    :raises ConfigError: a negative reserve or a cap below 1.
    """

    name = "select"

    def __init__(
        self,
        *,
        reserve: int = 0,
        max_per_doc: int | None = None,
        cost: Callable[[Chunk, Context], int] | None = None,
    ) -> None:
        if reserve < 0:
            raise ConfigError(f"reserve must be >= 0 tokens, got {reserve!r}")
        if max_per_doc is not None and max_per_doc < 1:
            raise ConfigError(f"max_per_doc must be >= 1 or None, got {max_per_doc!r}")
        self.reserve = reserve
        self.max_per_doc = max_per_doc
        self.cost = cost

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        available = ctx.budget - self.reserve - ctx.state.get("layout_tokens", 0)
        per_doc: Counter[str] = Counter()
        out, used = [], 0
        for c in chunks:
            doc = c.doc_id or c.id
            if self.max_per_doc is not None and per_doc[doc] >= self.max_per_doc:
                ctx.report.drop(c, self.name, "doc_cap", doc_id=doc, max_per_doc=self.max_per_doc)
                continue
            cost = self.cost(c, ctx) if self.cost is not None else ctx.count_tokens(c.text)
            if used + cost > available:
                ctx.report.drop(c, self.name, "over_budget", tokens=cost, remaining=max(available - used, 0))
                continue
            used += cost
            per_doc[doc] += 1
            out.append(c)
        ctx.state["selected_tokens"] = used
        return out
