"""Decision / Report: the fate of every input chunk, with the stage and the reason."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ctxassembly.chunk import Chunk
from ctxassembly.kinds import Reason
from ctxassembly.ledger import Ledger
from ctxassembly.render import cite_id, source_label

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


#: a bulk drop's fate until it is read: (chunk id, stage, reason, detail), the detail of a
#: ranked drop (:meth:`Report.drop_ranked`) as (rank, the rest of it)
_Pending = tuple[str, str, Reason, "dict[str, Any] | tuple[int, dict[str, Any]]"]


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
    stage_counts: dict[str, dict[str, int]] = field(default_factory=dict)
    timings_ms: dict[str, float] = field(default_factory=dict)
    notes: list[dict[str, Any]] = field(default_factory=list)
    tokens_after: int = 0
    top_ranked_position: int | None = None
    inputs: Sequence[Chunk] = field(default_factory=tuple, repr=False)
    count_tokens: Callable[[str], int] | None = field(default=None, repr=False)
    #: what the stages recorded about each input besides its fate (:mod:`ctxassembly.ledger`)
    ledger: Ledger = field(default_factory=Ledger, repr=False)
    #: the kept chunks as the context shows them (set by :meth:`finish`; their labels, for :meth:`table`)
    final: Sequence[Chunk] = field(default_factory=tuple, repr=False)
    #: input index -> its fate; a bulk drop's is pending (id, stage, reason, detail) until read
    _fates: dict[int, Decision | _Pending] = field(default_factory=dict, repr=False)
    #: how many inputs the call had, once :meth:`finish` checked that each has its fate
    _inputs: int | None = field(default=None, repr=False)
    _decisions: list[Decision] | None = field(default=None, repr=False)

    @property
    def decisions(self) -> list[Decision]:
        """Exactly one :class:`Decision` per input chunk, in input order (empty until the
        call has finished). Built when first read: a long list leaves hundreds of
        ``beyond_horizon`` fates that a caller reading only the context never looks at."""
        if self._decisions is None:
            if self._inputs is None:
                return []
            self._decisions = [self._fate_at(i) for i in range(self._inputs)]
        return self._decisions

    # -- writing (used by stages) -------------------------------------------------------
    def drop(self, chunk: Chunk, stage: str, reason: Reason | str, **detail: Any) -> None:
        """Record that ``chunk`` leaves at ``stage`` for ``reason`` (a :class:`Reason` or its
        string).

        :raises ConfigError: a reason that is not a :class:`Reason`, listing the valid ones.
        """
        self._set(_decision(_index(chunk), chunk.id, stage, _reason(reason), detail))  # **detail is a fresh dict

    def drop_all(self, chunks: Iterable[Chunk], stage: str, reason: Reason, details: Iterable[dict[str, Any]]) -> None:
        """:meth:`drop` for each of ``chunks`` with its detail (one of ``details``, fresh
        dicts), at a fraction of the cost per chunk: the depth and the horizon record hundreds,
        and a pass the pipeline rolls back forgets them. Each fate is kept as a tuple and
        becomes its :class:`Decision` when it is first read (:meth:`finish` reads them all)."""
        fates = self._fates
        for chunk, detail in zip(chunks, details, strict=True):
            index = chunk.index
            if index is None or index in fates:
                self._set(Decision(_index(chunk), chunk.id, stage, reason, detail))  # raises, naming both
            else:
                fates[index] = (chunk.id, stage, reason, detail)

    def drop_ranked(self, chunks: Sequence[Chunk], stage: str, reason: Reason, first: int, **rest: Any) -> None:
        """:meth:`drop_all` where the chunks are a ranking's tail from rank ``first`` on:
        each chunk's detail is ``{"rank": its rank, **rest}``, made when the fate is read
        (the depth and the horizon drop most of a long list; a caller reading only the
        context never reads those fates, and a pass the pipeline rolls back forgets them)."""
        fates = self._fates
        for rank, chunk in enumerate(chunks, first):
            index = chunk.index
            if index is None or index in fates:
                self._set(Decision(_index(chunk), chunk.id, stage, reason, {"rank": rank, **rest}))  # raises
            else:
                fates[index] = (chunk.id, stage, reason, (rank, rest))

    def drop_index(self, index: int, chunk_id: str, stage: str, reason: Reason | str, **detail: Any) -> None:
        self._set(Decision(index, chunk_id, stage, _reason(reason), detail))

    def note(self, stage: str, event: str, **detail: Any) -> None:
        self.notes.append({"stage": stage, "event": event, **detail})

    def _set(self, decision: Decision) -> None:
        if decision.index in self._fates:
            raise RuntimeError(
                f"chunk {decision.id!r} (input {decision.index}) already has a fate: "
                f"{self._fate_at(decision.index).reason}; a stage dropped it twice"
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
        self._inputs, self._decisions = n_inputs, None
        self.final = tuple(final)

    def _fate_at(self, index: int) -> Decision:
        """The fate of input ``index``, a pending one (:meth:`drop_all`) made a Decision."""
        fate = self._fates[index]
        if isinstance(fate, Decision):
            return fate
        chunk_id, stage, reason, detail = fate
        if isinstance(detail, tuple):  # a ranked drop's (rank, the rest)
            rank, rest = detail
            detail = {"rank": rank, **rest}
        made = self._fates[index] = _decision(index, chunk_id, stage, reason, detail)
        return made

    # -- reading ------------------------------------------------------------------------
    @property
    def fates(self) -> list[Decision]:
        """The fates recorded so far, in input order (after the call: :attr:`decisions`)."""
        return self.decisions if self.decisions else [self._fate_at(i) for i in sorted(self._fates)]

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
        return self._fate_at(index)

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
        """A plain-text table, a summary line, then one row per input chunk: its input
        number, the citation the context shows (``[1]``), a short id (a UUID's first
        characters, unique within the call), where it is from (title and section, else
        the source's file name or URL), its version, fate, stage, reason and the detail.
        An ``over_budget`` row the budget settled without counting the whole chunk shows
        the chunk's real tokens."""
        inputs = {c.index: c for c in self.inputs}
        shown = {c.index: c for c in self.final}
        resolved = _resolved_versions(self.notes)
        short = _short_ids([d.id for d in self.decisions])
        rows = [("#", "cite", "id", "from", "version", "fate", "stage", "reason", "detail")]
        for d in self.decisions:
            chunk = shown.get(d.index) or inputs.get(d.index)
            fate = f"kept @{d.position}" if d.kept else "dropped"
            detail = dict(d.detail)
            if d.reason == "over_budget" and detail.get("tokens") is None and chunk is not None and self.count_tokens:
                # select stops counting once a chunk cannot fit: show what its text alone costs
                detail["tokens"] = f"{self.count_tokens(chunk.text)} (text) + labels"
            version = (
                (shown[d.index].version if d.index in shown else None)
                or detail.get("version")
                or detail.get("describes")
                or (chunk.version if chunk is not None else None)
                or resolved.get(d.index)
                or ""
            )
            rows.append(
                (
                    str(d.index),
                    f"[{d.cite}]" if d.cite else "",
                    short[d.id],
                    _origin(chunk),
                    str(version),
                    fate,
                    d.stage,
                    d.reason,
                    ", ".join(f"{k}={_cell(v, short)}" for k, v in detail.items()),
                )
            )
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        kept = sum(d.kept for d in self.decisions)
        target = self.target_version or "latest per document"
        lines.insert(
            0,
            f"{self.question!r}: kept {kept} of {len(self.decisions)}, {self.tokens_after} of {self.budget} tokens"
            f" ({self.tokens_before} as retrieved), version {target}",
        )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


_new = object.__new__
# the slots' own setters (a frozen dataclass refuses ``setattr``)
_set_index, _set_id, _set_stage, _set_reason, _set_detail, _set_position = (
    Decision.__dict__[name].__set__ for name in ("index", "id", "stage", "reason", "detail", "position")
)


def _decision(index: int, chunk_id: str, stage: str, reason: Reason, detail: dict[str, Any]) -> Decision:
    """``Decision(index, chunk_id, stage, reason, detail)`` at half the cost: the frozen
    dataclass's ``__init__`` sets each field through ``object.__setattr__``, here each slot
    is set directly (a call makes a Decision of every bulk drop, hundreds)."""
    d: Decision = _new(Decision)
    _set_index(d, index)
    _set_id(d, chunk_id)
    _set_stage(d, stage)
    _set_reason(d, reason)
    _set_detail(d, detail)
    _set_position(d, None)
    return d


def _reason(reason: Reason | str) -> Reason:
    return reason if isinstance(reason, Reason) else Reason(Reason.parse(reason))


_ORIGIN_CHARS = 40  # a title and section wider than this is cut (the context shows them whole)
_CELL_CHARS = 120  # one detail value wider than this is cut (an error message, a list of ids)
_SHORT_ID = 8  # a long id is shown by its first characters, at least this many


def _origin(chunk: Chunk | None) -> str:
    """Where a chunk is from: its title (and section), else its source as the context shows it."""
    if chunk is None:
        return ""
    meta = chunk.meta
    name = chunk.title or next(
        (s for k in ("source", "url", "file_path", "file_name") if (s := source_label(meta.get(k)))), None
    )
    text = " › ".join(x for x in (name, chunk.section) if x)
    return text if len(text) <= _ORIGIN_CHARS else text[: _ORIGIN_CHARS - 1] + "…"


def _cell(value: object, short: dict[str, str]) -> str:
    """A detail value as the table shows it: another chunk's id by its short id."""
    if isinstance(value, str) and value in short:
        return short[value]
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) and v in short for v in value):
        value = [short[v] for v in value]
    text = str(value)
    return text if len(text) <= _CELL_CHARS else text[: _CELL_CHARS - 1] + "…"


def _short_ids(ids: Sequence[str]) -> dict[str, str]:
    """Each id, or for an id longer than 12 characters its shortest prefix (at least
    :data:`_SHORT_ID` characters) that no other id of the call starts with, and "…"."""
    out: dict[str, str] = {}
    unique = sorted(set(ids))
    for i in unique:
        if len(i) <= 12:
            out[i] = i
            continue
        for n in range(_SHORT_ID, len(i) - 1):
            prefix = i[:n]
            if not any(o != i and o.startswith(prefix) for o in unique):
                out[i] = prefix + "…"
                break
        else:
            out[i] = i
    return out


def _resolved_versions(notes: Sequence[dict[str, Any]]) -> dict[int, str]:
    """Input index -> the version the version stage found (its ``resolved`` note)."""
    for note in notes:
        if note.get("event") == "resolved":
            return {row[0]: row[2] for row in note.get("chunks", ()) if row[2] and isinstance(row[0], int)}
    return {}


def _index(chunk: Chunk) -> int:
    if chunk.index is None:
        raise RuntimeError(f"chunk {chunk.id!r} has no input index; run it through an Assembler")
    return chunk.index
