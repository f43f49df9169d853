"""Every closed set of the library, in one place: options, stages, the report and the
docs all read them from here.

Option values are ``Literal`` types (what a caller types, checked by mypy) with their
tuple of valid values taken from the type itself, so the two cannot drift. What a stage
*records* (a fate's :class:`Reason`, a chunk's version :class:`Status`, where its
version came from) are ``str``-valued enums: they compare equal to their strings and
JSON output shows the same strings as before.
"""

from __future__ import annotations

from enum import Enum
from typing import Literal, get_args

from ctxassembly.errors import ConfigError

__all__ = [
    "ABSENT_POLICIES",
    "FORMATS",
    "LATEST_SCOPES",
    "NONE_POLICIES",
    "ORDERS",
    "SAFETY_MODES",
    "SIGNALS",
    "SPOTLIGHTS",
    "VERSION_POLICIES",
    "AbsentPolicy",
    "Format",
    "LatestScope",
    "NonePolicy",
    "Order",
    "Reason",
    "SafetyMode",
    "Signal",
    "SpotlightMode",
    "Status",
    "VersionPolicy",
    "one_of",
]

#: the final order of the kept chunks (the arrange stage)
Order = Literal["relevance", "bookend", "edges", "reading"]
ORDERS: tuple[Order, ...] = get_args(Order)
#: how the context is rendered
Format = Literal["xml", "evidence", "plain"]
FORMATS: tuple[Format, ...] = get_args(Format)
#: what becomes of a chunk of another version than the target (the version stage)
VersionPolicy = Literal["drop", "label"]
VERSION_POLICIES: tuple[VersionPolicy, ...] = get_args(VersionPolicy)
#: what the version stage does when the version asked for is among no candidate's versions
AbsentPolicy = Literal["latest", "empty", "error"]
ABSENT_POLICIES: tuple[AbsentPolicy, ...] = get_args(AbsentPolicy)
#: with no version asked for, what "current" is: the newest release of a page's docs, or of the page
LatestScope = Literal["site", "document"]
LATEST_SCOPES: tuple[LatestScope, ...] = get_args(LatestScope)
#: how untrusted document text is marked in the context (spotlighting; None: not marked)
SpotlightMode = Literal["datamark", "base64"]
SPOTLIGHTS: tuple[SpotlightMode, ...] = get_args(SpotlightMode)
#: what becomes of a chunk with injection-like text (the safety stage)
SafetyMode = Literal["remove", "drop", "flag"]
SAFETY_MODES: tuple[SafetyMode, ...] = get_args(SafetyMode)
#: the relevance stage's signals (the keys of its ``weights``)
Signal = Literal["order", "score", "lexical", "define", "phrase"]
SIGNALS: tuple[Signal, ...] = get_args(Signal)
#: what becomes of a chunk whose score is ``None`` (the relevance stage)
NonePolicy = Literal["rank", "drop", "error"]
NONE_POLICIES: tuple[NonePolicy, ...] = get_args(NonePolicy)


def one_of(name: str, value: object, valid: tuple[str, ...]) -> None:
    """Refuse ``value`` unless it is one of ``valid``, naming the option and the values.

    :raises ConfigError: ``{name} must be one of (...), got {value!r}``.
    """
    if value not in valid:
        raise ConfigError(f"{name} must be one of {valid}, got {value!r}")


class _StrEnum(str, Enum):
    """A ``str`` enum whose ``str()`` and format are its value (the string it replaced)."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)

    @classmethod
    def parse(cls, value: object) -> _StrEnum:
        """The member for ``value`` (a member or its string).

        :raises ConfigError: any other value, listing the valid ones.
        """
        try:
            return cls(value)
        except ValueError:
            valid = tuple(m.value for m in cls)
            raise ConfigError(f"{cls.__name__.lower()} must be one of {valid}, got {value!r}") from None


class Reason(_StrEnum):
    """Why a chunk has its fate: ``kept``, or the reason the stage that dropped it gives."""

    KEPT = "kept"
    INVALID = "invalid"  # input: a malformed candidate (field and message in the detail)
    EMPTY = "empty"  # input: no visible text (empty, whitespace or zero-width characters only)
    NOT_PERMITTED = "not_permitted"  # admit: no principal of the call may read it
    OUT_OF_SCOPE = "out_of_scope"  # admit: outside the call's scope
    SUPERSEDED = "superseded"  # version: an older version than the target
    OTHER_VERSION = "other_version"  # version: another version than the target
    MISSING_SCORE = "missing_score"  # relevance: no score, none_score="drop"
    BELOW_THRESHOLD = "below_threshold"  # relevance, rerank: under min_score
    RANK_CUTOFF = "rank_cutoff"  # relevance, rerank: beyond top_k
    BEYOND_HORIZON = "beyond_horizon"  # depth, horizon: outside the head that is read / that the costly stages see
    INJECTION = "injection"  # safety: injection-like text (policy drop, or nothing left)
    DUPLICATE = "duplicate"  # dedup, semantic: a copy of a kept chunk
    MERGED = "merged"  # merge: spliced into an adjacent chunk
    NEAR_MISS = "near_miss"  # excerpt: nothing but a rival entry matched the question
    NO_EVIDENCE = "no_evidence"  # llm extract: the model found no verified evidence
    NOT_SELECTED = "not_selected"  # llm map-reduce: the reduce step did not name it
    DOC_CAP = "doc_cap"  # select: max_per_doc chunks of its document already kept
    OVER_BUDGET = "over_budget"  # select, render: does not fit the budget


class Status(_StrEnum):
    """A kept chunk's version label (the ``status`` the context shows)."""

    CURRENT = "current"
    UNVERSIONED = "unversioned"
    SUPERSEDED = "superseded"
    OTHER_VERSION = "other_version"
    CONFLICTING = "conflicting"  # arrange: unversioned, and a kept chunk says otherwise
