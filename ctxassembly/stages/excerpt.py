"""Excerpt stage (model-free compression): a chunk too large for its share of the budget
is cut to the passages that match the question, verbatim and in reading order.

Passages are the blocks between blank lines, so a list item, a code block or a table
stays whole (reStructuredText and Markdown both separate blocks with blank lines). The
blocks form a tree by indentation: a block owns the deeper-indented blocks after it (the
body of a directive, a definition-list term, a list item's continuation, the code under
a lead-in). Headings (reST under/overlines, Markdown ``#``, HTML ``<h1>``..``<h6>``) own
the blocks up to the next heading.

Each block is scored with BM25 against the question (document frequencies over the
blocks of all candidates being cut) plus BM25 over the names it defines
(:func:`ctxassembly.text.definitions`: headings, directive arguments, definition terms,
first table cells), and inherits half its owner's and a quarter of its heading's score,
so the body of a matched name ranks with the name. Blocks are kept best-first while they
fit the chunk's share, each **with its owners** (the name a value belongs to) and, when
it owns blocks, **with its first child** (the value a name has): a matched term is never
separated from its value. A chunk under its share stays whole: short chunks are never
cut. No text is rewritten; contiguous blocks keep the text between them, other cuts are
marked with ``gap_marker``, and the chunk's labels and id stay.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.pipeline import StageBase
from ctxassembly.stages.base import Context
from ctxassembly.text import Lexical, definitions, with_gaps

__all__ = ["Block", "Excerpt", "blocks", "structure"]

_BLANK = re.compile(r"\n[ \t]*\n")
_UNDER = re.compile(r"^([=\-~^\"'`#*+:.<>_])\1{2,}\s*$")
_MD_HEAD = re.compile(r"^\s{0,3}#{1,6}\s+\S")
_HTML_HEAD = re.compile(r"^\s*<h[1-6]\b", re.IGNORECASE)
_SPLIT_LINES = 8  # a block of this many lines or more may be split at its shallowest lines
_SCORED_MAX = 4096  # block-score entries kept for fit() before the cache starts over
_HEADER_CHARS = 200  # an owner longer than this is prose, not a name: it is not forced in
_MARK = re.compile(r"^\s*(?:\.\.\s+[\w:.-]+::|:[\w -]+:|>\s*\*\*|\[!\w+\])")


def blocks(text: str) -> list[str]:
    """``text`` split at blank lines (each block without its surrounding blank lines)."""
    return [b for b in _BLANK.split(text) if b.strip()]


@dataclass(frozen=True, slots=True)
class Block:
    """``text[start:end]``: one blank-line block. ``owner`` is the nearest earlier block
    indented less (``None`` at the top level); ``heading`` the section heading above it;
    ``first_child`` the first block it owns; ``marks`` (on a heading) the short markup-only
    blocks right under it (``.. deprecated:: 7.0``, ``:since: 2.1``, ``> **Note**``): status
    and version marks that belong with the heading wherever it goes. ``label`` is a one-line
    name block right before it at the same indent (``.. envvar:: NAME`` whose text is not
    indented under it, a bare term line), and ``value`` the reverse: the block a name
    block labels."""

    start: int
    end: int
    indent: int
    is_heading: bool
    owner: int | None
    heading: int | None
    first_child: int | None = None
    marks: tuple[int, ...] = ()
    label: int | None = None
    value: int | None = None


def _is_heading(text: str) -> bool:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        return False
    if _MD_HEAD.match(lines[0]) or _HTML_HEAD.match(lines[0]):
        return len(lines) <= 2
    if len(lines) in (2, 3) and _UNDER.match(lines[-1].strip()) and not _UNDER.match(lines[-2].strip()):
        return len(lines[-1].strip()) >= len(lines[-2].strip()) - 2
    return False


@lru_cache(maxsize=8192)
def structure(text: str) -> tuple[Block, ...]:
    """The blocks of ``text`` with their owners, headings and first children."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for m in _BLANK.finditer(text):
        spans.append((pos, m.start()))
        pos = m.end()
    spans.append((pos, len(text)))
    raw: list[tuple[int, int, int, bool]] = []
    for start, stop in spans:
        piece = text[start:stop]
        if not piece.strip():
            continue
        a = start + len(piece) - len(piece.lstrip("\n"))
        b = stop
        while b > a and text[b - 1].isspace():
            b -= 1
        for x, y in _split_long(text, a, b):
            first = text[x:y].split("\n", 1)[0]
            raw.append((x, y, len(first) - len(first.lstrip(" \t")), _is_heading(text[x:y])))
    out: list[Block] = []
    stack: list[int] = []  # indices of open owners, indents increasing
    heading: int | None = None
    firsts: dict[int, int] = {}
    for i, (a, b, indent, is_head) in enumerate(raw):
        if is_head:
            stack.clear()
            out.append(Block(a, b, indent, True, None, heading))
            heading = i
            continue
        while stack and raw[stack[-1]][2] >= indent:
            stack.pop()
        owner = stack[-1] if stack else None
        if owner is not None:
            firsts.setdefault(owner, i)
        out.append(Block(a, b, indent, False, owner, heading))
        stack.append(i)
    marks: dict[int, list[int]] = {}
    for i, blk in enumerate(out):
        h = blk.heading
        if blk.is_heading or h is None or blk.owner is not None:
            continue
        between = range(h + 1, i)
        piece = text[blk.start : blk.end]
        if all(j in marks.get(h, ()) for j in between) and blk.end - blk.start <= _HEADER_CHARS and _MARK.match(piece):
            marks.setdefault(h, []).append(i)
    labels: dict[int, int] = {}
    for i in range(1, len(out)):
        prev, blk = out[i - 1], out[i]
        if blk.is_heading or prev.is_heading or prev.indent != blk.indent or prev.first_child is not None:
            continue
        if (
            firsts.get(i - 1) is None
            and _is_name(text[prev.start : prev.end])
            and not _is_name(text[blk.start : blk.end])
        ):
            labels[i] = i - 1
    values = {v: k for k, v in labels.items()}
    return tuple(
        replace(
            blk,
            first_child=firsts.get(i),
            marks=tuple(marks.get(i, ())),
            label=labels.get(i),
            value=values.get(i),
        )
        for i, blk in enumerate(out)
    )


