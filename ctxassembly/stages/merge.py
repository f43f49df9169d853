"""Merge stage: chunks of one document that touch or overlap become one, in reading order.

Two chunks merge when they share ``doc_id`` and ``version``, the second starts at most
``merge_gap`` characters after the first ends (overlap included), and the offsets can be
trusted (each text spans its offsets and overlaps agree character for character). The overlapping text appears
once: the second chunk contributes only what lies beyond the first one's end. The merged
chunk takes the id, labels and list position of its best-ranked part; the others get the
fate ``merged`` with ``merged_into``.
"""

from __future__ import annotations

from dataclasses import replace

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.kinds import Reason
from ctxassembly.pipeline import Context, StageBase

__all__ = ["Merge"]


class Merge(StageBase):
    """Join adjacent or overlapping chunks of the same document.

    :param merge_gap: largest number of characters between two chunks that still counts as
        adjacent; the gap's text is unknown, so it is bridged with a blank line.
    :param max_share: a merged chunk stays within this share of the budget (tokens): a
        run of adjacent chunks is cut into pieces that fit, so that merging never builds
        one chunk too large to select (a retriever that returns a whole handbook section
        by section would otherwise become one block).
    :raises ConfigError: a negative gap or a share outside (0, 1].
    """

    name = "merge"
    shrinks = True
    writes = frozenset({"merged_from"})

    def __init__(self, merge_gap: int = 0, *, max_share: float = 0.4) -> None:
        if merge_gap < 0:
            raise ConfigError(f"merge_gap must be >= 0, got {merge_gap!r}")
        if not 0 < max_share <= 1:
            raise ConfigError(f"max_share must be in (0, 1], got {max_share!r}")
        self.merge_gap = merge_gap
        self.max_share = max_share

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        groups: dict[tuple[str, str | None], list[int]] = {}
        for i, c in enumerate(chunks):
            if c.doc_id is not None and c.start is not None and c.end is not None:
                groups.setdefault((c.doc_id, c.version), []).append(i)
        cap = ctx.budget * self.max_share
        absorbed: dict[int, int] = {}  # position -> position of the chunk it joined
        merged: dict[int, Chunk] = {}
        for members in groups.values():
            if len(members) < 2:
                continue
            members.sort(key=lambda i: (chunks[i].start, chunks[i].end))
            # token counts only where a merge is possible: most members touch nothing
            run, size = [members[0]], None
            for i in members[1:]:
                last = chunks[max(run, key=lambda j: chunks[j].end or 0)]
                touching = (chunks[i].start or 0) <= (last.end or 0) + self.merge_gap
                if touching and not _agree(last, chunks[i]):
                    ctx.report.note(self.name, "offsets_disagree", ids=[last.id, chunks[i].id])
                    touching = False
                if touching:
                    if size is None:
                        size = sum(ctx.count_tokens(chunks[j].text) for j in run)
                    tokens = ctx.count_tokens(chunks[i].text)
                    if size + tokens <= cap:
                        run.append(i)
                        size += tokens
                        continue
                self._join(run, chunks, absorbed, merged, ctx)
                run, size = [i], None
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
        )
        ctx.ledger.update(best.index, merged_from=ids)
        for i in run:
            if i != head:
                absorbed[i] = head
                ctx.report.drop(chunks[i], self.name, Reason.MERGED, merged_into=best.id)


def _agree(a: Chunk, b: Chunk) -> bool:
    """Offsets that can be trusted: each text spans its offsets, and where two chunks
    overlap they hold the same characters. (Offsets relative to a section rather than the
    document, as some splitters write them, fail this and are never spliced.)"""
    if len(a.text) != (a.end or 0) - (a.start or 0) or len(b.text) != (b.end or 0) - (b.start or 0):
        return False
    start = b.start or 0
    overlap = min((a.end or 0), b.end or 0) - start
    if overlap <= 0:
        return True
    offset = start - (a.start or 0)
    return a.text[offset : offset + overlap] == b.text[:overlap]
