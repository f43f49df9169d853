"""Keeping the best units of a text within a token cap, each with what it depends on, and
writing them back verbatim.

:func:`choose_units` ranks units by their score read in context (:func:`in_context`: half
the score of their heading and directive added), keeps the best while they fit, each
with its dependencies (:func:`ctxassembly.text.cues.dependencies`), and never picks a
heading or directive header for itself. :func:`write_units` and :func:`with_gaps` write
what is kept as slices of the text in reading order, a marker standing for each cut.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

from ctxassembly.text.cues import dependencies
from ctxassembly.text.segments import Unit

__all__ = ["choose_units", "in_context", "removed_passages", "with_gaps", "write_units"]


def in_context(scores: np.ndarray, segments: Sequence[Sequence[Unit]]) -> np.ndarray:
    """Each unit's score plus half the scores of its section heading and enclosing directive.

    ``scores`` holds the units of ``segments`` one chunk after another.
    """
    out = np.array(scores, dtype=np.float64)
    base = 0
    for units in segments:
        for j, u in enumerate(units):
            for x in (u.heading, u.parent):
                if x is not None:
                    out[base + j] += 0.5 * scores[base + x]
        base += len(units)
    return out


def choose_units(
    text: str, units: Sequence[Unit], scores: np.ndarray, cap: int, count: Callable[[str], int]
) -> list[int] | None:
    """Indices of the units to keep, or ``None`` to leave the chunk whole.

    Headings and directive headers are not picked for themselves: they come with the
    units under them, and their score is added (halved) to those units', so content
    under a heading that matches the question ranks higher.
    """
    if len(units) < 2:
        return None
    cost = [count(text[u.start : u.end]) + 1 for u in units]
    own = np.asarray(scores, dtype=np.float64)
    total = in_context(own, [units])
    candidates = [j for j, u in enumerate(units) if u.kind not in ("heading", "directive")]
    keep: set[int] = set()
    used = 0
    for j in sorted(candidates, key=lambda j: (-total[j], j)):
        if j in keep or (own[j] <= 0 and keep):
            continue
        group = _closure(text, units, j, keep)
        extra = sum(cost[x] for x in group)
        if used + extra + 2 > cap:
            continue
        keep |= group
        used += extra + 2
    if not keep or len(keep) == len(units):
        return None
    return sorted(keep)


def _closure(text: str, units: Sequence[Unit], j: int, keep: set[int]) -> set[int]:
    """``j`` with its dependencies: neighbours of ``j`` itself, structure transitively."""
    group: set[int] = set()
    todo = [j, *dependencies(text, units, j)]
    while todo:
        x = todo.pop()
        if x in group or x in keep:
            continue
        group.add(x)
        todo.extend(dependencies(text, units, x, neighbours=False))
    return group


def write_units(
    text: str, units: Sequence[Unit], kept: list[int], gap_marker: str
) -> tuple[str, tuple[tuple[int, int], ...]]:
    """The kept units as verbatim slices in reading order, gaps marked with ``gap_marker``,
    and the ``(start, end)`` of each slice (contiguous units share one)."""
    spans: list[list[int]] = []
    for j in kept:
        u = units[j]
        if spans and not text[spans[-1][1] : u.start].strip():
            spans[-1][1] = u.end
        else:
            spans.append([u.start, u.end])
    return with_gaps(text, spans, gap_marker), tuple((a, b) for a, b in spans)


def with_gaps(text: str, spans: Sequence[Sequence[int]], marker: str) -> str:
    """The ``(start, end)`` slices of ``text`` verbatim, in order, a ``marker`` standing for
    each stretch of non-blank text left out between, before or after them."""
    pieces = []
    if text[: spans[0][0]].strip():
        pieces.append(marker)
    for n, (a, b) in enumerate(spans):
        if n:
            pieces.append(marker)
        pieces.append(text[a:b])
    if text[spans[-1][1] :].strip():
        pieces.append(marker)
    return "\n\n".join(pieces)


_PARAGRAPH = re.compile(r"\n\s*\n")


def removed_passages(text: str, cut: str, *, words: int = 8, most: int = 5) -> list[str]:
    """The first ``words`` words of each paragraph of ``text`` that ``cut`` no longer holds
    (at most ``most`` of them, in reading order; ``…`` ends a shortened one), so that a
    report shows what a cut took away, not only how much."""
    out = []
    for raw in _PARAGRAPH.split(text):
        para = raw.strip()
        if para and para not in cut:
            head = para.split(maxsplit=words)  # the first words, and the rest in one piece if any
            out.append(" ".join(head[:words]) + (" …" if len(head) > words else ""))
            if len(out) == most:
                break
    return out
