"""Tables stage: header always kept, matching rows kept, verbatim lines, all formats."""

from __future__ import annotations

import pytest

from ctxassembly.errors import ConfigError
from ctxassembly.stages.tables import Tables
from ctxassembly.text.tables import find_tables
from tests.conftest import chunks, context

pytestmark = pytest.mark.unit

ROWS = ["alpha", "beta", "gamma", "redis", "delta", "epsilon"]

MARKDOWN = "| Backend | Limit (ms) |\n|---|---|\n" + "\n".join(f"| {n} | {i} |" for i, n in enumerate(ROWS))
GRID = "+--------+--------+\n| Name   | Size   |\n+========+========+\n" + "".join(
    f"| {n:<6} | {i} KB   |\n+--------+--------+\n" for i, n in enumerate(ROWS)
)
SIMPLE = (
    "=======  =====\nName     Value\n=======  =====\n"
    + "".join(f"{n:<7}  {i}\n" + ("         more\n" if n == "redis" else "") for i, n in enumerate(ROWS))
    + "=======  =====\n"
)
HTML = (
    "<table><thead><tr><th>Name</th><th>Size (MB)</th></tr></thead>\n"
    + "".join(f"<tr><td>{n}</td><td>{i}</td></tr>\n" for i, n in enumerate(ROWS))
    + "</table>"
)

HEADERS = {
    "markdown": ["| Backend | Limit (ms) |", "|---|---|"],
    "grid": ["| Name   | Size   |", "+========+========+"],
    "simple": ["Name     Value"],
    "html": ["<th>Size (MB)</th>"],
}


@pytest.mark.parametrize(
    ("kind", "table"), [("markdown", MARKDOWN), ("grid", GRID), ("simple", SIMPLE), ("html", HTML)]
)
def test_header_and_matching_rows_kept_verbatim(kind, table):
    (t,) = find_tables(table)
    assert t.kind == kind
    assert len(t.rows) == len(ROWS)
    out = Tables().compress(table, "What is the redis limit?")
    for h in HEADERS[kind]:
        assert h in out
    assert "redis" in out
    assert "epsilon" not in out
    assert "alpha" not in out
    assert "[…]" in out
    for line in out.splitlines():
        assert line == "[…]" or line in table
    if kind == "simple":
        assert "redis    3\n         more" in out  # a continuation line stays with its row


def test_no_matching_row_leaves_the_table_whole():
    assert Tables().compress(MARKDOWN, "unrelated question") == MARKDOWN


def test_small_tables_stay_whole():
    small = "| a | b |\n|---|---|\n| redis | 1 |\n| x | 2 |"
    assert Tables().compress(small, "redis") == small


def test_text_around_the_table_is_untouched():
    text = f"Before the table.\n\n{MARKDOWN}\n\nAfter the table."
    out = Tables().compress(text, "redis")
    assert out.startswith("Before the table.\n\n| Backend")
    assert out.endswith("\n\nAfter the table.")


def test_stage_touches_only_large_chunks_and_notes_it():
    filler = "Some words about caching backends. " * 40
    ctx = context("redis limit", budget=400)
    cs = chunks(("big", filler + "\n\n" + MARKDOWN), ("small", MARKDOWN))
    out = Tables().run(cs, ctx)
    assert "epsilon" not in out[0].text
    assert ctx.ledger[out[0].index].cut.by == ("tables",)
    assert out[1] is cs[1]
    assert ctx.report.notes[0]["event"] == "table_rows_dropped"


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"extract_share": 2}, "extract_share must be in"), ({"min_rows": 0}, "min_rows and max_rows must be >= 1")],
)
def test_bad_options(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        Tables(**kwargs)
