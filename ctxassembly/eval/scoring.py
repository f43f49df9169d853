"""Scoring a reader's answer: does it contain the answer, which passages does it cite.

:func:`contains_answer` compares normalised text: NFKC, case-folded, quotes, backticks
and markup asterisks removed, every run of whitespace or punctuation between words made
one space, and a thousands separator between digits dropped (``870,000`` = ``870000``
= ``870 000``), so that "BLUE-42" matches "blue 42." and "``div.html``" matches
"div.html". Decimal points stay, so ``5.1`` does not match ``51``.

:func:`parse_citations` finds the passage ids a reply cites: ``[doc-id]``,
``[a, b]``, ``[E3]`` (evidence numbers), ``id="..."`` / ``id='...'``, ``(id: x)`` and
``source: x``. Given the ids that were in the context, it keeps only those (so "[1]"
in a list or "[sic]" is not a citation) and resolves ``[E3]`` / ``[3]`` to the third
passage.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

__all__ = ["contains_answer", "normalize_answer", "parse_citations"]

_THOUSANDS = re.compile(r"(?<=\d)[,\u202f\u00a0 _](?=\d{3}\b)")
_MARKUP = re.compile(r"[`*\"'“”‘’«»]")
_SEP = re.compile(r"[^\w.]+|\.(?!\d)|(?<!\d)\.")


def normalize_answer(text: str) -> str:
    """The comparison key for containment (see the module docstring)."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _THOUSANDS.sub("", text)
    text = _MARKUP.sub("", text)
    return " ".join(_SEP.sub(" ", text).split())


def contains_answer(response: str, answers: Iterable[str], *, require: str = "all") -> bool | None:
    """Whether ``response`` contains the answer strings (``require``: ``all`` or ``any``),
    compared as whole words after :func:`normalize_answer`. ``None`` when there are no
    answer strings to look for.

    :raises ValueError: ``require`` not ``all`` or ``any``.
    """
    if require not in ("all", "any"):
        raise ValueError(f"require must be 'all' or 'any', got {require!r}")
    keys = [normalize_answer(a) for a in answers]
    keys = [k for k in keys if k]
    if not keys:
        return None
    hay = f" {normalize_answer(response)} "
    hits = [f" {k} " in hay for k in keys]
    return all(hits) if require == "all" else any(hits)


_BRACKET = re.compile(r"\[([^\[\]\n]{1,200})\]")
_ATTR = re.compile(r"""\bid\s*=\s*["']([^"'\n]{1,200})["']""", re.IGNORECASE)
_LABELLED = re.compile(
    r"(?:\(\s*(?:id|source|doc(?:ument)?)\s*:\s*([^()\n]{1,200})\)"
    r"|\b(?:source|doc(?:ument)? id)\s*:\s*([\w.:/#-]+))",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"^(?:E|doc(?:ument)?\s*|passage\s*)?(\d{1,4})$", re.IGNORECASE)


def parse_citations(response: str, ids: Sequence[str] | None = None) -> list[str]:
    """The cited passage ids, in order of first mention, each once.

    With ``ids`` (the context's passage ids in order), only those are returned, and a
    bare number or ``E<n>`` resolves to the n-th passage (1-based). Without ``ids``,
    every bracketed or ``id="..."`` token is returned as written.
    """
    found: list[tuple[int, str]] = []
    for m in _BRACKET.finditer(response):
        for part in re.split(r"[,;]|\band\b", m.group(1)):
            token = part.strip().strip("\"'`").removeprefix("id=").removeprefix("id:").strip().strip("\"'")
            if token:
                found.append((m.start(), token))
    for m in _ATTR.finditer(response):
        found.append((m.start(), m.group(1).strip()))
    for m in _LABELLED.finditer(response):
        token = (m.group(1) or m.group(2) or "").strip().rstrip(".,;")
        for part in token.split(","):
            if part.strip():
                found.append((m.start(), part.strip()))
    found.sort(key=lambda t: t[0])
    out: list[str] = []
    known = None if ids is None else {i.casefold(): i for i in ids}
    for _, token in found:
        resolved: str | None = token
        if known is not None and ids is not None:
            resolved = known.get(token.casefold())
            num = _NUMBER.match(token)
            if resolved is None and num and 1 <= int(num.group(1)) <= len(ids):
                resolved = ids[int(num.group(1)) - 1]
        if resolved is not None and resolved not in out:
            out.append(resolved)
    return out
