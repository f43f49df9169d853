"""Where a document's structure is: headings, blank-line blocks and the names a text defines.

Formats are read generally (reStructuredText, Markdown, HTML-ish markup, plain text):

- :func:`structure` reads the blank-line blocks of a text as a tree, by indentation and
  section (what the excerpt stage keeps or leaves out whole); :func:`blocks` is the
  flat list;
- :func:`definitions` lists the names a text defines (headings, directive arguments,
  definition terms, first table cells), which the excerpt and relevance stages score
  next to the text itself.

The finer units that are never cut (sentences, items, code, tables, directives) are
:func:`ctxassembly.text.segments.segment`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ctxassembly.twin import unfrozen_twin

__all__ = [
    "HEADER_CHARS",
    "UNDERLINE",
    "Block",
    "blocks",
    "definitions",
    "indent",
    "is_mark",
    "leading_heading",
    "lines_with_offsets",
    "structure",
    "unwrapped",
]

# A reST heading's underline or overline: one punctuation character repeated, 3 or more.
UNDERLINE = re.compile(r"^([=\-~^\"'`#*+:.<>_])\1{2,}\s*$")
HEADER_CHARS = 200  # a block longer than this is prose, not a name or a mark


def indent(line: str) -> int:
    """Leading spaces and tabs of ``line``."""
    return len(line) - len(line.lstrip(" \t"))


def lines_with_offsets(text: str) -> tuple[list[str], list[int]]:
    """The lines of ``text`` with their line ends, and the offset of each line's start (one
    more offset than lines: the last is ``len(text)``)."""
    lines = text.splitlines(keepends=True)
    offs = [0]
    for ln in lines:
        offs.append(offs[-1] + len(ln))
    return lines, offs


# --------------------------------------------------------------------------- definitions
# Where a document *defines* a name, in any of the common doc formats: a heading (reST
# underline/overline, Markdown ``#``, HTML ``<h1>``..``<h6>``), a directive or role
# argument (``.. confval:: name``, ``:param name:``), a definition-list term (a short
# line whose next line is indented deeper), a table's first cell (pipe tables with or
# without outer pipes, HTML ``<th>``/``<td>``/``<dt>``), or an item that opens with a literal or bold name followed
# by a colon or dash (``* ``times``: show durations``, ``- **name** - ...``).
_MD_NAME = re.compile(r"^\s{0,3}#{1,6}\s+(.+)$")
_HTML_DEF = re.compile(r"<(h[1-6]|dt|th)\b[^>]*>(.*?)</\1>", re.IGNORECASE | re.DOTALL)
_DIRECTIVE_ARG = re.compile(r"^\s*\.\.\s+[\w:.-]+::\s*(\S.*)$")
_FIELD = re.compile(r"^\s*:(?!:)([^:\n`]{1,80}):(?:\s|$)")
_LEAD_NAME = re.compile(
    r"^\s*(?:[*\-+•]\s+|\d{1,3}[.)]\s+)?(``?[^`\n]{1,80}``?|\*\*[^*\n]{1,80}\*\*)\s*(?:[:=\u2013\u2014-]|\(|$)"
)
_PIPE_ROW = re.compile(r"^\s*\|?\s*([^|\n]{1,80}?)\s*\|")
_UNDERLINE_CHARS = frozenset("=-~^\"'`#*+:.<>_")  # "" (no next line) is not in it
_LEAD_CHARS = frozenset("*-+•`")


@lru_cache(maxsize=16384)
def definitions(text: str) -> str:
    """The names ``text`` defines (see above), one per line: what a reader looks up."""
    lines = text.splitlines()
    out: list[str] = []
    table = False  # inside a pipe table whose rows need no outer pipes ("a | b")
    code: frozenset[int] | None = None  # the lines inside code fences, read when first needed
    for i, line in enumerate(lines):
        s = line.strip()
        if not s:
            table = False
        if not s or len(s) > 200:
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if "|" in s and not s.startswith("|") and (table or _TABLE_RULE.match(nxt)):
            table = True
            if not _TABLE_RULE.match(s):
                m = _PIPE_ROW.match(s)
                if m:
                    out.append(m.group(1))
            continue
        under = nxt.strip()
        # each pattern is tried only where its first character stands (most lines are prose)
        if (
            under[:1] in _UNDERLINE_CHARS
            and UNDERLINE.match(under)
            and not UNDERLINE.match(s)
            and len(under) >= len(s) - 2
        ):
            # no underline inside a code fence (a closing fence under a short code line)
            if code is None:
                code = _code_lines(text)
            if i + 1 not in code:
                out.append(s)
                continue
        first = s[0]
        m = None
        if first == "#":
            m = _MD_NAME.match(line)
        elif first == ".":
            m = _DIRECTIVE_ARG.match(line)
        elif first == ":":
            m = _FIELD.match(line)
        if m is None and (first in _LEAD_CHARS or first.isdigit()):
            m = _LEAD_NAME.match(line)
        if m:
            out.append(m.group(1))
            continue
        if s.startswith("|") and not set(s) <= set("|-+=: "):
            m = _PIPE_ROW.match(s[1:] if s.startswith("|") else s)
            if m:
                out.append(m.group(1))
            continue
        if (
            nxt.strip()
            and len(s) <= 80
            and indent(nxt) > indent(line)
            and not s.endswith((".", ",", ":", ";", "(", "{", "["))
            and not s.startswith(("..", "-", "*", "+", ">>>", "#"))
        ):
            out.append(s)  # a definition-list term
    out.extend(m.group(2) for m in _HTML_DEF.finditer(text))
    return "\n".join(out)


def _code_lines(text: str) -> frozenset[int]:
    """The numbers of the lines of ``text`` inside a code fence, its marker lines included
    (a MyST directive fence, ```` ```{note} ````, holds prose and is not code)."""
    spans = [(a, b) for a, b, info in _fences(text) if not info.startswith("{")]
    if not spans:
        return frozenset()
    out, at = set(), 0
    for i, line in enumerate(text.splitlines(keepends=True)):
        if any(a <= at < b for a, b in spans):
            out.add(i)
        at += len(line)
    return frozenset(out)


# --------------------------------------------------------------------------- blocks
_BLANK = re.compile(r"\n[ \t]*\n")
_MD_HEAD = re.compile(r"^\s{0,3}#{1,6}\s+\S")  # a Markdown heading block (up to 3 spaces in)
_HTML_HEAD = re.compile(r"^\s*<h[1-6]\b", re.IGNORECASE)
_SPLIT_LINES = 8  # a block of this many lines or more may be split at its shallowest lines
# a markup-only block: a directive line, a field, a bold quote ("> **Note**"), an alert ("[!NOTE]")
_MARK = re.compile(r"^\s*(?:\.\.\s+[\w:.-]+::|:[\w -]+:|>\s*\*\*|\[!\w+\]|(?:`{3,}|~{3,}|:{3,})\{[\w-]+\})")


