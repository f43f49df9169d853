"""A text cut into the units that are never split: headings (with their underline), prose
sentences (inside one paragraph), whole list items, whole code blocks (``::`` literal
blocks, indented blocks, fences, code directives), whole tables and directive headers.

Each unit knows its section heading, its enclosing directive and the sentence that leads
into it: what a unit needs to be read correctly (:mod:`ctxassembly.text.cues`). The
extract stage and the LLM stages keep or leave out these units whole.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ctxassembly.text.sentences import sentences
from ctxassembly.text.structure import UNDERLINE, indent, lines_with_offsets
from ctxassembly.text.tables import find_tables

__all__ = ["Unit", "segment"]


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


_MD_HEADING = re.compile(r"^#{1,6}\s+\S")  # a Markdown heading at the line start
_ITEM = re.compile(r"^(\s*)(?:[*\-+•]|#\.|\(?(?:\d{1,3}|[a-zA-Z])[.)]|:[^:\s][^:]*:)\s+\S")
_DIRECTIVE = re.compile(r"^(\s*)\.\.\s+([\w:.-]+)::")
_CODE_DIRECTIVES = frozenset(
    {"code-block", "code", "sourcecode", "literalinclude", "parsed-literal", "console", "highlight"}
)
_LONG_ITEM = 300  # characters of content after its first block that make an item worth splitting
_FENCE = re.compile(r"^(\s*)(```+|~~~+)")


@lru_cache(maxsize=8192)
def segment(text: str) -> tuple[Unit, ...]:  # noqa: PLR0915 - one line scanner; its branches read in order
    """Cut ``text`` (reStructuredText, Markdown or plain) into units that are never split.

    :raises MissingExtraError: pysbd is not installed.
    """
    lines, offs = lines_with_offsets(text)
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
                if indent(lines[j]) <= base:
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
        ind = indent(line)
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
            bool(UNDERLINE.match(nxt.strip()))
            and len(nxt.strip()) >= len(line.strip())
            and not UNDERLINE.match(line.strip())
        )
        is_overline = (
            bool(UNDERLINE.match(line.strip())) and i + 2 < len(lines) and lines[i + 2].strip() == line.strip()
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
            while j < len(lines) and lines[j].strip().startswith(":") and indent(lines[j]) > ind:
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
            while end < len(lines) and lines[end].strip() and not _ITEM.match(lines[end]) and indent(lines[end]) > ind:
                end += 1
            # continuation paragraphs of the item: indented more than its marker, after blank lines
            first_end = end
            end = max(end, block_end(end, ind))
            lead = lead_of() if units and units[-1].kind != "item" else (units[-1].lead if units else None)
            if offs[end] - offs[first_end] > _LONG_ITEM:
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
            if end + 1 < len(lines) and UNDERLINE.match(lines[end + 1].strip()):
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