def _split_long(text: str, a: int, b: int) -> list[tuple[int, int]]:
    """A long block with nested indentation and no blank line (a ``--help`` listing, a list
    whose items are not separated, a long code example) in groups of lines: each line at
    the block's shallowest indent opens a group that takes the deeper lines after it, so an
    option stays with its description and an item with its continuation. Prose (one indent)
    and tables stay whole."""
    lines = text[a:b].split("\n")
    if len(lines) < _SPLIT_LINES:
        return [(a, b)]
    body = [ln for ln in lines if ln.strip()]
    indents = [len(ln) - len(ln.lstrip(" \t")) for ln in body]
    if len(set(indents)) < 2 or sum(ln.lstrip().startswith(("|", "+-", "+=", "==")) for ln in body) > len(body) // 2:
        return [(a, b)]
    base = min(indents[1:]) if len(indents) > 1 else indents[0]
    out: list[tuple[int, int]] = []
    pos = a
    start = a
    for n, ln in enumerate(lines):
        ind = len(ln) - len(ln.lstrip(" \t"))
        if n and ln.strip() and ind <= base:
            out.append((start, pos - 1))
            start = pos
        pos += len(ln) + 1
    out.append((start, b))
    return out if len(out) > 1 else [(a, b)]


def _is_name(piece: str) -> bool:
    """A one-line block that only names something (a directive line, a term, a field)."""
    line = piece.strip()
    if "\n" in line or len(line) > 120 or line.endswith((".", ",", ";", ":", "(", "{", "[")):
        return bool(_MARK.match(line)) and "\n" not in line  # ".. envvar:: NAME", ":param x:"
    # a bare term line, read as a definition-list term: no sentence punctuation, no list,
    # code-prompt or comment marker in front
    return not line.startswith(("-", "*", "+", ">>>", "#", "$"))