def is_mark(text: str) -> bool:
    """``text`` is one line of markup alone (``.. code-block:: python``, ``:since: 2.1``,
    ``> **Note**``, ``[!NOTE]``): what it names is the kind of what follows, not content."""
    return "\n" not in text.strip() and bool(_MARK.match(text))


_MD_TITLE = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")
_LEAD_LINES = 12  # a heading further down than this does not name the chunk


def leading_heading(text: str) -> str | None:
    """The heading a text opens with (a reST title over its underline, with or without an
    overline, or a Markdown ``#`` line), after blank lines and markup alone (``.. _label:``,
    a directive line, an HTML comment); ``None`` when the text opens with anything else."""
    lines = text.lstrip("\ufeff").split("\n", _LEAD_LINES)[:_LEAD_LINES]
    i = 0
    while i < len(lines):
        s = lines[i].strip()
        if s.startswith(("```", "~~~")):
            return None  # a code fence
        overline = UNDERLINE.match(s) and i + 2 < len(lines) and lines[i + 2].strip() == s
        if not s or s.startswith(("..", "<!--")) or overline:
            i += 1
            continue
        md = _MD_TITLE.match(lines[i])
        if md is not None:
            return md.group(1).strip() or None
        below = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if UNDERLINE.match(below) and len(below) >= len(s) - 2 and len(s) <= HEADER_CHARS and not UNDERLINE.match(s):
            return s
        return None
    return None


