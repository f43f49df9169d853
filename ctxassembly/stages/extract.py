"""Extract stage: a chunk larger than it needs to be keeps only the sentences that answer
the question, and the sentences those depend on, verbatim and in reading order.

1. **Segment** the chunk into units that must not be cut (:func:`segment`): headings
   (with their underline), prose sentences (pysbd, inside one paragraph), whole list
   items, whole code blocks (``::`` literal blocks, indented blocks, ``` fences,
   ``.. code-block::``), whole tables, and directive headers (``.. versionchanged:: 5.1``).
2. **Score** each unit against the question: BM25 (document frequencies over the units
   of all chunks being extracted) and, with an embedder, the cosine of the embeddings
   for the ``semantic_top`` units that BM25 ranks highest in their context (a cascade:
   embedding is the costly part), each read on its first ``semantic_chars`` characters.
3. **Keep** the best units while they fit the chunk's share of the budget, each with
   what it depends on (:meth:`Extract.dependencies`): the heading of its section, the
   directive it sits in (``.. deprecated:: 5.0``), the lead-in sentence of its list or
   code block, the previous sentence when it opens with a back-reference ("This",
   "However"), and any neighbouring sentence of its paragraph that states a condition
   (a negation, "only", "must", a number with a unit, a version, a date).
4. **Write** the kept units as verbatim slices of the chunk in reading order; contiguous
   units keep the text between them, other cuts are marked with ``gap_marker``. Every
   piece is a substring of the chunk text; nothing is rewritten. The chunk's labels
   stay; ``meta["spans"]`` holds the kept ``(start, end)`` offsets in the chunk text and
   ``meta["source_span"]`` the chunk's offsets in its document.

Only chunks larger than ``extract_share`` of the budget are touched, and only as many of
them, in rank order, as could still reach the context (``reach`` times the budget):
short chunks stay whole, and no work is spent on chunks that select would drop anyway.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError, MissingExtraError
from ctxassembly.models import embedder_for, load_sentence_transformer
from ctxassembly.pipeline import StageBase
from ctxassembly.stages.base import Context
from ctxassembly.stages.tables import find_tables
from ctxassembly.text import Lexical, with_gaps

__all__ = ["Extract", "Unit", "carries_condition", "clip", "in_context", "segment", "sentences"]


@dataclass(frozen=True, slots=True)
class Unit:
    """A piece of a chunk that is kept or left out whole: ``text[start:end]``.

    ``kind`` is ``heading``, ``sentence``, ``item``, ``code``, ``table`` or ``directive``.
    ``para`` numbers the paragraph (sentences of one paragraph share it); ``heading`` and
    ``parent`` are the indices of the unit's section heading and enclosing directive;
    ``lead`` is the index of the sentence that introduces it (a list's or a code block's
    lead-in ending with ``:``).
    """

    start: int
    end: int
    kind: str
    para: int
    heading: int | None = None
    parent: int | None = None
    lead: int | None = None


_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+:.<>_])\1{2,}\s*$")
_MD_HEADING = re.compile(r"^#{1,6}\s+\S")
_ITEM = re.compile(r"^(\s*)(?:[*\-+•]|#\.|\(?(?:\d{1,3}|[a-zA-Z])[.)]|:[^:\s][^:]*:)\s+\S")
_DIRECTIVE = re.compile(r"^(\s*)\.\.\s+([\w:.-]+)::")
_CODE_DIRECTIVES = frozenset(
    {"code-block", "code", "sourcecode", "literalinclude", "parsed-literal", "console", "highlight"}
)
_LONG_ITEM = 300  # characters of content after its first block that make an item worth splitting
_FENCE = re.compile(r"^(\s*)(```+|~~~+)")
_BOUNDARY = re.compile(r"[.!?][\"')\]`*]*\s+[\"'(\[`*]*[A-Z0-9:]")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


@lru_cache(maxsize=1)
def _segmenter() -> object:
    try:
        import pysbd  # type: ignore[import-untyped]
    except ImportError:
        raise MissingExtraError("pysbd", "models") from None
    return pysbd.Segmenter(language="en", clean=False, char_span=True)


@lru_cache(maxsize=16384)
def sentences(paragraph: str) -> tuple[tuple[int, int], ...]:
    """``(start, end)`` of each sentence of one prose paragraph (pysbd; trailing space trimmed).

    Line breaks inside the paragraph are not boundaries (reStructuredText wraps lines).

    :raises MissingExtraError: pysbd is not installed.
    """
    stripped = paragraph.rstrip()
    if not stripped:
        return ()
    if not _BOUNDARY.search(stripped):
        return ((len(paragraph) - len(paragraph.lstrip()), len(stripped)),)
    flat = re.sub(r"\s", " ", paragraph)  # same length: offsets stay valid
    out = []
    for span in _segmenter().segment(flat):  # type: ignore[attr-defined]
        a, b = span.start, span.end
        while a < b and paragraph[a].isspace():
            a += 1
        while b > a and paragraph[b - 1].isspace():
            b -= 1
        if b > a:
            out.append((a, b))
    if not out or re.sub(r"\s", "", "".join(paragraph[a:b] for a, b in out)) != re.sub(r"\s", "", paragraph):
        return ((len(paragraph) - len(paragraph.lstrip()), len(stripped)),)  # spans lost text: keep whole
    return tuple(out)


@lru_cache(maxsize=8192)
def segment(text: str) -> tuple[Unit, ...]:  # noqa: PLR0915 - one line scanner; its branches read in order
    """Cut ``text`` (reStructuredText, Markdown or plain) into units that are never split.

    :raises MissingExtraError: pysbd is not installed.
    """
    lines = text.splitlines(keepends=True)
    offs = [0]
    for ln in lines:
        offs.append(offs[-1] + len(ln))
    tables = [(t.start, t.end) for t in find_tables(text)]
    units: list[Unit] = []
    para = 0
    heading: int | None = None
    # directive stack: (indent of the directive line, unit index)
    stack: list[tuple[int, int]] = []
    last_sentence: int | None = None  # last sentence of the previous paragraph
    prose_indent: int | None = None  # indent of the previous block when it was prose

    def parent_for(indent: int) -> int | None:
        while stack and indent <= stack[-1][0]:
            stack.pop()
        return stack[-1][1] if stack else None

    def block_end(i: int, base: int) -> int:
        """First line index after the block of lines indented more than ``base`` (blank lines inside kept)."""
        j = i
        last = i
        while j < len(lines):
            if lines[j].strip():
                if _indent(lines[j]) <= base:
                    break
                last = j + 1
            j += 1
        return last

    def lead_of() -> int | None:
        if last_sentence is None:
            return None
        return last_sentence if text[: units[last_sentence].end].rstrip().endswith(":") else None

    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        start = offs[i]
        ind = _indent(line)
        prev_prose, prose_indent = prose_indent, None
        table = next(((a, b) for a, b in tables if a <= start < b), None)
        if table is not None:
            parent = parent_for(ind)
            units.append(Unit(table[0], table[1], "table", para, heading, parent, lead_of()))
            para += 1
            while i < len(lines) and offs[i] < table[1]:
                i += 1
            last_sentence = None
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        fence = _FENCE.match(line)
        if fence:
            j = i + 1
            while j < len(lines) and not lines[j].lstrip().startswith(fence.group(2)):
                j += 1
            j = min(j + 1, len(lines))
            units.append(Unit(start, _trim(text, offs[j]), "code", para, heading, parent_for(ind), lead_of()))
            para += 1
            i, last_sentence = j, None
            continue
        is_rst_heading = (
            bool(_UNDERLINE.match(nxt.strip()))
            and len(nxt.strip()) >= len(line.strip())
            and not _UNDERLINE.match(line.strip())
        )
        is_overline = (
            bool(_UNDERLINE.match(line.strip())) and i + 2 < len(lines) and lines[i + 2].strip() == line.strip()
        )
        if is_rst_heading or is_overline or _MD_HEADING.match(line):
            j = i + (3 if is_overline else 2 if is_rst_heading else 1)
            stack.clear()
            units.append(Unit(start, _trim(text, offs[j]), "heading", para))
            heading = len(units) - 1
            para += 1
            i, last_sentence = j, None
            continue
        directive = _DIRECTIVE.match(line)
        if directive:
            end = block_end(i + 1, ind)
            parent = parent_for(ind)
            if directive.group(2) in _CODE_DIRECTIVES:
                units.append(Unit(start, _trim(text, offs[end]), "code", para, heading, parent, lead_of()))
                para += 1
                i, last_sentence = end, None
                continue
            # the directive line and its option lines (":name: value") form the header
            j = i + 1
            while j < len(lines) and lines[j].strip().startswith(":") and _indent(lines[j]) > ind:
                j += 1
            units.append(Unit(start, _trim(text, offs[j]), "directive", para, heading, parent))
            stack.append((ind, len(units) - 1))
            para += 1
            i, last_sentence = j, None
            continue
        parent = parent_for(ind)
        item = _ITEM.match(line)
        if item:
            end = i + 1
            while end < len(lines) and lines[end].strip() and not _ITEM.match(lines[end]) and _indent(lines[end]) > ind:
                end += 1
            # continuation paragraphs of the item: indented more than its marker, after blank lines
            first_end = end
            end = max(end, block_end(end, ind))
            lead = lead_of() if units and units[-1].kind != "item" else (units[-1].lead if units else None)
            if offs[end] - offs[first_end] > _LONG_ITEM and offs[end] > offs[first_end]:
                # a long item with blocks of its own (paragraphs, code): its first block is
                # the item unit, the rest is segmented as the item's content
                units.append(Unit(start, _trim(text, offs[first_end]), "item", para, heading, parent, lead))
                owner = len(units) - 1
                base, shift = len(units), offs[first_end]
                for u in segment(text[shift : offs[end]]):
                    units.append(
                        Unit(
                            u.start + shift,
                            u.end + shift,
                            u.kind,
                            u.para + para + 1,
                            heading if u.heading is None else u.heading + base,
                            owner if u.parent is None else u.parent + base,
                            None if u.lead is None else u.lead + base,
                        )
                    )
                para = units[-1].para + 1
            else:
                units.append(Unit(start, _trim(text, offs[end]), "item", para, heading, parent, lead))
                para += 1
            i = end
            continue
        if prev_prose is not None and ind > prev_prose:
            # an indented block after a paragraph: a literal block (after "::") or a quote
            end = block_end(i, ind - 1)
            units.append(Unit(start, _trim(text, offs[end]), "code", para, heading, parent, lead_of()))
            para += 1
            i, last_sentence = end, None
            continue
        # a prose paragraph: up to the next blank line, heading, item or directive
        end = i + 1
        while (
            end < len(lines) and lines[end].strip() and not _ITEM.match(lines[end]) and not _DIRECTIVE.match(lines[end])
        ):
            if end + 1 < len(lines) and _UNDERLINE.match(lines[end + 1].strip()):
                break
            end += 1
        body = text[start : offs[end]]
        for a, b in sentences(body):
            units.append(Unit(start + a, start + b, "sentence", para, heading, parent))
        last_sentence = len(units) - 1
        prose_indent = ind
        para += 1
        i = end
    return tuple(units)


def _trim(text: str, end: int) -> int:
    while end > 0 and text[end - 1].isspace():
        end -= 1
    return end


_CONDITION = re.compile(
    r"\b(?:not|no|never|none|cannot|can't|don't|doesn't|isn't|aren't|won't|without|unless|except|only|must|"
    r"should|required?|deprecated|removed|no longer|default(?:s|ed)?|at (?:least|most)|minimum|maximum|"
    r"before|after|until|since)\b"
    r"|\b\d+(?:[.,]\d+)*\s?(?:%|[kmgt]i?b|bytes?|ms|s|seconds?|minutes?|hours?|days?|weeks?|years?|chars?|characters?)\b"
    r"|\b(?:in|of) (?:milli)?(?:seconds|minutes|hours|days|bytes|characters|tokens)\b"
    r"|\b\d+\.\d+(?:\.\d+)*\b"
    r"|\b\d{4}-\d{2}-\d{2}\b",
    re.IGNORECASE,
)
_NEIGHBOUR_CHARS = 240  # a neighbouring condition longer than this is a topic of its own
_BACKREF = re.compile(
    r"^(?:this|that|these|those|it|its|they|such|however|otherwise|instead|also|then|in (?:that|this) case|"
    r"for (?:example|instance)|in addition|as a result|therefore|note)\b",
    re.IGNORECASE,
)


def clip(text: str, limit: int | None) -> str:
    """``text`` cut to at most ``limit`` characters at a word boundary (whole when shorter)."""
    if limit is None or len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit + 1)
    return text[: cut if cut > limit // 2 else limit].rstrip()


def carries_condition(text: str) -> bool:
    """True when ``text`` states a condition a neighbouring sentence may depend on: a negation,
    "only", "must", a default, a bound, a number with a unit, a version or a date."""
    return bool(_CONDITION.search(text))


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


class Extract(StageBase):
    """Cut chunks larger than ``extract_share`` of the budget to their question-relevant units.

    :param embedder: ``None`` (BM25 only), or a ``SentenceTransformer`` (instance, path or
        hub name), an :class:`~ctxassembly.models.Embedder` or a callable ``texts -> vectors``
        whose cosine with the question is added to the score.
    :param extract_share: the largest fraction of the budget one chunk may fill whole.
    :param min_tokens: never cut a chunk to less than this (tokens).
    :param reach: extract chunks (in rank order) until this many budgets' worth of text
        is ahead; the rest are left whole for select to judge.
    :param semantic_reach: the same reach (in budgets) for the semantic score: only the
        units of chunks this close to the top are embedded (embedding is the costly part;
        chunks further down are cut on BM25 alone).
    :param semantic_weight: weight of the cosine against the (max-normalised) BM25 score.
    :param gap_marker: what stands where text was left out.
    :param device: where an embedder given by path or name runs (``"cpu"``, ``"cuda:0"``...),
        loaded now; ``None``: sentence-transformers chooses, loaded on first use.
    :param semantic_top: embed at most this many units per call, those BM25 ranks highest
        read in their context (:func:`in_context`); ``None``: every unit within the
        semantic reach. Embedding sentences is most of a call's model time when the chunk
        vectors are supplied; the cascade bounds it. 24 measured as good as 48 on the
        Django dev set at half the sentences (benchmarks/README.md).
    :param semantic_chars: the embedder reads at most this many characters of a unit (cut
        at a word boundary; ``None``: all of it). A long list item or code block is scored
        on its opening, which says what it is about; what is kept is always the whole,
        verbatim unit. 60 (about 15 tokens) kept the same answers on the Django dev set as
        80, 100, 120 and whole units, at half the model time of 120; no long unit pads a
        forward pass for the short ones.
    :raises ConfigError: a share outside (0, 1], a negative weight, a reach below 1, or a
        ``semantic_top`` / ``semantic_chars`` that is not a positive int or ``None``.
    :raises MissingExtraError: pysbd (or, for a model name, sentence-transformers) is missing.
    """

    name = "extract"

    def __init__(
        self,
        embedder: object = None,
        *,
        extract_share: float = 0.25,
        min_tokens: int = 60,
        reach: float = 2.0,
        semantic_reach: float = 1.0,
        semantic_top: int | None = 24,
        semantic_chars: int | None = 60,
        semantic_weight: float = 1.0,
        gap_marker: str = "[…]",
        device: str | None = None,
    ) -> None:
        if not 0 < extract_share <= 1:
            raise ConfigError(f"extract_share must be in (0, 1], got {extract_share!r}")
        if semantic_weight < 0:
            raise ConfigError(f"semantic_weight must be >= 0, got {semantic_weight!r}")
        if reach < 1:
            raise ConfigError(f"reach must be >= 1 (budgets of text), got {reach!r}")
        for label, value in (("semantic_top", semantic_top), ("semantic_chars", semantic_chars)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ConfigError(f"{label} must be a positive int or None, got {value!r}")
        _segmenter()  # fail at construction, not mid-call, when pysbd is missing
        if isinstance(embedder, str) and device is not None:
            embedder = load_sentence_transformer(embedder, device)
        self.embedder = None if embedder is None else embedder_for(embedder)
        self.uses_model = self.embedder is not None
        self.max_share = extract_share
        self.min_tokens = min_tokens
        self.horizon = reach
        self.semantic_horizon = semantic_reach
        self.semantic_top = semantic_top
        self.semantic_chars = semantic_chars
        self.semantic_weight = semantic_weight
        self.gap_marker = gap_marker

    def cap(self, budget: int) -> int:
        return max(self.min_tokens, int(budget * self.max_share))

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        cap = self.cap(ctx.budget)
        count = ctx.count_tokens
        todo: list[int] = []
        near: set[int] = set()  # chunks whose units also get the (costlier) semantic score
        ahead = 0
        for i, c in enumerate(chunks):
            if ahead > self.horizon * ctx.budget:
                break
            n = count(c.text)
            if n > cap:
                todo.append(i)
                if ahead <= self.semantic_horizon * ctx.budget:
                    near.add(i)
                ahead += cap
            else:
                ahead += n
        if not todo:
            return chunks
        segs = {i: segment(chunks[i].text) for i in todo}
        texts = [chunks[i].text[u.start : u.end] for i in todo for u in segs[i]]
        owner = [i for i in todo for _ in segs[i]]
        scores = np.asarray(Lexical(texts).scores(ctx.question), dtype=np.float64)
        if scores.size and scores.max() > 0:
            scores = scores / scores.max()
        if self.embedder is not None and self.semantic_weight and near:
            where = [k for k, i in enumerate(owner) if i in near]
            if self.semantic_top is not None and len(where) > self.semantic_top:
                # a cascade: the embedder re-scores the units BM25 ranks highest, not all,
                # each read in its context as choose() reads it ("150 characters or fewer."
                # matches nothing alone, but sits under ".. attribute:: username")
                ranked = in_context(scores, [segs[i] for i in todo])
                where = sorted(sorted(where, key=lambda k: (-ranked[k], k))[: self.semantic_top])
            vecs = self.embedder.embed([ctx.question, *(clip(texts[k], self.semantic_chars) for k in where)])
            scores[where] += self.semantic_weight * (vecs[1:] @ vecs[0])
        out = list(chunks)
        k = 0
        for i in todo:
            units = segs[i]
            s = scores[k : k + len(units)]
            k += len(units)
            c = chunks[i]
            kept = self.choose(c.text, units, s, cap, count)
            if kept is None:
                continue
            text, spans = self.write(c.text, units, kept)
            ctx.report.note(
                self.name, "extracted", id=c.id, index=c.index, tokens_before=count(c.text), tokens_after=count(text)
            )
            out[i] = replace(
                c,
                text=text,
                start=None,
                end=None,
                meta=c.meta.updated(extract=True, spans=spans, source_span=(c.start, c.end)),
            )
        return out

    def dependencies(self, text: str, units: Sequence[Unit], j: int, *, neighbours: bool = True) -> list[int]:
        """Units that unit ``j`` needs to be read correctly (see the module docstring).

        Structural ones (heading, directive, lead-in) always; with ``neighbours``, also the
        adjacent sentences of the same section that state a condition or that the unit
        refers back to.
        """
        u = units[j]
        deps = [x for x in (u.heading, u.parent, u.lead) if x is not None]
        if neighbours and u.kind in ("sentence", "item"):
            own = text[u.start : u.end]
            for n in (j - 1, j + 1):
                if not 0 <= n < len(units):
                    continue
                v = units[n]
                if v.kind not in ("sentence", "item") or (v.heading, v.parent) != (u.heading, u.parent):
                    continue
                other = text[v.start : v.end]
                if (
                    (n < j and _BACKREF.match(own) and v.para == u.para)
                    or (n > j and _BACKREF.match(other) and v.para == u.para)
                    or (carries_condition(other) and len(other) <= _NEIGHBOUR_CHARS)
                ):
                    deps.append(n)
        return deps

    def choose(self, text: str, units: Sequence[Unit], scores: np.ndarray, cap: int, count: object) -> list[int] | None:
        """Indices of the units to keep, or ``None`` to leave the chunk whole.

        Headings and directive headers are not picked for themselves: they come with the
        units under them, and their score is added (halved) to those units', so content
        under a heading that matches the question ranks higher.
        """
        if len(units) < 2:
            return None
        cost = [count(text[u.start : u.end]) + 1 for u in units]  # type: ignore[operator]
        own = np.asarray(scores, dtype=np.float64)
        total = in_context(own, [units])
        candidates = [j for j, u in enumerate(units) if u.kind not in ("heading", "directive")]
        keep: set[int] = set()
        used = 0
        for j in sorted(candidates, key=lambda j: (-total[j], j)):
            if j in keep or (own[j] <= 0 and keep):
                continue
            group = self._closure(text, units, j, keep)
            extra = sum(cost[x] for x in group)
            if used + extra + 2 > cap:
                continue
            keep |= group
            used += extra + 2
        if not keep or len(keep) == len(units):
            return None
        return sorted(keep)

    def _closure(self, text: str, units: Sequence[Unit], j: int, keep: set[int]) -> set[int]:
        """``j`` with its dependencies: neighbours of ``j`` itself, structure transitively."""
        group: set[int] = set()
        todo = [j, *self.dependencies(text, units, j)]
        while todo:
            x = todo.pop()
            if x in group or x in keep:
                continue
            group.add(x)
            todo.extend(self.dependencies(text, units, x, neighbours=False))
        return group

    def write(self, text: str, units: Sequence[Unit], kept: list[int]) -> tuple[str, tuple[tuple[int, int], ...]]:
        """The kept units as verbatim slices in reading order, gaps marked."""
        spans: list[list[int]] = []
        for j in kept:
            u = units[j]
            if spans and not text[spans[-1][1] : u.start].strip():
                spans[-1][1] = u.end
            else:
                spans.append([u.start, u.end])
        return with_gaps(text, spans, self.gap_marker), tuple((a, b) for a, b in spans)


def _ends_thought(text: str, unit: Unit) -> bool:
    """A following sentence that opens a new topic (a heading-like line) is not a dependency."""
    return text[unit.start : unit.end].rstrip().endswith("::")
