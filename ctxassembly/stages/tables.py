"""Tables stage: a long table inside a chunk keeps its header and the rows the question needs.

Recognised tables (:func:`find_tables`): Markdown pipe tables (header, ``|---|`` rule,
rows), reStructuredText grid tables (``+----+`` borders; the header ends at the ``+====+``
rule, else the first row is the header), reStructuredText simple tables (``====  ====``
borders; a body line whose first column is blank continues the row above) and HTML-ish
``<table>`` markup (``<thead>``/``<th>`` rows are the header).

Rows are scored with BM25 against the question (document frequencies over the table's
rows, so a word every row shares weighs little). A table with more than ``min_rows``
body rows keeps its header (with the units it states: the header is never dropped),
its borders, and the rows that match; each run of left-out rows is replaced by one
``gap_marker`` line. A table with no matching row is left whole: nothing says which row
matters. Text outside tables is untouched, and every kept line is verbatim.

Like extract, only chunks larger than ``extract_share`` of the budget are touched.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, replace

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.pipeline import StageBase
from ctxassembly.stages.base import Context
from ctxassembly.text import Lexical

__all__ = ["Table", "Tables", "find_tables"]


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


def _lines(text: str) -> tuple[list[str], list[int]]:
    lines = text.splitlines(keepends=True)
    offs = [0]
    for ln in lines:
        offs.append(offs[-1] + len(ln))
    return lines, offs


def _end(text: str, pos: int) -> int:
    while pos > 0 and text[pos - 1] in "\r\n":
        pos -= 1
    return pos


def find_tables(text: str) -> list[Table]:
    """Every table in ``text``, in order (see the module docstring for the formats)."""
    found: list[Table] = []
    lines, offs = _lines(text)
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


class Tables(StageBase):
    """Shorten long tables to their header plus the rows that match the question.

    :param extract_share: only chunks larger than this fraction of the budget are touched.
    :param min_tokens: chunks at or below this many tokens are never touched.
    :param min_rows: tables with at most this many body rows stay whole.
    :param max_rows: keep at most this many matching rows (best BM25 first).
    :param gap_marker: the line that stands where rows were left out.
    :raises ConfigError: a share outside (0, 1] or a row count below 1.
    """

    name = "tables"

    def __init__(
        self,
        *,
        extract_share: float = 0.25,
        min_tokens: int = 60,
        min_rows: int = 4,
        max_rows: int = 5,
        gap_marker: str = "[…]",
    ) -> None:
        if not 0 < extract_share <= 1:
            raise ConfigError(f"extract_share must be in (0, 1], got {extract_share!r}")
        if min_rows < 1 or max_rows < 1:
            raise ConfigError(f"min_rows and max_rows must be >= 1, got {min_rows!r} and {max_rows!r}")
        self.max_share = extract_share
        self.min_tokens = min_tokens
        self.min_rows = min_rows
        self.max_rows = max_rows
        self.gap_marker = gap_marker

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        cap = max(self.min_tokens, int(ctx.budget * self.max_share))
        out = list(chunks)
        for i, c in enumerate(chunks):
            if "|" not in c.text and "+" not in c.text and "==" not in c.text and "<t" not in c.text.lower():
                continue
            if ctx.count_tokens(c.text) <= cap:
                continue
            text = self.compress(c.text, ctx.question)
            if text != c.text:
                ctx.report.note(
                    self.name,
                    "table_rows_dropped",
                    id=c.id,
                    index=c.index,
                    tokens_before=ctx.count_tokens(c.text),
                    tokens_after=ctx.count_tokens(text),
                )
                out[i] = replace(
                    c, text=text, start=None, end=None, meta=c.meta.updated(tables=True, source_span=(c.start, c.end))
                )
        return out

    def compress(self, text: str, question: str) -> str:
        """``text`` with each long table cut to header + matching rows (verbatim lines)."""
        pieces: list[str] = []
        pos = 0
        for t in find_tables(text):
            if len(t.rows) <= self.min_rows:
                continue
            scores = Lexical([text[a:b] for a, b in t.rows]).scores(question)
            best = sorted((j for j, s in enumerate(scores) if s > 0), key=lambda j: (-scores[j], j))[: self.max_rows]
            if not best:
                continue
            keep = sorted(best)
            pieces.append(text[pos : t.head_end])
            prev = -1
            for j in keep:
                if j != prev + 1:
                    pieces.append("\n" + self.gap_marker)
                pieces.append("\n" + text[t.rows[j][0] : t.rows[j][1]])
                prev = j
            if prev != len(t.rows) - 1:
                pieces.append("\n" + self.gap_marker)
            tail = text[t.tail_start : t.end]
            if tail:
                pieces.append(tail if tail.startswith("\n") else "\n" + tail)
            pos = t.end
        if not pieces:
            return text
        pieces.append(text[pos:])
        return "".join(pieces)
