"""What a unit of text needs beside it to be read correctly.

- its **structure**: the heading of its section, the directive it sits in
  (``.. deprecated:: 5.0``), the sentence that leads into its list or code block;
- its **neighbours** in the same section: the previous sentence of its paragraph when it
  opens with a back-reference ("This", "However"), the next one when that opens with
  one, and any adjacent sentence or item that states a condition
  (:func:`carries_condition`: a negation, "only", "must", a default, a bound, a number
  with a unit, a version or a date).

The extract stage and the LLM extraction stage keep a unit with these
(:func:`dependencies`), so that a kept sentence does not lose the condition it is under.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ctxassembly.text.segments import Unit

__all__ = ["carries_condition", "dependencies"]

_CONDITION = re.compile(
    r"\b(?:not|no|never|none|cannot|can't|don't|doesn't|isn't|aren't|won't|without|unless|except|only|must|"
    r"should|required?|deprecated|removed|no longer|default(?:s|ed)?|at (?:least|most)|minimum|maximum|"
    r"before|after|until|since)\b"
    r"|\b\d+(?:[.,]\d+)*\s?(?:%|[kmgt]i?b|bytes?|ms|s|seconds?|minutes?|hours?|days?|weeks?|years?|chars?|characters?)\b"
    r"|\b(?:in|of) (?:milli)?(?:seconds|minutes|hours|days|bytes|characters|tokens)\b"
    r"|\b\d+\.\d+(?:\.\d+)*\b"
    r"|\b\d{4}-\d{2}-\d{2}\b",
    re.IGNORECASE,
)
_NEIGHBOUR_CHARS = 240  # a neighbouring condition longer than this is a topic of its own
_BACKREF = re.compile(
    r"^(?:this|that|these|those|it|its|they|such|however|otherwise|instead|also|then|in (?:that|this) case|"
    r"for (?:example|instance)|in addition|as a result|therefore|note)\b",
    re.IGNORECASE,
)


def carries_condition(text: str) -> bool:
    """True when ``text`` states a condition a neighbouring sentence may depend on: a negation,
    "only", "must", a default, a bound, a number with a unit, a version or a date."""
    return bool(_CONDITION.search(text))


def dependencies(text: str, units: Sequence[Unit], j: int, *, neighbours: bool = True) -> list[int]:
    """Units that unit ``j`` needs to be read correctly (see the module docstring).

    Structural ones (heading, directive, lead-in) always; with ``neighbours``, also the
    adjacent sentences of the same section that state a condition or that the unit
    refers back to.
    """
    u = units[j]
    deps = [x for x in (u.heading, u.parent, u.lead) if x is not None]
    if neighbours and u.kind in ("sentence", "item"):
        own = text[u.start : u.end]
        for n in (j - 1, j + 1):
            if not 0 <= n < len(units):
                continue
            v = units[n]
            if v.kind not in ("sentence", "item") or (v.heading, v.parent) != (u.heading, u.parent):
                continue
            other = text[v.start : v.end]
            if (
                (n < j and _BACKREF.match(own) and v.para == u.para)
                or (n > j and _BACKREF.match(other) and v.para == u.para)
                or (carries_condition(other) and len(other) <= _NEIGHBOUR_CHARS)
            ):
                deps.append(n)
    return deps