def blocks(text: str) -> list[str]:
    """``text`` split at blank lines outside code fences (each block without its
    surrounding blank lines)."""
    return [p for a, b in _spans(text) if (p := text[a:b]).strip()]


def _spans(text: str) -> list[tuple[int, int]]:
    """The stretches of ``text`` between its :func:`_gaps` (blank ones included)."""
    spans, pos = [], 0
    for a, b in _gaps(text):
        spans.append((pos, a))
        pos = b
    spans.append((pos, len(text)))
    return spans


_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})(.*)$", re.MULTILINE)


def _adornment(text: str, start: int, end: int) -> bool:
    """The bare marker line ``text[start:end]`` is a reST title's adornment: right under a
    line of text (an underline), or over a title line with the same line under it."""
    above = text[text.rfind("\n", 0, start - 1) + 1 : start - 1] if start else ""
    below = text[end + 1 :].split("\n", 2)[:2]
    marker = text[start:end].strip()
    return bool(above.strip()) or (len(below) == 2 and bool(below[0].strip()) and below[1].strip() == marker)


def _fences(text: str) -> list[tuple[int, int, str]]:
    """The Markdown code fences of ``text`` (```` ``` ```` or ``~~~``, closed by a bare line
    of the same character at least as long, as CommonMark reads it; one left open runs to
    the end of the text): ``(start, end, info string)`` each. A bare marker line that adorns
    a reST title opens none."""
    if "```" not in text and "~~~" not in text:
        return []
    out: list[tuple[int, int, str]] = []
    opened: tuple[str, int, str] | None = None
    for m in _FENCE.finditer(text):
        marker, rest = m.group(1), m.group(2)
        if opened is None:
            if not rest.strip() and _adornment(text, m.start(), m.end()):
                continue  # a reST title's underline or overline (``~~~~``), not a fence
            opened = (marker, m.start(), rest.strip())
        elif marker[0] == opened[0][0] and len(marker) >= len(opened[0]) and not rest.strip():
            out.append((opened[1], m.end(), opened[2]))
            opened = None
    if opened is not None:
        out.append((opened[1], len(text), opened[2]))
    return out


def _gaps(text: str) -> list[tuple[int, int]]:
    """Where ``text`` splits into blocks: its runs of blank lines, except inside a Markdown
    code fence (:func:`_fences`). A fence is one block however many blank lines its code
    holds: half a fence kept alone would leave the rest of the context rendered as code."""
    gaps = [(m.start(), m.end()) for m in _BLANK.finditer(text)]
    if not gaps:
        return gaps
    inside = _fences(text)
    if not inside:
        return gaps
    return [g for g in gaps if not any(a < g[0] < b for a, b, _ in inside)]


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
    first = lines[0].lstrip() if lines else ""
    # a code fence, not a title over its underline (a bare ``~~~~`` line may be a reST overline)
    if not lines or first.startswith("```") or (first.startswith("~~~") and first.strip("~ \t")):
        return False
    if _MD_HEAD.match(lines[0]) or _HTML_HEAD.match(lines[0]):
        return len(lines) <= 2
    if len(lines) in (2, 3) and UNDERLINE.match(lines[-1].strip()) and not UNDERLINE.match(lines[-2].strip()):
        return len(lines[-1].strip()) >= len(lines[-2].strip()) - 2
    return False


