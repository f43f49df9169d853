"""Merge stage: chunks of one document that touch or overlap become one, in reading order.

Two chunks merge when they share ``doc_id`` and ``version`` and the second starts at most
``gap`` characters after the first ends (overlap included). The overlapping text appears
once: the second chunk contributes only what lies beyond the first one's end. The merged
chunk takes the id, labels and list position of its best-ranked part; the others get the
fate ``merged`` with ``merged_into``.
"""

from __future__ import annotations

from dataclasses import replace

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.stages.base import Context

__all__ = ["Merge"]


class Merge:
    """Join adjacent or overlapping chunks of the same document.

    :param gap: largest number of characters between two chunks that still counts as
        adjacent; the gap's text is unknown, so it is bridged with a blank line.
    :raises ConfigError: a negative gap.
    """

    name = "merge"

    def __init__(self, gap: int = 0) -> None:
        if gap < 0:
            raise ConfigError(f"gap must be >= 0, got {gap!r}")
        self.gap = gap

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        groups: dict[tuple[str, str | None], list[int]] = {}
        for i, c in enumerate(chunks):
            if c.doc_id is not None and c.start is not None and c.end is not None:
                groups.setdefault((c.doc_id, c.version), []).append(i)
        absorbed: dict[int, int] = {}  # position -> position of the chunk it joined
        merged: dict[int, Chunk] = {}
        for members in groups.values():
            if len(members) < 2:
                continue
            members.sort(key=lambda i: (chunks[i].start, chunks[i].end))
            run = [members[0]]
            for i in members[1:]:
                prev_end = max(chunks[j].end or 0 for j in run)
                if (chunks[i].start or 0) <= prev_end + self.gap:
                    run.append(i)
                else:
                    self._join(run, chunks, absorbed, merged, ctx)
                    run = [i]
            self._join(run, chunks, absorbed, merged, ctx)
        return [merged.get(i, c) for i, c in enumerate(chunks) if i not in absorbed]

    def _join(
        self, run: list[int], chunks: list[Chunk], absorbed: dict[int, int], merged: dict[int, Chunk], ctx: Context
    ) -> None:
        if len(run) < 2:
            return
        head = min(run)  # best-ranked part: lists arrive ranked
        text, end = chunks[run[0]].text, chunks[run[0]].end or 0
        for i in run[1:]:
            c = chunks[i]
            if (c.end or 0) <= end:
                continue  # wholly inside what we already have
            start = c.start or 0
            if start >= end:
                text += ("\n\n" if start > end else "") + c.text
            else:
                text += c.text[end - start :]
            end = c.end or end
        ids = tuple(chunks[i].id for i in run)
        best = chunks[head]
        merged[head] = replace(
            best,
            text=text,
            start=chunks[run[0]].start,
            end=end,
            section=chunks[run[0]].section or best.section,
            meta=best.meta.updated(merged_from=ids),
        )
        for i in run:
            if i != head:
                absorbed[i] = head
                ctx.report.drop(chunks[i], self.name, "merged", merged_into=best.id)