class Excerpt(StageBase):
    """Cut chunks larger than ``max_share`` of the budget to their best blocks.

    :param max_share: the largest fraction of the budget one chunk may fill whole.
    :param min_tokens: never cut a chunk below this size (tokens): the floor of the share.
        Blocks run 30 to 120 tokens; below about 200 tokens a cut keeps one or two of them
        and starts losing answers on both dev corpora (Django and pytest docs: answer cut
        rose from 0 to 5-10% at 150-180 tokens; 200 to 250 kept it at 0).
    :param fit_min: :meth:`fit` cuts a chunk to what is left of the budget only when at
        least this many tokens are left.
    :param gap_marker: what stands where blocks were left out.
    :raises ConfigError: a share outside (0, 1].
    """

    name = "excerpt"

    def __init__(
        self, max_share: float = 0.25, *, min_tokens: int = 200, fit_min: int = 60, gap_marker: str = "[…]"
    ) -> None:
        if not 0 < max_share <= 1:
            raise ConfigError(f"max_share must be in (0, 1], got {max_share!r}")
        self.max_share = max_share
        self.min_tokens = min_tokens
        self.fit_min = fit_min
        # (question, chunk text) -> block scores of recent runs, read by fit(); keyed, not
        # cleared per call, so that calls running at once in threads do not clear each
        # other's entries (a missing entry only means fit() scores the chunk on its own)
        self._scored: dict[tuple[str, str], np.ndarray] = {}
        self.gap_marker = gap_marker

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        cap = max(self.min_tokens, int(ctx.budget * self.max_share))
        count = ctx.count_tokens
        # Only chunks within reach of the budget matter: walk the ranking until the (capped)
        # sizes add up to twice the budget; a chunk never counts more than its characters.
        # Their blocks are scored together (document frequencies over all of them), and the
        # scores are kept for fit(), which select calls on these same chunks.
        large, reach, near = [], 0, []
        for i, c in enumerate(chunks):
            if reach >= 2 * ctx.budget:
                break
            near.append(i)
            size = len(c.text) if len(c.text) <= cap else count(c.text)
            if size > cap:
                large.append(i)
            reach += min(size, cap)
        trees = {i: structure(chunks[i].text) for i in near}
        flat = [chunks[i].text[b.start : b.end] for i in near for b in trees[i]]
        scores = block_scores(flat, ctx.question)
        if len(self._scored) > _SCORED_MAX:
            self._scored.clear()
        k = 0
        mine: dict[tuple[str, str], np.ndarray] = {}
        for i in near:
            n = len(trees[i])
            mine[(ctx.question, chunks[i].text)] = scores[k : k + n]
            k += n
        self._scored.update(mine)
        if not large:
            return chunks
        out = list(chunks)
        for i in large:
            tree = trees[i]
            c = chunks[i]
            s = mine[(ctx.question, c.text)]
            keep = choose(c.text, tree, s, cap, count)
            if keep is None:
                continue  # nothing matched and fits: leave the chunk whole for select to judge
            out[i] = self._cut(c, self.write(c.text, tree, keep), ctx, "excerpted")
        return out

    def fit(self, chunk: Chunk, limit: int, ctx: Context) -> Chunk | None:
        """``chunk`` cut to its best blocks within ``limit`` tokens of text, or ``None`` when
        the block that matches the question best does not fit (select calls this for a
        chunk that does not fit whole in what is left of the budget)."""
        if limit < self.fit_min:
            return None
        tree = structure(chunk.text)
        scores = self._scored.get((ctx.question, chunk.text))
        if scores is None:
            scores = block_scores([chunk.text[b.start : b.end] for b in tree], ctx.question)
        if not scores.size or scores.max() <= 0:
            return None
        keep = choose(chunk.text, tree, scores, limit, ctx.count_tokens)
        # A fragment without the block that matches the question best is the chunk's
        # periphery: it would spend the rest of the budget on what the chunk is not about.
        # Where that block alone is larger than the room left, the name it defines (its
        # label line) stands for it.
        if keep is None:
            return None
        top = int(np.argmax(scores))
        best = tree[top]
        if top not in keep and not (best.label in keep and ctx.count_tokens(chunk.text[best.start : best.end]) > limit):
            return None
        return self._cut(chunk, self.write(chunk.text, tree, keep), ctx, "fitted")

    def _cut(self, chunk: Chunk, text: str, ctx: Context, event: str) -> Chunk:
        """``chunk`` with ``text`` in place of its own, the cut noted in the report; the
        offsets go to ``meta["source_span"]`` (kept from an earlier cut)."""
        count = ctx.count_tokens
        ctx.report.note(
            self.name, event, id=chunk.id, index=chunk.index, tokens_before=count(chunk.text), tokens_after=count(text)
        )
        span = chunk.meta.get("source_span", (chunk.start, chunk.end))
        return replace(chunk, text=text, meta=chunk.meta.updated(excerpt=True, source_span=span), start=None, end=None)

    def write(self, text: str, tree: Sequence[Block], keep: list[int]) -> str:
        """The kept blocks verbatim in reading order; text between contiguous blocks kept."""
        spans: list[list[int]] = []
        for j in keep:
            blk = tree[j]
            if spans and j - 1 in keep and not text[spans[-1][1] : blk.start].strip():
                spans[-1][1] = blk.end
            else:
                spans.append([blk.start, blk.end])
        return with_gaps(text, spans, self.gap_marker)


