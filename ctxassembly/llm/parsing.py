"""Reading what small models reply: lenient JSON and verbatim location.

* :func:`parse_json` reads what small models actually return: JSON wrapped in prose or
  code fences, single quotes, trailing commas.
* :func:`locate` finds a sentence in a source text after whitespace normalisation and
  returns its offsets in the *original* text, so what is kept is a slice of the source,
  never the model's copy.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

__all__ = ["locate", "parse_json"]

# -- lenient JSON ------------------------------------------------------------------------
_FENCE = re.compile(r"```[a-zA-Z]*\s*(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([\]}])")


def parse_json(reply: str) -> Any:
    """The first JSON object (else array) in ``reply``, or ``None``.

    Tolerates prose around it, code fences, single-quoted Python-style literals and
    trailing commas: small models produce all of these.
    """
    texts = [m.group(1) for m in _FENCE.finditer(reply)] + [reply]
    for opener in "{[":
        for text in texts:
            for m in re.finditer(re.escape(opener), text):
                value = _decode_at(text, m.start())
                if value is not None:
                    return value
    return None


def _decode_at(text: str, pos: int) -> Any:
    decoder = json.JSONDecoder()
    candidate = text[pos:]
    for attempt in (candidate, _TRAILING_COMMA.sub(r"\1", candidate)):
        try:
            return decoder.raw_decode(attempt)[0]
        except json.JSONDecodeError:
            continue
    # Python-literal style ({'a': ['b']}): cut at the matching bracket, then literal_eval
    end = _matching(candidate)
    if end is not None:
        try:
            return ast.literal_eval(_TRAILING_COMMA.sub(r"\1", candidate[:end]))
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
    return None


def _matching(text: str) -> int | None:
    depth, quote, escaped = 0, "", False
    for i, ch in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


# -- verbatim location ---------------------------------------------------------------------
_WS = re.compile(r"\s+")


def _squashed(text: str) -> tuple[str, list[int]]:
    """``text`` with whitespace runs as one space, and for each kept character its offset."""
    out: list[str] = []
    where: list[int] = []
    for m in re.finditer(r"\S+|\s+", text):
        if m.group(0)[0].isspace():
            if out:
                out.append(" ")
                where.append(m.start())
        else:
            out.extend(m.group(0))
            where.extend(range(m.start(), m.end()))
    if out and out[-1] == " ":
        out.pop()
        where.pop()
    return "".join(out), where


def locate(sentence: str, source: str, *, min_chars: int = 12) -> tuple[int, int] | None:
    """``(start, end)`` of ``sentence`` in ``source`` when it occurs verbatim after
    whitespace normalisation (case, punctuation and every other character exact); else
    ``None``. A piece shorter than ``min_chars`` (after normalisation) never matches:
    "the" occurs everywhere and proves nothing."""
    needle = _WS.sub(" ", sentence).strip()
    if len(needle) < min_chars:
        return None
    flat, where = _squashed(source)
    pos = flat.find(needle)
    if pos < 0:
        return None
    return where[pos], where[pos + len(needle) - 1] + 1