@lru_cache(maxsize=8192)
def structure(text: str) -> tuple[Block, ...]:
    """The blocks of ``text`` with their owners, headings and first children."""
    raw: list[tuple[int, int, int, bool]] = []
    for start, stop in _spans(text):
        piece = text[start:stop]
        if not piece.strip():
            continue
        a = start + len(piece) - len(piece.lstrip("\n"))
        b = stop
        while b > a and text[b - 1].isspace():
            b -= 1
        raw.extend(_pieces(text, a, b))
    out: list[tuple[int, int, int, bool, int | None, int | None]] = []  # start, end, indent, heading?, owner, heading
    stack: list[int] = []  # indices of open owners, indents increasing
    heading: int | None = None
    firsts: dict[int, int] = {}
    for i, (a, b, ind, is_head) in enumerate(raw):
        if is_head:
            stack.clear()
            out.append((a, b, ind, True, None, heading))
            heading = i
            continue
        while stack and raw[stack[-1]][2] >= ind:
            stack.pop()
        owner = stack[-1] if stack else None
        if owner is not None:
            firsts.setdefault(owner, i)
        out.append((a, b, ind, False, owner, heading))
        stack.append(i)
    marks: dict[int, list[int]] = {}
    for i, (a, b, _, is_head, owner, h) in enumerate(out):
        if is_head or h is None or owner is not None:
            continue
        between = range(h + 1, i)
        if all(j in marks.get(h, ()) for j in between) and b - a <= HEADER_CHARS and _MARK.match(text[a:b]):
            marks.setdefault(h, []).append(i)
    labels: dict[int, int] = {}
    for i in range(1, len(out)):
        prev, blk = out[i - 1], out[i]
        if blk[3] or prev[3] or prev[2] != blk[2]:
            continue
        if firsts.get(i - 1) is None and _is_name(text[prev[0] : prev[1]]) and not _is_name(text[blk[0] : blk[1]]):
            labels[i] = i - 1
    values = {v: k for k, v in labels.items()}
    return tuple(
        _block(a, b, ind, is_head, owner, h, firsts.get(i), tuple(marks.get(i, ())), labels.get(i), values.get(i))
        for i, (a, b, ind, is_head, owner, h) in enumerate(out)
    )


#: a :class:`Block` under construction (:func:`~ctxassembly.twin.unfrozen_twin`)
_UnfrozenBlock = unfrozen_twin(Block)


def _block(  # noqa: PLR0917 - the fields in order, as the constructor takes them
    start: int,
    end: int,
    indent: int,
    is_heading: bool,
    owner: int | None,
    heading: int | None,
    first_child: int | None,
    marks: tuple[int, ...],
    label: int | None,
    value: int | None,
) -> Block:
    """``Block(...)``, each slot stored directly (a frozen dataclass's ``__init__`` goes
    through ``object.__setattr__`` per field: ~60 blocks a call at first sight)."""
    blk: Any = object.__new__(_UnfrozenBlock)
    blk.start = start
    blk.end = end
    blk.indent = indent
    blk.is_heading = is_heading
    blk.owner = owner
    blk.heading = heading
    blk.first_child = first_child
    blk.marks = marks
    blk.label = label
    blk.value = value
    blk.__class__ = Block
    built: Block = blk
    return built


def _pieces(text: str, a: int, b: int) -> list[tuple[int, int, int, bool]]:
    """The blank-line block ``text[a:b]`` as (start, end, indent, is heading) pieces: a
    pipe table of two rows or more by row, its header owning the rows (one indent deeper: a row goes with the
    names of its columns), a long nested block by :func:`_split_long`, else whole."""
    rows = _table_rows(text, a, b)
    if rows:
        base = indent(text[a:b].split("\n", 1)[0])
        return [(*rows[0], base, False), *((x, y, base + 1, False) for x, y in rows[1:])]
    return [(x, y, indent(text[x:y].split("\n", 1)[0]), _is_heading(text[x:y])) for x, y in _split_long(text, a, b)]


_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


