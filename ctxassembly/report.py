"""Decision / Report: the fate of every input chunk, with the stage and the reason."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ctxassembly.chunk import Chunk
from ctxassembly.kinds import Reason
from ctxassembly.ledger import Ledger
from ctxassembly.render import cite_id

__all__ = ["KEPT", "Decision", "Mark", "Reason", "Report"]

KEPT = Reason.KEPT


@dataclass(frozen=True, slots=True)
class Decision:
    """One chunk's fate: kept at ``position`` or dropped by ``stage`` for ``reason``."""

    index: int
    id: str
    stage: str
    reason: Reason
    detail: dict[str, Any] = field(default_factory=dict)
    position: int | None = None

    @property
    def kept(self) -> bool:
        return self.reason == KEPT

    @property
    def cite(self) -> str | None:
        """The citation id the context shows for this chunk (``None`` if dropped)."""
        return cite_id(self.position) if self.kept and self.position is not None else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "id": self.id,
            "fate": "kept" if self.kept else "dropped",
            "stage": self.stage,
            "reason": self.reason.value,
            "position": self.position,
            "cite": self.cite,
            "detail": self.detail,
        }


class Mark(NamedTuple):
    """A point in a report to return to (:meth:`Report.mark`)."""

    fates: frozenset[int]  # input indexes that had a fate
    notes: int  # how many notes there were


@dataclass
class Report:
    """What happened to every chunk of one assembly call.

    ``decisions`` has exactly one entry per input chunk, in input order. ``notes`` holds
    decisions about the call as a whole (which target version was chosen and why, which
    chunks were trimmed or flagged) that are not fates. ``inputs`` are the validated
    candidates and ``count_tokens`` the call's token counter (``None``: not known, e.g.
    after pickling): :attr:`tokens_before` is computed from the two.
    """

    question: str = ""
    budget: int = 0
    target_version: str | None = None
    decisions: list[Decision] = field(default_factory=list)
    stage_counts: dict[str, dict[str, int]] = field(default_factory=dict)
    timings_ms: dict[str, float] = field(default_factory=dict)
    notes: list[dict[str, Any]] = field(default_factory=list)
    tokens_after: int = 0
    top_ranked_position: int | None = None
    inputs: Sequence[Chunk] = field(default_factory=tuple, repr=False)
    count_tokens: Callable[[str], int] | None = field(default=None, repr=False)
    #: what the stages recorded about each input besides its fate (:mod:`ctxassembly.ledger`)
    ledger: Ledger = field(default_factory=Ledger, repr=False)
    _fates: dict[int, Decision] = field(default_factory=dict, repr=False)

    # -- writing (used by stages) -------------------------------------------------------
    def drop(self, chunk: Chunk, stage: str, reason: Reason | str, **detail: Any) -> None:
        """Record that ``chunk`` leaves at ``stage`` for ``reason`` (a :class:`Reason` or its
        string).

        :raises ConfigError: a reason that is not a :class:`Reason`, listing the valid ones.
        """
        self._set(Decision(_index(chunk), chunk.id, stage, _reason(reason), detail))  # **detail is a fresh dict

    def drop_index(self, index: int, chunk_id: str, stage: str, reason: Reason | str, **detail: Any) -> None:
        self._set(Decision(index, chunk_id, stage, _reason(reason), detail))

    def note(self, stage: str, event: str, **detail: Any) -> None:
        self.notes.append({"stage": stage, "event": event, **detail})

    def _set(self, decision: Decision) -> None:
        if decision.index in self._fates:
            raise RuntimeError(
                f"chunk {decision.id!r} (input {decision.index}) already has a fate: "
                f"{self._fates[decision.index].reason}; a stage dropped it twice"
            )
        self._fates[decision.index] = decision

    def mark(self) -> Mark:
        """A point to return to: the fates and notes recorded so far."""
        return Mark(frozenset(self._fates), len(self.notes))

    def rollback(self, mark: Mark) -> None:
        """Forget the fates and notes recorded since ``mark`` (the pipeline widens the
        horizon and runs the stages after it again)."""
        for index in [i for i in self._fates if i not in mark.fates]:
            del self._fates[index]
        del self.notes[mark.notes :]

    def finish(self, final: Sequence[Chunk], n_inputs: int) -> None:
        for position, chunk in enumerate(final):
            self._set(Decision(_index(chunk), chunk.id, "arrange", KEPT, {}, position))
        missing = [i for i in range(n_inputs) if i not in self._fates]
        if missing:
            raise RuntimeError(f"inputs {missing} have no fate; a stage lost them silently")
        self.decisions = [self._fates[i] for i in range(n_inputs)]

    # -- reading ------------------------------------------------------------------------
    @property
    def fates(self) -> list[Decision]:
        """The fates recorded so far, in input order (after the call: :attr:`decisions`)."""
        return self.decisions if self.decisions else [self._fates[i] for i in sorted(self._fates)]

    @property
    def kept(self) -> list[Decision]:
        return sorted((d for d in self.fates if d.kept), key=lambda d: d.position or 0)

    @property
    def citations(self) -> dict[str, str]:
        """Citation id shown in the context -> the real chunk id, in context order."""
        return {d.cite: d.id for d in self.kept if d.cite is not None}

    @property
    def dropped(self) -> list[Decision]:
        return [d for d in self.fates if not d.kept]

    @property
    def reasons(self) -> Counter[Reason]:
        return Counter(d.reason for d in self.fates)

    def fate(self, index: int) -> Decision:
        """The fate of input ``index`` (during a call: the one recorded so far).

        :raises KeyError: no fate recorded for ``index`` yet.
        """
        if self.decisions:
            return self.decisions[index]
        return self._fates[index]

    def has_fate(self, index: int) -> bool:
        """Whether input ``index`` has a fate (yet)."""
        return index in self._fates

    @property
    def tokens_before(self) -> int:
        """Tokens of the candidates pasted as they came (computed on first access)."""
        if self.count_tokens is None:
            return 0
        return sum(self.count_tokens(c.text) for c in self.inputs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "budget": self.budget,
            "target_version": self.target_version,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "top_ranked_position": self.top_ranked_position,
            "kept": sum(d.kept for d in self.decisions),
            "dropped": sum(not d.kept for d in self.decisions),
            "reasons": {r.value: n for r, n in self.reasons.items()},
            "citations": self.citations,
            "stage_counts": self.stage_counts,
            "timings_ms": {k: round(v, 3) for k, v in self.timings_ms.items()},
            "notes": self.notes,
            "decisions": [d.to_dict() for d in self.decisions],
        }

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), default=str, **kwargs)

    def table(self) -> str:
        """A plain-text table: one row per input chunk."""
        rows = [("#", "id", "fate", "stage", "reason", "detail")]
        for d in self.decisions:
            fate = f"kept @{d.position} [{d.cite}]" if d.kept else "dropped"
            detail = ", ".join(f"{k}={v}" for k, v in d.detail.items())
            rows.append((str(d.index), d.id, fate, d.stage, d.reason, detail[:60]))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


def _reason(reason: Reason | str) -> Reason:
    return reason if isinstance(reason, Reason) else Reason(Reason.parse(reason))


def _index(chunk: Chunk) -> int:
    if chunk.index is None:
        raise RuntimeError(f"chunk {chunk.id!r} has no input index; run it through an Assembler")
    return chunk.index
