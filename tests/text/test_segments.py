"""segment(): the units of a text that are never cut, and how they link."""

from __future__ import annotations

import itertools

import pytest

from ctxassembly.text.segments import segment

pytestmark = pytest.mark.unit

FILLER = " ".join(f"Sentence {w} talks about templates and widgets at some length." for w in "abcdefghij")

RST = f"""Caching
=======

{FILLER}

The cache key may be at most 250 characters long. It is not checked on Windows.
{FILLER}

To enable the cache, follow these steps:

#. Install the backend with pip.
#. Add it to ``CACHES`` and set
   ``TIMEOUT`` to 300 seconds.

Then configure the location::

    CACHES = {{
        "default": {{"LOCATION": "127.0.0.1:11211"}},
    }}

.. versionchanged:: 5.1

    The location may only be a socket path on Linux.

```
fenced = "code"

still fenced
```

| Backend | Max key (chars) |
|---|---|
| memcached | 250 |
"""


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
