"""Tables stage: a long table inside a chunk keeps its header and the rows the question needs.

Recognised tables (:func:`ctxassembly.text.tables.find_tables`): Markdown pipe tables (header, ``|---|`` rule,
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

from dataclasses import replace

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.pipeline import Context, StageBase
from ctxassembly.text.lexical import Lexical
from ctxassembly.text.tables import find_tables

__all__ = ["Tables"]


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
    reads = frozenset({"cut"})
    writes = frozenset({"cut"})

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
        self.extract_share = extract_share
        self.min_tokens = min_tokens
        self.min_rows = min_rows
        self.max_rows = max_rows
        self.gap_marker = gap_marker

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        cap = max(self.min_tokens, int(ctx.budget * self.extract_share))
        out = list(chunks)
        for i, c in enumerate(chunks):
            if "|" not in c.text and "+" not in c.text and "==" not in c.text and "<t" not in c.text.lower():
                continue
            if ctx.count_tokens(c.text) <= cap:
                continue
            text = self.compress(c.text, ctx.question)
            if text != c.text:
                ctx.note_cut(self.name, "table_rows_dropped", c, text)
                ctx.ledger.cut(c, "tables")
                out[i] = replace(c, text=text, start=None, end=None)
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
