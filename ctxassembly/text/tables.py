"""Where the tables of a text are, and which lines are their header, rows and closing border.

Recognised tables (:func:`find_tables`): Markdown pipe tables (header, ``|---|`` rule,
rows), reStructuredText grid tables (``+----+`` borders; the header ends at the ``+====+``
rule, else the first row is the header), reStructuredText simple tables (``====  ====``
borders; a body line whose first column is blank continues the row above) and HTML-ish
``<table>`` markup (``<thead>``/``<th>`` rows are the header).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from ctxassembly.text.structure import lines_with_offsets

__all__ = ["Table", "find_tables"]


@dataclass(frozen=True, slots=True)
class Table:
    """Offsets of one table in a text: ``head`` is ``[start, head_end)`` (top border,
    header, header rule), ``rows`` the body rows (each with its own trailing border line
    for grid tables), ``tail`` is ``[tail_start, end)`` (closing border or ``</table>``)."""

    start: int
    end: int
    head_end: int
    rows: tuple[tuple[int, int], ...]
    tail_start: int
    kind: str


_MD_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)+\|?\s*$|^\s*\|\s*:?-{3,}:?\s*\|\s*$")
_GRID_BORDER = re.compile(r"^\s*\+(?:[-=]+\+)+\s*$")
_SIMPLE_BORDER = re.compile(r"^\s*=+(?:\s+=+)+\s*$")
_HTML_TABLE = re.compile(r"<table\b.*?</table\s*>", re.IGNORECASE | re.DOTALL)
_HTML_ROW = re.compile(r"<tr\b.*?</tr\s*>", re.IGNORECASE | re.DOTALL)


def _end(text: str, pos: int) -> int:
    while pos > 0 and text[pos - 1] in "\r\n":
        pos -= 1
    return pos


def find_tables(text: str) -> list[Table]:
    """Every table in ``text``, in order (see the module docstring for the formats)."""
    found: list[Table] = []
    lines, offs = lines_with_offsets(text)
    i = 0
    while i < len(lines):
        line = lines[i]
        if _GRID_BORDER.match(line):
            t, i = _grid(text, lines, offs, i)
            found.extend(t)
            continue
        if _SIMPLE_BORDER.match(line):
            t, i = _simple(text, lines, offs, i)
            found.extend(t)
            continue
        if "|" in line and i + 1 < len(lines) and _MD_RULE.match(lines[i + 1]):
            j = i + 2
            rows = []
            while j < len(lines) and "|" in lines[j] and lines[j].strip():
                rows.append((offs[j], _end(text, offs[j + 1])))
                j += 1
            end = _end(text, offs[j])
            found.append(Table(offs[i], end, _end(text, offs[i + 2]), tuple(rows), end, "markdown"))
            i = j
            continue
        i += 1
    for m in _HTML_TABLE.finditer(text):
        rows = [(m.start() + r.start(), m.start() + r.end()) for r in _HTML_ROW.finditer(m.group(0))]
        if not rows:
            continue
        head = [r for r in rows if re.search(r"<th\b", text[r[0] : r[1]], re.IGNORECASE)]
        thead = re.search(r"</thead\s*>", m.group(0), re.IGNORECASE)
        head_end = m.start() + thead.end() if thead else (head[-1][1] if head and head[0] == rows[0] else rows[0][0])
        body = tuple(r for r in rows if r[0] >= head_end)
        tail_start = body[-1][1] if body else head_end
        found.append(Table(m.start(), m.end(), head_end, body, tail_start, "html"))
    return sorted(found, key=lambda t: t.start)


def _grid(text: str, lines: list[str], offs: list[int], i: int) -> tuple[list[Table], int]:
    j = i + 1
    borders = [i]
    while j < len(lines) and lines[j].strip() and (lines[j].lstrip().startswith(("|", "+"))):
        if _GRID_BORDER.match(lines[j]):
            borders.append(j)
        j += 1
    if len(borders) < 2:
        return [], i + 1
    last = borders[-1]
    header_rule = next((b for b in borders[1:] if "=" in lines[b]), borders[1])
    rows = []
    for a, b in itertools.pairwise(borders):
        if a >= header_rule:
            rows.append((offs[a + 1], _end(text, offs[b + 1])))  # the row and its closing border
    return [
        Table(
            offs[i],
            _end(text, offs[last + 1]),
            _end(text, offs[header_rule + 1]),
            tuple(rows),
            _end(text, offs[last + 1]),
            "grid",
        )
    ], last + 1


def _simple(text: str, lines: list[str], offs: list[int], i: int) -> tuple[list[Table], int]:
    j = i + 1
    borders = [i]
    while j < len(lines):
        if _SIMPLE_BORDER.match(lines[j]):
            borders.append(j)
            if len(borders) == 3 or (j + 1 < len(lines) and not lines[j + 1].strip()):
                break
        j += 1
    if len(borders) < 2:
        return [], i + 1
    if len(borders) == 3:
        head_end, body_first, close = borders[1], borders[1] + 1, borders[2]
    else:  # no header: the first row stands as the header
        head_end, body_first, close = i + 1, i + 2, borders[1]
    indent = len(lines[i]) - len(lines[i].lstrip())
    rows: list[list[int]] = []
    for k in range(body_first, close):
        ln = lines[k]
        if not ln.strip():
            continue
        continued = len(ln) - len(ln.lstrip()) > indent and rows
        if continued:
            rows[-1][1] = _end(text, offs[k + 1])
        else:
            rows.append([offs[k], _end(text, offs[k + 1])])
    end = _end(text, offs[close + 1])
    return [
        Table(offs[i], end, _end(text, offs[head_end + 1]), tuple((a, b) for a, b in rows), offs[close], "simple")
    ], close + 1
