"""Dilution curve: how much does the reader lose to more context, and to where the gold sits?

For each labelled question the gold chunk is shown alone, then with the next 4, then 16
retrieved distractors (candidates in retrieval order that hold no answer string and
are not the gold chunk again), with the gold placed first and in the middle. Size and
position effects come apart: read along a row for size, across rows for position.

Usage::

    from ctxassembly.eval import SmolLM2Reader, demo_questions, dilution_curve
    result = dilution_curve(SmolLM2Reader(), demo_questions(), sizes=(0, 4, 16))
    print(result.table()); result.plot("dilution.png")
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Literal

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.eval._common import BRIEF, check_positive, cut, layout
from ctxassembly.eval.questions import Question
from ctxassembly.eval.results import DilutionResult, DilutionRow
from ctxassembly.eval.scoring import contains_answer
from ctxassembly.kinds import Format
from ctxassembly.llm.readers import as_reader

__all__ = ["Placement", "dilution_curve", "gold_and_distractors", "parse_placements"]

Placement = Literal["first", "middle", "last"]
_PLACEMENTS = ("first", "middle", "last")
_WS = re.compile(r"\s+")


def _squash(text: str) -> str:
    return _WS.sub(" ", text).strip()


def gold_and_distractors(question: Question) -> tuple[Chunk | None, list[Chunk]]:
    """The gold chunk (the first gold candidate holding every answer string; without gold
    labels, the first candidate that does) and the distractors in retrieval order.
    ``(None, [])`` when no candidate holds the answer."""
    chunks = [Chunk.from_dict(c, index=i) for i, c in enumerate(question.candidates)]
    answers = [_squash(a) for a in question.answer if a.strip()]

    def holds(c: Chunk) -> bool:
        t = _squash(c.text)
        return bool(answers) and all(a in t for a in answers)

    gold_ids = set(question.gold)
    gold = next((c for c in chunks if c.id in gold_ids and (holds(c) or not answers)), None)
    if gold is None:
        gold = next((c for c in chunks if holds(c)), None)
    if gold is None:
        return None, []
    seen = {gold.id, _squash(gold.text)}
    out = []
    for c in chunks:
        t = _squash(c.text)
        if c.id in gold_ids or c.id in seen or t in seen or any(a in t for a in answers):
            continue
        seen.update((c.id, t))
        out.append(c)
    return gold, out


def parse_placements(values: Sequence[object]) -> tuple[Placement, ...]:
    """``values`` as gold placements (``first``, ``middle``, ``last``), in the given order.

    :raises ConfigError: an empty list or a value that is not a placement.
    """
    chosen: list[Placement] = []
    for value in values:
        if value == "first":
            chosen.append("first")
        elif value == "middle":
            chosen.append("middle")
        elif value == "last":
            chosen.append("last")
        else:
            chosen = []
            break
    if not chosen:
        raise ConfigError(f"placements must be among {_PLACEMENTS}, got {list(values)!r}")
    return tuple(chosen)


def dilution_curve(
    reader: object,
    questions: Sequence[Question],
    *,
    sizes: Sequence[int] = (0, 4, 16),
    placements: Sequence[Placement] = ("first", "middle"),
    fmt: Format = "xml",
    instructions: str | None = None,
    max_chars: int | None = None,
    scorer: Callable[[str, Sequence[str]], bool | None] = contains_answer,
) -> DilutionResult:
    """Accuracy of ``reader`` by distractor count and gold placement.

    A question with fewer distractors than a size asks for is shown all it has (the row
    records the real ``n_docs``). Size 0 is asked once and counts for every placement.

    :raises ConfigError: a negative size, an unknown placement, no questions, or a
        question without answer strings (nothing to score).
    """
    if not questions:
        raise ConfigError("questions is empty; pass labelled questions (see load_questions)")
    bad = [s for s in sizes if isinstance(s, bool) or not isinstance(s, int) or s < 0]
    if bad or not sizes:
        raise ConfigError(f"sizes must be non-negative ints, got {list(sizes)!r}")
    placements = parse_placements(placements)
    check_positive("max_chars", max_chars, allow_none=True)
    for q in questions:
        if not any(a.strip() for a in q.answer):
            raise ConfigError(f"question {q.qid!r}: field 'answer' is empty; the dilution curve scores answer strings")
    ask = as_reader(reader)
    prompt_text = BRIEF if instructions is None else instructions
    rows: list[DilutionRow] = []
    skipped: dict[str, str] = {}
    for q in questions:
        gold, distractors = gold_and_distractors(q)
        if gold is None:
            skipped[q.qid] = "no candidate holds every answer string"
            continue
        gold = cut(gold, max_chars) if max_chars is not None and _fits(gold, q, max_chars) else gold
        for k in sorted(set(sizes)):
            extra = [cut(c, max_chars) for c in distractors[:k]]
            done: dict[int, DilutionRow] = {}
            for p in placements:
                pos = {"first": 0, "middle": len(extra) // 2, "last": len(extra)}[p]
                if pos not in done:
                    docs = [*extra[:pos], gold, *extra[pos:]]
                    response = ask(layout(docs, q.question, fmt=fmt, instructions=prompt_text))
                    done[pos] = DilutionRow(q.qid, k, p, pos, len(docs), bool(scorer(response, q.answer)), response)
                prev = done[pos]
                rows.append(DilutionRow(q.qid, k, p, pos, prev.n_docs, prev.correct, prev.response))
    ks, ps = tuple(sorted(set(sizes))), tuple(dict.fromkeys(placements))
    accuracy: dict[str, dict[int, float | None]] = {}
    for p in ps:
        accuracy[p] = {}
        for k in ks:
            cell = [r.correct for r in rows if r.placement == p and r.size == k]
            accuracy[p][k] = round(sum(cell) / len(cell), 4) if cell else None
    return DilutionResult(sizes=ks, placements=ps, accuracy=accuracy, rows=rows, skipped=skipped)


def _fits(gold: Chunk, q: Question, max_chars: int) -> bool:
    """Cut the gold chunk only when the answer survives the cut."""
    head = _squash(cut(gold, max_chars).text)
    return all(_squash(a) in head for a in q.answer if a.strip())