def _table_rows(text: str, a: int, b: int) -> list[tuple[int, int]] | None:
    """A pipe table of two rows or more (a header line, a ``|---|---|`` rule, one line a
    row; outer pipes optional) as its header with the rule, then one span a row; ``None``
    for any other block. One row is the unit of a table: a reference table of options,
    however few its rows, is one blank-line block that no share of the budget may hold
    whole, and a cut must be able to keep the asked row under its header."""
    lines = text[a:b].split("\n")
    if len(lines) < 4 or not _TABLE_RULE.match(lines[1]) or "|" not in lines[0]:
        return None
    if not all("|" in ln for ln in lines[2:] if ln.strip()):
        return None
    out, pos = [], a
    for n, ln in enumerate(lines):
        if n >= 2 and ln.strip():
            out.append((pos, pos + len(ln)))
        pos += len(ln) + 1
    return [(a, a + len(lines[0]) + 1 + len(lines[1])), *out]


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
    indents = [indent(ln) for ln in body]
    if len(set(indents)) < 2 or sum(ln.lstrip().startswith(("|", "+-", "+=", "==")) for ln in body) > len(body) // 2:
        return [(a, b)]
    base = min(indents[1:]) if len(indents) > 1 else indents[0]
    out: list[tuple[int, int]] = []
    pos = a
    start = a
    for n, ln in enumerate(lines):
        ind = indent(ln)
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


#: a line break that wraps a paragraph: the line before holds a letter or a digit (it is no
#: underline) and its text does not start with a directive, a table row, a quote mark or a
#: heading mark; the next line goes on at the column the text of that line started in (past
#: its indent, its comment mark and its bullet; a comment goes on behind the same mark),
#: with a word, not with a bullet, a directive, a table row or a quote mark. A break that
#: wraps a sentence also follows a word, not final punctuation or a colon.
_LINE_LEAD = re.compile(r"([ \t]*)((?:#+|//|--)[ \t]*)?((?:[-*+•]|\d{1,3}[.)])[ \t]+)?")
_GOES_ON = re.compile(r"([ \t]*)((?:#+|//|--)[ \t]*)?(?!\d{1,3}[.)](?:\s|$))[\w`(\"']")
_LETTER = re.compile(r"[^\W_]")
_NOT_TEXT = frozenset(" \t.|>#<")


def unwrapped(text: str, *, sentences: bool = True) -> str:
    """``text`` with the line breaks that only wrap a sentence read as spaces, position for
    position: "… must answer that\\n    Acme enforces …" is one clause, as it is written on
    one line. ``sentences=False``: every line break that wraps a paragraph, after a
    sentence's end too (a wrapped paragraph reads as one line)."""
    if "\n" not in text:
        return text
    lines = text.split("\n")
    joined = []
    for i, line in enumerate(lines[:-1]):
        body = line.rstrip(" \t")
        if not body or (sentences and not (body[-1].isalnum() or body[-1] in "_,)`'\"]")):
            continue
        after = _GOES_ON.match(lines[i + 1])
        if after is None:
            continue
        lead = _LINE_LEAD.match(line)
        at = lead.end()  # type: ignore[union-attr]  # (it matches the empty string)
        if line[at : at + 1] in _NOT_TEXT or _LETTER.search(line, at) is None:
            continue  # (a line of spaces, a directive, a table row, a quote, a heading; an underline)
        indent, mark, bullet = (lead.group(k) or "" for k in (1, 2, 3))  # type: ignore[union-attr]
        next_indent, next_mark = after.group(1), after.group(2) or ""
        if mark.strip() != next_mark.strip() or (mark and len(indent) != len(next_indent)):
            continue  # a comment goes on behind the same mark
        if len(indent) + len(mark) + len(bullet) == len(next_indent) + len(next_mark):
            joined.append(i)
    if not joined:
        return text
    ends = ["\n"] * (len(lines) - 1) + [""]
    for i in joined:
        ends[i] = " "
    return "".join(line + end for line, end in zip(lines, ends, strict=True))
