"""Excerpt stage (model-free compression): a chunk too large for its share of the budget
is cut to the passages that match the question, verbatim and in reading order.

Passages are the blocks between blank lines (reStructuredText and Markdown both separate
blocks with blank lines), so a list item or a code block stays whole; a pipe table is
read by row, under its header. The blocks form a tree by indentation: a block owns the
deeper-indented blocks after it (the body of a directive, a definition-list term, a list
item's continuation, the code under a lead-in). Headings (reST under/overlines, Markdown
``#``, HTML ``<h1>``..``<h6>``) own the blocks up to the next heading.

Each block is scored with BM25 against the question (document frequencies over the
blocks of all candidates being cut) plus BM25 over the names it defines
(:func:`ctxassembly.text.structure.definitions`: headings, directive arguments, definition terms,
first table cells), and inherits half its owner's and a quarter of its heading's score,
so the body of a matched name ranks with the name. Blocks are kept best-first while they
fit the chunk's share, each **with its owners** (the name a value belongs to) and, when
it owns blocks, **with its first child** (the value a name has; under a heading, a
one-line first block such as ``Default: 1209600``): a matched term is never separated
from its value, and a directive line (``.. tab:: Windows``, ``.. code-block:: text``) never
from the body it introduces. What room the share has left then goes to the blocks **beside** the kept
ones, nearest the best match first (the one after it before the one before it), so a cut
keeps contiguous windows: the value, the list a sentence leads into or the rest of an
entry that no question word names sits next to the sentence that matched. Once select
has chosen, what the budget has left goes back to the cut chunks, best-ranked first
(:func:`grow`): the whole chunk when it fits, else more blocks beside the kept ones, so
a window is paid from room no chunk could use, never by leaving a chunk out. When select
fits a chunk to the room left, a block that matches the same
question words as a kept block at its indent (one example in two syntaxes) waits
for the blocks that add something, and the block that must be in the fragment is the best
match in text, not in a markup line (``.. code-block:: python`` names a kind, not a
subject), unless only markup matches. A chunk under its share stays whole: short chunks
are never cut for size, and the first chunk of the ranking stays whole up to a share of its
own (``top_share``): it is the likeliest to hold the answer. The share is larger
(``agreed_share``) where the retriever's order and BM25 of the question agree on the
head of the ranking (the relevance stage records how far: ``head_agreement``): two
rankings made in different ways that agree are likely right, so their first chunks stay
more whole instead of making room for more of them. No text is
rewritten; contiguous blocks keep the text between them, other cuts are marked with
``gap_marker``, and the chunk's labels and id stay. A cut never shows headings,
markup lines and gaps alone: a chunk none of whose passages fits its share stays whole for
select to judge, as one with nothing that fits does, and a fragment that would hold nothing
else is not made.

One thing leaves a chunk of any size: a **rival entry** (:mod:`ctxassembly.text.rivals`),
a sibling definition written in the same sentence template as a better-matching one,
with another name or value in its slot ("By default, this is set to ``200``" beside the
``100`` asked for). It goes with its name and everything under it; a chunk left with
nothing but markup that matches the question is dropped (``near_miss``, ``rival_of`` the winner's
chunk), and the report notes each chunk that lost a rival (``rival``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial

import numpy as np

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.kinds import Reason
from ctxassembly.ledger import Blocks
from ctxassembly.pipeline import Context, StageBase
from ctxassembly.text.lexical import Lexical, query_terms, words
from ctxassembly.text.rivals import entry_blocks, losers
from ctxassembly.text.selection import with_gaps
from ctxassembly.text.structure import HEADER_CHARS, Block, definitions, is_mark, structure

__all__ = ["FIT_MIN", "MIN_TOKENS", "Excerpt", "fit", "grow"]

#: the least room (tokens) worth a fill fragment: in less, a fragment keeps the matched
#: heading or lead-in without the value under it, and cuts the answer out of the chunk it
#: keeps (chosen on six corpora, the conservative side: benchmarks/README.md)
FIT_MIN = 80

#: the floor of a chunk's share (tokens): no chunk is cut below it, so under a budget of
#: 1,000 every cut keeps 250 tokens, the 1,000-token share. Chosen leave one corpus out on
#: eight corpora (every fold chooses 250 over 200-300; the answer cut falls from 39 to 22
#: points; benchmarks/README.md)
MIN_TOKENS = 250

#: a chunk's share when the retriever and BM25 agree on the head (:data:`AGREED` of their
#: first three texts are the same): the ranking is likely right, so its first chunks stay
#: more whole rather than making room for more of them. Chosen leave one corpus out on
#: sixteen corpora (14 of 16 folds; held out, the same answers and the answer cut 149 -> 130
#: points; on no corpus does the cut rise, on the benchmark's lists or on dense-only ones:
#: benchmarks/README.md)
AGREED_SHARE = 0.35
#: how many of the two rankings' first three texts must be the same
AGREED = 2

#: the first chunk of the ranking stays whole when it fits in this share of the budget: it
#: is the likeliest to hold the answer, and a cut to the 0.25 share took the answer out of
#: first-ranked chunks a little over it (270-odd tokens of a 1,000-token budget). Larger, it
#: is cut to the share like any other. Chosen leave one corpus out on sixteen corpora (14 of
#: 16 folds; 0.28 and 0.30 give the same cells, the larger cuts less; held out, answers
#: 5,573 -> 5,581 points and the answer cut 108 -> 95; on no corpus does a cell fall:
#: benchmarks/README.md)
TOP_SHARE = 0.30


class Excerpt(StageBase):
    """Cut chunks larger than ``max_share`` of the budget to their best blocks.

    :param max_share: the largest fraction of the budget one chunk may fill whole.
    :param agreed_share: the share instead when the retriever's order and BM25 agree on the
        head of the ranking (the call's ``head_agreement`` is at least :data:`AGREED`), if
        larger; ``None``: ``max_share`` always. Default :data:`AGREED_SHARE`.
    :param top_share: the first chunk of the ranking stays whole when it fits in this share
        of the budget (and is cut to the cap like any other when larger); ``None``: no
        exception. Default :data:`TOP_SHARE`.
    :param min_tokens: never cut a chunk below this size (tokens): the floor of the share,
        default :data:`MIN_TOKENS`. Blocks run 30 to 120 tokens; a lower floor leaves one or
        two of them and cuts answers out (the measured choice: benchmarks/README.md).
    :param fit_min: :meth:`fit` cuts a chunk to what is left of the budget only when at
        least this many tokens are left (default :data:`FIT_MIN`).
    :param gap_marker: what stands where blocks were left out.
    :raises ConfigError: a share outside (0, 1].
    """

    name = "excerpt"
    shrinks = True
    reads = frozenset({"cut", "head_agreement"})
    writes = frozenset({"blocks", "cut"})  # blocks: the block scores select's fit reads

    def __init__(
        self,
        max_share: float = 0.25,
        *,
        agreed_share: float | None = AGREED_SHARE,
        top_share: float | None = TOP_SHARE,
        min_tokens: int = MIN_TOKENS,
        fit_min: int = FIT_MIN,
        gap_marker: str = "[…]",
    ) -> None:
        if not 0 < max_share <= 1:
            raise ConfigError(f"max_share must be in (0, 1], got {max_share!r}")
        if agreed_share is not None and not 0 < agreed_share <= 1:
            raise ConfigError(f"agreed_share must be in (0, 1] or None, got {agreed_share!r}")
        if top_share is not None and not 0 < top_share <= 1:
            raise ConfigError(f"top_share must be in (0, 1] or None, got {top_share!r}")
        self.max_share = max_share
        self.agreed_share = agreed_share
        self.top_share = top_share
        self.min_tokens = min_tokens
        self.fit_min = fit_min
        self.gap_marker = gap_marker

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        cap = self._cap(ctx)
        # the first chunk stays whole up to its own share (never less than the cap)
        top = cap if self.top_share is None else max(cap, int(ctx.budget * self.top_share))
        count = ctx.count_tokens
        # Only chunks within reach of the budget matter: walk the ranking until the (capped)
        # sizes add up to twice the budget; a chunk never counts more than its characters.
        # Their blocks are scored together (document frequencies over all of them), and the
        # scores go to the ledger for fit(), which select calls on these same chunks.
        large, reach, near = [], 0, []
        for i, c in enumerate(chunks):
            if reach >= 2 * ctx.budget:
                break
            near.append(i)
            size = len(c.text) if len(c.text) <= cap else count(c.text)
            limit = top if i == 0 else cap
            if size > limit:
                large.append(i)
            elif size > cap:  # the first chunk, whole within its own share
                ctx.report.note(self.name, "top_share", id=c.id, index=c.index, share=self.top_share, tokens=size)
            reach += min(size, limit)
        trees = {i: structure(chunks[i].text) for i in near}
        flat = [chunks[i].text[b.start : b.end] for i in near for b in trees[i]]
        scores = block_scores(flat, ctx.question)
        gone, rival_of = _rivals(chunks, near, trees, scores, ctx.question)
        k = 0
        mine: dict[int, np.ndarray] = {}
        ledger = ctx.ledger
        for i in near:
            n = len(trees[i])
            mine[i] = scores[k : k + n]
            ledger.update(chunks[i].index, blocks=Blocks(chunks[i].text, mine[i], gone.get(i, frozenset())))
            k += n
        if not large and not gone:
            return chunks
        out: list[Chunk | None] = list(chunks)
        for i in sorted(set(large) | set(gone)):
            tree = trees[i]
            c = chunks[i]
            s = mine[i]
            if i in gone:
                ctx.report.note(self.name, "rival", id=c.id, index=c.index, rival_of=rival_of[i], blocks=len(gone[i]))
                rest = [j for j in range(len(tree)) if j not in gone[i]]
                if not any(s[j] > 0 and _says(c.text, tree[j], self.gap_marker) for j in rest):
                    ctx.report.drop(c, self.name, Reason.NEAR_MISS, rival_of=rival_of[i])
                    out[i] = None
                    continue
            excluded = gone.get(i, frozenset())
            keep = choose(c.text, tree, s, cap, count, excluded=excluded) if i in large else None
            if keep is not None and not _shows(c.text, tree, keep, self.gap_marker):
                keep = None  # headings and markup alone show nothing: as when nothing fits, select judges it whole
            if keep is None and excluded:
                keep = rest  # a chunk within its share (or nothing fits it): all but the rival
            if keep is None:
                continue  # nothing matched and fits: leave the chunk whole for select to judge
            event = "excerpted" if i in large else "rival_removed"
            out[i] = _cut(c, write(c.text, tree, keep, self.gap_marker), ctx, event, keep)
        return [c for c in out if c is not None]

    def _cap(self, ctx: Context) -> int:
        """The most tokens a chunk keeps whole: ``max_share`` of the budget, or ``agreed_share``
        when the two rankings agree on the head (noted where it is more), never below the floor.
        Where the floor already sets the cap (a small budget: it gives each chunk more than
        ``max_share``), the agreed share does not raise it again (measured at 750 tokens:
        benchmarks/README.md)."""
        share = int(ctx.budget * self.max_share)
        cap = max(self.min_tokens, share)
        agreement = ctx.ledger.call.head_agreement
        if self.agreed_share is None or agreement is None or agreement < AGREED or cap > share:
            return cap
        agreed = int(ctx.budget * self.agreed_share)
        if agreed <= cap:
            return cap
        ctx.report.note(self.name, "agreed_share", share=self.agreed_share, head_agreement=agreement, tokens=agreed)
        return agreed

    def fit(self, chunk: Chunk, limit: int, ctx: Context) -> Chunk | None:
        """:func:`fit` with this stage's ``fit_min`` and ``gap_marker``."""
        return fit(chunk, limit, ctx, fit_min=self.fit_min, gap_marker=self.gap_marker)

    def fitter(self) -> Callable[[Chunk, int, Context], Chunk | None]:
        """:func:`fit` with this stage's settings, for :class:`~ctxassembly.stages.select.Select`
        (the block scores travel through the ledger, not through this object)."""
        return partial(fit, fit_min=self.fit_min, gap_marker=self.gap_marker)

    def grower(self) -> Callable[[Chunk, int, Context], Chunk | None]:
        """:func:`grow` with this stage's ``gap_marker``, for
        :class:`~ctxassembly.stages.select.Select` (what select left of the budget)."""
        return partial(grow, gap_marker=self.gap_marker)

    def write(self, text: str, tree: Sequence[Block], keep: list[int]) -> str:
        """:func:`write` with this stage's ``gap_marker``."""
        return write(text, tree, keep, self.gap_marker)


def fit(chunk: Chunk, limit: int, ctx: Context, *, fit_min: int = FIT_MIN, gap_marker: str = "[…]") -> Chunk | None:
    """``chunk`` cut to its best blocks within ``limit`` tokens of text, or ``None`` when
    the block that matches the question best does not fit (select calls this for a
    chunk that does not fit whole in what is left of the budget; below ``fit_min``
    tokens it is not worth a fragment). The block scores are the excerpt stage's, from
    the ledger, while they score this text; else the chunk's blocks are scored alone."""
    if limit < fit_min:
        return None
    text, tree, scores, gone, own = _scored(chunk, ctx)
    if not scores.size or scores.max() <= 0:
        return None
    keep = choose(text, tree, scores, limit, ctx.count_tokens, question=ctx.question, excluded=gone)
    # A fragment without the block that matches the question best is the chunk's
    # periphery: it would spend the rest of the budget on what the chunk is not about.
    # Where that block alone is larger than the room left, the name it defines (its
    # label line) stands for it.
    if keep is None:
        return None
    # Where the text matches too, a markup line (``.. code-block:: python``) is not the
    # match: it names the kind of what follows, and a fragment matched only there is
    # periphery. (Where only markup matches, ``.. attribute:: username``, it is the name.)
    not_content = [is_mark(text[b.start : b.end]) or j in gone for j, b in enumerate(tree)]
    content = np.where(not_content, 0.0, scores)
    top = int(np.argmax(content if content.max() > 0 else scores))
    best = tree[top]
    if top not in keep and not (best.label in keep and ctx.count_tokens(text[best.start : best.end]) > limit):
        return None
    new = write(text, tree, keep, gap_marker)
    if new == chunk.text or not _shows(text, tree, keep, gap_marker):  # or headings, markup and gaps alone
        return None
    # the blocks it holds are recorded for grow when they are blocks of the scored text
    return _cut(chunk, new, ctx, "fitted", keep if own else None)


def _says(text: str, block: Block, gap_marker: str) -> bool:
    """``block`` holds content: no heading, no markup line alone, no gap of an earlier cut,
    not punctuation alone (the ``}`` and fence that close a code block)."""
    piece = text[block.start : block.end]
    if block.is_heading or piece.strip() == gap_marker or is_mark(piece):
        return False
    return any(ch.isalnum() for ch in piece)


def _shows(text: str, tree: Sequence[Block], keep: Sequence[int], gap_marker: str) -> bool:
    """The blocks ``keep`` of ``text`` hold content (:func:`_says`), not only a frame."""
    return any(_says(text, tree[j], gap_marker) for j in keep)


def _scored(chunk: Chunk, ctx: Context) -> tuple[str, tuple[Block, ...], np.ndarray, frozenset[int], bool]:
    """The blocks of ``chunk``'s text, their scores, the blocks it may not keep, and
    whether the scores are the excerpt stage's (they score this very text), else the
    chunk's blocks scored alone (a cut is cut again from its own text)."""
    tree = structure(chunk.text)
    scored = ctx.ledger[chunk.index].blocks
    if scored is not None and scored.text == chunk.text:
        return chunk.text, tree, scored.scores, scored.gone, True
    scores = block_scores([chunk.text[b.start : b.end] for b in tree], ctx.question)
    return chunk.text, tree, scores, frozenset(), False


def _holds(scored: Blocks, tree: Sequence[Block], text: str, gap_marker: str) -> bool:
    """Whether ``text`` is this stage's cut of the scored text, as the ledger records it
    (not rewritten since by another stage)."""
    return scored.kept is not None and write(scored.text, tree, list(scored.kept), gap_marker) == text


def grow(chunk: Chunk, limit: int, ctx: Context, *, gap_marker: str = "[…]") -> Chunk | None:
    """``chunk``, cut by this stage, with more of its own text back within ``limit`` tokens
    of text, or ``None`` when nothing more fits (or the chunk is no cut of this stage).

    Select calls this after it chose, with what the chosen chunks left of the budget: the
    whole chunk comes back when it fits (``restored``), else the blocks beside the kept ones
    (:func:`_grow`, ``widened``). So the window around a match is paid from the budget
    no chunk could use, never by leaving a chunk out."""
    scored = ctx.ledger[chunk.index].blocks
    if scored is None or scored.kept is None or limit <= 0:
        return None
    text, count = scored.text, ctx.count_tokens
    tree = structure(text)
    if not _holds(scored, tree, chunk.text, gap_marker):
        return None
    keep = list(scored.kept)
    rest = [j for j in range(len(tree)) if j not in scored.gone]
    whole = text if len(rest) == len(tree) else write(text, tree, rest, gap_marker)
    if count(whole) <= limit:
        return _restored(chunk, whole, ctx, scored, rest)
    cost = [count(text[b.start : b.end]) + 2 for b in tree]
    scores = np.asarray(scored.scores, dtype=np.float64)
    best = max(keep, key=lambda k: (scores[k], -k))
    now = count(chunk.text)
    cap = limit
    for _ in range(3):  # the blocks' own counts estimate the written text's: check, and retry tighter
        more = set(keep)
        _grow(tree, text, more, scored.gone, cost=cost, used=now, cap=cap, best=best)
        if len(more) == len(keep):
            return None
        new = write(text, tree, sorted(more), gap_marker)
        over = count(new) - limit
        if over <= 0:
            return _cut(replace(chunk, text=text), new, ctx, "widened", sorted(more))
        cap -= over
    return None


def _restored(chunk: Chunk, whole: str, ctx: Context, scored: Blocks, rest: list[int]) -> Chunk:
    """``chunk`` whole again (``whole``: its text before the cut, less a rival entry): the
    cut leaves the ledger when it was this stage's alone, and the offsets come back."""
    ctx.note_cut(Excerpt.name, "restored", replace(chunk, text=scored.text), whole)
    ledger = ctx.ledger
    ledger.update(chunk.index, blocks=replace(scored, kept=None if whole == scored.text else tuple(rest)))
    old = ledger[chunk.index].cut
    if old is None or whole != scored.text:
        return replace(chunk, text=whole)
    by = tuple(b for b in old.by if b != "excerpt")
    if by or old.spans is not None or old.injection_removed is not None:
        ledger.update(chunk.index, cut=replace(old, by=by))
        return replace(chunk, text=whole)
    ledger.update(chunk.index, cut=None)
    return replace(chunk, text=whole, start=old.source_span[0], end=old.source_span[1])


def _cut(chunk: Chunk, text: str, ctx: Context, event: str, keep: Sequence[int] | None = None) -> Chunk:
    """``chunk`` with ``text`` in place of its own, the cut noted in the report; the
    offsets go to the ledger's ``cut.source_span`` (kept from an earlier cut), and
    ``keep`` (the blocks of the scored text that ``text`` holds) to its block record."""
    ctx.note_cut(Excerpt.name, event, chunk, text)
    ledger = ctx.ledger
    ledger.cut(chunk, "excerpt", keep_span=True)
    scored = ledger[chunk.index].blocks
    if scored is not None:
        ledger.update(chunk.index, blocks=replace(scored, kept=None if keep is None else tuple(keep)))
    return replace(chunk, text=text, start=None, end=None)


def write(text: str, tree: Sequence[Block], keep: list[int], gap_marker: str = "[…]") -> str:
    """The kept blocks verbatim in reading order; text between contiguous blocks kept."""
    spans: list[list[int]] = []
    for j in keep:
        blk = tree[j]
        if spans and j - 1 in keep and not text[spans[-1][1] : blk.start].strip():
            spans[-1][1] = blk.end
        else:
            spans.append([blk.start, blk.end])
    return with_gaps(text, spans, gap_marker)


def _rivals(
    chunks: Sequence[Chunk], near: Sequence[int], trees: dict[int, tuple[Block, ...]], scores: np.ndarray, question: str
) -> tuple[dict[int, frozenset[int]], dict[int, str]]:
    """The rival entries (:mod:`ctxassembly.text.rivals`) among the blocks of the ``near``
    chunks: per chunk, the blocks that leave (each loser with its name and what is under
    it), and the id of the chunk that holds the first winner."""
    lost = losers([chunks[i].text for i in near], [trees[i] for i in near], scores, question)
    gone: dict[int, set[int]] = {}
    rival_of: dict[int, str] = {}
    for (t, j), (winner, _) in lost.items():
        i = near[t]
        gone.setdefault(i, set()).update(entry_blocks(trees[i], j))
        rival_of.setdefault(i, chunks[near[winner]].id)
    return {i: frozenset(b) for i, b in gone.items()}, rival_of


def block_scores(texts: Sequence[str], question: str) -> np.ndarray:
    """BM25 of ``question`` over ``texts`` plus BM25 over the names each text defines."""
    lex = np.asarray(Lexical(texts).scores(question), dtype=np.float64)
    defs = np.asarray(Lexical([definitions(t) for t in texts]).scores(question), dtype=np.float64)
    return lex + defs


def choose(
    text: str,
    tree: Sequence[Block],
    scores: np.ndarray,
    cap: int,
    count: Callable[[str], int],
    *,
    question: str | None = None,
    excluded: frozenset[int] = frozenset(),
    window: bool = True,
) -> list[int] | None:
    """Indices of the blocks to keep within ``cap`` tokens, or ``None`` to leave the chunk whole.

    Blocks in ``excluded`` (a rival entry) are never kept.

    With ``question``, a block that matches the same question words as a kept block at
    its indent (the same example in another syntax, one tab of several) waits until the
    other blocks were tried: it says again what the fragment says."""
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
    terms = set(query_terms(question)) if question is not None else set()
    found = [frozenset(terms.intersection(words(text[b.start : b.end]))) for b in tree]
    keep: set[int] = set()
    said: set[tuple[int, frozenset[str]]] = set()  # (indent, question words) of kept blocks
    used = 0
    waiting: list[int] = []
    for j in sorted(range(len(tree)), key=lambda j: (-ctx_score[j], j)):
        if j in keep or j in excluded or (ctx_score[j] <= 0 and keep):
            continue
        if found[j] and (tree[j].indent, found[j]) in said:
            waiting.append(j)
            continue
        group = _with_owners(tree, j, text) - excluded
        extra = sum(cost[x] for x in group - keep)
        if used + extra > cap:
            continue
        keep |= group
        used += extra
        said.update((tree[x].indent, found[x]) for x in group if found[x])
    for j in waiting:  # the repeats, while room is left
        group = _with_owners(tree, j, text) - excluded
        extra = sum(cost[x] for x in group - keep)
        if used + extra <= cap:
            keep |= group
            used += extra
    if keep and window:
        best = max(keep, key=lambda k: (ctx_score[k], -k))
        _grow(tree, text, keep, excluded, cost=cost, used=used, cap=cap, best=best)
    if not keep or len(keep) == len(tree):
        return None
    return sorted(keep)


def _grow(
    tree: Sequence[Block],
    text: str,
    keep: set[int],
    excluded: frozenset[int],
    *,
    cost: Sequence[int],
    used: int,
    cap: int,
    best: int,
) -> None:
    """Grow ``keep`` (in place) into contiguous windows while ``cap`` has room (``used``
    tokens spent so far). The blocks next to a kept block go first, nearest to ``best`` first
    and, at equal distance, the one after it: the block beside a match is the likeliest to
    hold what the question did not name (a setting's value, the list a sentence leads into,
    the rest of a paragraph), which no word of the question scores."""
    while True:
        edge = {k + d for k in keep for d in (1, -1)} - keep - excluded
        for x in sorted((x for x in edge if 0 <= x < len(tree)), key=lambda x: (abs(x - best), x < best)):
            group = _with_owners(tree, x, text) - excluded
            extra = sum(cost[y] for y in group - keep)
            if used + extra <= cap:
                keep |= group
                used += extra
                break
        else:
            return


def _body_of_marks(tree: Sequence[Block], x: int | None, text: str) -> list[int]:
    """The first child of ``x`` when ``x`` is markup alone (``.. code-block:: text``, a tab's
    ``.. tab:: Windows``), and so on down while the child is markup too: the body a chain of
    directive lines introduces, without which they show nothing."""
    out: list[int] = []
    while x is not None and is_mark(text[tree[x].start : tree[x].end]):
        child = tree[x].first_child
        if child is None:
            break
        out.append(child)
        x = child
    return out


def _with_owners(tree: Sequence[Block], j: int, text: str) -> set[int]:
    """``j``, the chain of short blocks that own it (the names it belongs to), and, when ``j``
    owns blocks, its first child (the value of the name); a heading brings its marks and a
    one-line first block; a directive line (``j`` or that first child) brings the body under
    it (:func:`_body_of_marks`)."""
    group = {j}
    b = tree[j]
    # a short block is a name and its first child its value; a long one is prose whose
    # first child only goes on with it (it may stay behind when the budget is short)
    first = b.first_child if b.end - b.start <= HEADER_CHARS else None
    for x in (first, b.label, b.value):
        if x is not None:
            group.add(x)
    for x in (j, first):  # a directive line says only what kind its body is: the body comes too
        group.update(_body_of_marks(tree, x, text))
    if b.is_heading:
        # a heading is a name too: its status marks go with it, and so does its first block
        # when that is one line (``Default: 1209600`` under a setting's heading: its value)
        group.update(b.marks)
        body = next((x for x in range(j + 1, len(tree)) if tree[x].heading == j and x not in b.marks), None)
        if body is not None and tree[body].owner is None:
            line = text[tree[body].start : tree[body].end].strip()
            if "\n" not in line:
                group.add(body)
    o = b.owner
    while o is not None:
        if tree[o].end - tree[o].start <= HEADER_CHARS:
            group.add(o)
        o = tree[o].owner
    h = b.heading
    if h is not None and tree[h].end - tree[h].start <= HEADER_CHARS:
        group.add(h)
        group.update(tree[h].marks)
    return group