def block_scores(texts: Sequence[str], question: str) -> np.ndarray:
    """BM25 of ``question`` over ``texts`` plus BM25 over the names each text defines."""
    lex = np.asarray(Lexical(texts).scores(question), dtype=np.float64)
    defs = np.asarray(Lexical([definitions(t) for t in texts]).scores(question), dtype=np.float64)
    return lex + defs


def choose(
    text: str, tree: Sequence[Block], scores: np.ndarray, cap: int, count: Callable[[str], int]
) -> list[int] | None:
    """Indices of the blocks to keep within ``cap`` tokens, or ``None`` to leave the chunk whole."""
    if len(tree) < 2:
        return None
    own = np.asarray(scores, dtype=np.float64)
    ctx_score = own.copy()
    for j, b in enumerate(tree):
        if b.owner is not None:
            ctx_score[j] += 0.5 * own[b.owner]
        if b.heading is not None:
            ctx_score[j] += 0.25 * own[b.heading]
    cost = [count(text[b.start : b.end]) + 2 for b in tree]
    keep: set[int] = set()
    used = 0
    for j in sorted(range(len(tree)), key=lambda j: (-ctx_score[j], j)):
        if j in keep or (ctx_score[j] <= 0 and keep):
            continue
        group = _with_owners(tree, j, text)
        extra = sum(cost[x] for x in group - keep)
        if used + extra > cap:
            continue
        keep |= group
        used += extra
    if not keep or len(keep) == len(tree):
        return None
    return sorted(keep)


def _with_owners(tree: Sequence[Block], j: int, text: str) -> set[int]:
    """``j``, the chain of short blocks that own it (the names it belongs to), and, when ``j``
    owns blocks, its first child (the value of the name)."""
    group = {j}
    b = tree[j]
    # a short block is a name and its first child its value; a long one is prose whose
    # first child only goes on with it (it may stay behind when the budget is short)
    first = b.first_child if b.end - b.start <= _HEADER_CHARS else None
    for x in (first, b.label, b.value):
        if x is not None:
            group.add(x)
    o = b.owner
    while o is not None:
        if tree[o].end - tree[o].start <= _HEADER_CHARS:
            group.add(o)
        o = tree[o].owner
    h = b.heading
    if h is not None and tree[h].end - tree[h].start <= _HEADER_CHARS:
        group.add(h)
        group.update(tree[h].marks)
    return group
