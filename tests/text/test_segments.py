"""segment(): the units of a text that are never cut, and how they link."""

from __future__ import annotations

import itertools

import pytest

from ctxassembly.text.segments import segment
from tests.samples import RST

pytestmark = pytest.mark.unit


def kinds(text):
    return [(u.kind, text[u.start : u.end]) for u in segment(text)]


def test_segment_keeps_items_code_and_tables_whole():
    got = kinds(RST)
    assert ("heading", "Caching\n=======") in got
    assert ("item", "#. Add it to ``CACHES`` and set\n   ``TIMEOUT`` to 300 seconds.") in got
    assert ("code", '    CACHES = {\n        "default": {"LOCATION": "127.0.0.1:11211"},\n    }') in got
    assert ("code", '```\nfenced = "code"\n\nstill fenced\n```') in got
    assert ("table", "| Backend | Max key (chars) |\n|---|---|\n| memcached | 250 |") in got
    assert ("directive", ".. versionchanged:: 5.1") in got
    assert ("sentence", "The cache key may be at most 250 characters long.") in got


def test_segment_links_structure():
    units = segment(RST)
    by_text = {RST[u.start : u.end]: (i, u) for i, u in enumerate(units)}
    _, item = by_text["#. Install the backend with pip."]
    assert RST[units[item.lead].start : units[item.lead].end] == "To enable the cache, follow these steps:"
    _, inner = by_text["The location may only be a socket path on Linux."]
    assert RST[units[inner.parent].start : units[inner.parent].end] == ".. versionchanged:: 5.1"
    assert units[inner.heading].kind == "heading"


def test_segment_covers_the_text_in_order():
    units = segment(RST)
    assert all(a.end <= b.start for a, b in itertools.pairwise(units))
    assert "".join(RST[u.start : u.end] for u in units).replace(" ", "").replace("\n", "") == RST.replace(
        " ", ""
    ).replace("\n", "")


def test_a_code_directive_is_one_code_unit_with_its_body():
    text = "Run this:\n\n.. code-block:: python\n   :caption: demo\n\n    x = 1\n\n    y = 2\n\nAfter."
    got = kinds(text)
    assert ("code", ".. code-block:: python\n   :caption: demo\n\n    x = 1\n\n    y = 2") in got
    assert got[-1] == ("sentence", "After.")


def test_a_directive_header_takes_its_option_lines_and_owns_its_body():
    text = ".. deprecated:: 5.0\n   :since: 4.2\n\n   Use the new API. It is faster.\n"
    units = segment(text)
    assert (units[0].kind, text[units[0].start : units[0].end]) == ("directive", ".. deprecated:: 5.0\n   :since: 4.2")
    assert [u.parent for u in units[1:]] == [0, 0]


def test_a_long_item_is_its_first_block_and_owns_the_units_of_its_continuation():
    more = " ".join(f"Sentence {i} of the continuation goes on about the option." for i in range(8))
    text = f"Intro:\n\n* ``--fast``: skip the slow checks.\n\n  {more}\n\n* ``--slow``: run them.\n"
    units = segment(text)
    texts = [text[u.start : u.end] for u in units]
    item = texts.index("* ``--fast``: skip the slow checks.")
    inner = [j for j, u in enumerate(units) if u.parent == item]
    assert len(inner) == 8
    assert all(units[j].kind == "sentence" for j in inner)
    assert units[item].lead == texts.index("Intro:")
    assert texts[-1] == "* ``--slow``: run them."
