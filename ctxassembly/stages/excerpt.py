"""Excerpt stage (model-free compression): a chunk too large for its share of the budget
is cut to its passages that match the question, verbatim and in reading order.

Passages are the blocks between blank lines, so a list item, a code block or a table
stays whole (reStructuredText and Markdown both separate blocks with blank lines). They
are scored with BM25 against the question, with document frequencies taken over the
blocks of all candidates, and kept best-first while they fit the chunk's share. A chunk
under its share stays whole: short chunks are never cut. No text is rewritten; cut
places are marked with ``gap_marker`` and the chunk's labels and id stay.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.stages.base import Context
from ctxassembly.text import Lexical

__all__ = ["Excerpt", "blocks"]

_BLANK = re.compile(r"\n[ \t]*\n")


def blocks(text: str) -> list[str]:
    """``text`` split at blank lines (each block without its surrounding blank lines)."""
    return [b for b in _BLANK.split(text) if b.strip()]


class Excerpt:
    """Cut chunks larger than ``max_share`` of the budget to their best blocks.

    :param max_share: the largest fraction of the budget one chunk may fill whole.
    :param min_tokens: never cut a chunk below this size (tokens).
    :param gap_marker: what stands where blocks were left out.
    :raises ConfigError: a share outside (0, 1].
    """

    name = "excerpt"

    def __init__(self, max_share: float = 0.4, *, min_tokens: int = 60, gap_marker: str = "[…]") -> None:
        if not 0 < max_share <= 1:
            raise ConfigError(f"max_share must be in (0, 1], got {max_share!r}")
        self.max_share = max_share
        self.min_tokens = min_tokens
        self.gap_marker = gap_marker

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        cap = max(self.min_tokens, int(ctx.budget * self.max_share))
        count = ctx.count_tokens
        # Only chunks within reach of the budget matter: walk the ranking until the (capped)
        # sizes add up to twice the budget; a chunk never counts more than its characters.
        large, reach = [], 0
        for i, c in enumerate(chunks):
            if reach >= 2 * ctx.budget:
                break
            size = len(c.text) if len(c.text) <= cap else count(c.text)
            if size > cap:
                large.append(i)
            reach += min(size, cap)
        if not large:
            return chunks
        split = {i: blocks(chunks[i].text) for i in large}
        flat = [b for i in large for b in split[i]]
        scores = Lexical(flat).scores(ctx.question)
        out = list(chunks)
        k = 0
        for i in large:
            parts = split[i]
            s = scores[k : k + len(parts)]
            k += len(parts)
            keep: list[int] = []
            used = 0
            for j in sorted(range(len(parts)), key=lambda j: (-s[j], j)):
                t = count(parts[j]) + 2
                if used + t <= cap and (s[j] > 0 or not keep):
                    keep.append(j)
                    used += t
            if not keep:
                continue  # no block fits alone: leave the chunk whole for select to judge
            keep.sort()
            pieces = []
            for n, j in enumerate(keep):
                if (n and j != keep[n - 1] + 1) or (n == 0 and j > 0):
                    pieces.append(self.gap_marker)
                pieces.append(parts[j])
            if keep[-1] < len(parts) - 1:
                pieces.append(self.gap_marker)
            c = chunks[i]
            text = "\n\n".join(pieces)
            ctx.report.note(
                self.name, "excerpted", id=c.id, index=c.index, tokens_before=count(c.text), tokens_after=count(text)
            )
            out[i] = replace(
                c, text=text, meta=c.meta.updated(excerpt=True, source_span=(c.start, c.end)), start=None, end=None
            )
        return out
