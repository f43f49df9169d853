"""Sentence boundaries inside one prose paragraph (pysbd, offsets into the paragraph)."""

from __future__ import annotations

import re
from functools import lru_cache

from ctxassembly.errors import MissingExtraError

__all__ = ["segmenter", "sentences"]

# a sentence end followed by the start of another: without one, a paragraph is one sentence
_BOUNDARY = re.compile(r"[.!?][\"')\]`*]*\s+[\"'(\[`*]*[A-Z0-9:]")


@lru_cache(maxsize=1)
def segmenter() -> object:
    """The pysbd sentence segmenter (English, character spans), loaded once.

    :raises MissingExtraError: pysbd is not installed.
    """
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
    for span in segmenter().segment(flat):  # type: ignore[attr-defined]
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
