"""Context metrics: what an assembled context holds, measured against a labelled question.

No reader is involved: these numbers say whether the answer *could* be derived from the
context, whether the wrong version's answer is on show too, and what it costs.

* ``answer_kept``: every answer string is in the context (whitespace collapsed on both
  sides, case kept: ``5.1`` and ``5.10`` must stay apart). ``None`` when the question
  has no answer strings.
* ``answer_share``: the share of answer strings found (``None`` likewise).
* ``context_recall``: share of gold ids among the kept chunks (a chunk merged from
  several inputs counts for each of them). ``None`` without gold labels.
* ``context_precision``: share of kept chunks that are gold (``None`` without gold
  labels or without chunks).
* ``wrong_exposed``: the wrong-version / wrong-scope strings that are in the context.
* ``duplicate_share``: share of kept chunks that are near-duplicates (word 5-shingle
  Jaccard >= 0.8) of an earlier kept chunk.
* ``off_version_share``: share of kept chunks whose version is set and differs from the
  target version (a chunk with no version counts in the denominator only).
* ``tokens``: tokens of the context text (cl100k unless a tokenizer is given).
* ``answer_position`` / ``answer_zone``: 0-based position of the first chunk that holds
  an answer string; ``edge`` (first or last), ``middle`` (strictly inside the middle
  third) or ``inner`` (the rest).
* ``injections_passed``: planted injection sentences (or planted ids) that reached the
  context.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from statistics import mean
from typing import Any

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.eval._common import to_chunk_list
from ctxassembly.eval.questions import Question
from ctxassembly.text.lexical import jaccard, shingles

__all__ = ["ContextMetrics", "MetricsSummary", "context_metrics", "evaluate_many", "summarize", "text_metrics", "zone"]

_WS = re.compile(r"\s+")
DUPLICATE_JACCARD = 0.8


def _squash(text: str) -> str:
    return _WS.sub(" ", text).strip()


def zone(position: int, n: int) -> str:
    """``edge`` (first or last of ``n``), ``middle`` (strictly inside the middle third) or ``inner``.

    :raises ConfigError: a position outside ``0 .. n-1``.
    """
    if not 0 <= position < n:
        raise ConfigError(f"position must be in 0..{n - 1}, got {position}")
    if position in (0, n - 1):
        return "edge"
    rel = position / (n - 1)
    return "middle" if 1 / 3 < rel < 2 / 3 else "inner"


@dataclass(frozen=True)
class ContextMetrics:
    """The metrics of one context for one question (JSON-able with :meth:`to_dict`)."""

    qid: str
    n_chunks: int | None
    tokens: int
    answer_kept: bool | None
    answer_share: float | None
    context_recall: float | None
    context_precision: float | None
    wrong_exposed: tuple[str, ...]
    duplicate_share: float | None
    off_version_share: float | None
    answer_position: int | None
    answer_zone: str | None
    injections_passed: int
    injections_planted: int

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["wrong_exposed"] = list(self.wrong_exposed)
        return out


def _as_chunks(context: object) -> tuple[list[Chunk], str | None]:
    """Chunks and, when known, the rendered text, from what a pipeline returned.

    :raises ConfigError: a string, a mapping or a non-iterable; an item that is neither a
        Chunk nor a mapping (named by its index).
    """
    text = getattr(context, "text", None)
    chunks = getattr(context, "chunks", None)
    if isinstance(text, str) and isinstance(chunks, list):  # an Assembled
        return list(chunks), text
    if isinstance(context, str):
        raise ConfigError(
            "context is a plain string: pass the chunks (or the Assembled) so per-chunk metrics can be computed,"
            " or use text_metrics for a rendered string"
        )
    if isinstance(context, Mapping) or not isinstance(context, Iterable):
        raise ConfigError(f"context must be an Assembled or a list of chunks, got {type(context).__name__}")
    return to_chunk_list(context, "context"), None


def _ids(chunk: Chunk) -> set[str]:
    merged = chunk.meta.get("merged_from")
    ids = {chunk.id}
    if isinstance(merged, (list, tuple)):
        ids.update(str(m) for m in merged)
    return ids


def context_metrics(
    question: Question, context: object, *, tokenizer: object = None, text: str | None = None
) -> ContextMetrics:
    """Measure ``context`` (an ``Assembled`` or a list of chunks / chunk dicts, in final
    order) against ``question``.

    :param text: the context exactly as the reader sees it (e.g. the chunks rendered with
        labels); default: the ``Assembled``'s text, else the chunk texts joined by a blank
        line. The text metrics (answer, wrong strings, injections, tokens) read it.
    :raises ConfigError: a context that is neither (a bare string has no chunks: see
        :func:`text_metrics`).
    :raises ChunkError: a malformed chunk dict.
    """
    chunks, rendered = _as_chunks(context)
    if text is None:
        text = rendered if rendered is not None else "\n\n".join(c.text for c in chunks)
    return _measure(question, chunks, text, tokenizer)


def text_metrics(question: Question, text: str, *, tokenizer: object = None) -> ContextMetrics:
    """Measure a context known only as a string: the text metrics (answer, wrong strings,
    injection sentences, tokens); the per-chunk ones (recall, precision, duplicates,
    off-version, position) are ``None`` and ``n_chunks`` is ``None``.

    :raises ConfigError: ``text`` not a string.
    """
    if not isinstance(text, str):
        raise ConfigError(f"text must be a str, got {type(text).__name__}")
    return _measure(question, None, text, tokenizer)


def _measure(question: Question, chunks: list[Chunk] | None, text: str, tokenizer: object) -> ContextMetrics:
    from ctxassembly.tokens import get_counter

    flat = _squash(text)
    answers = [a for a in question.answer if a.strip()]
    found = [a for a in answers if _squash(a) in flat]
    wrong = tuple(w for w in question.wrong if w.strip() and _squash(w) in flat)
    planted = len(question.injection_sentences) or len(question.injection_ids)
    tokens = get_counter(tokenizer)(text) if text else 0
    base: dict[str, Any] = {
        "qid": question.qid,
        "tokens": tokens,
        "answer_kept": (len(found) == len(answers)) if answers else None,
        "answer_share": len(found) / len(answers) if answers else None,
        "wrong_exposed": wrong,
        "injections_planted": planted,
    }
    if chunks is None:
        # planted ids cannot be seen in a string; planted sentences can
        passed = sum(_squash(s) in flat for s in question.injection_sentences)
        return ContextMetrics(
            n_chunks=None,
            context_recall=None,
            context_precision=None,
            duplicate_share=None,
            off_version_share=None,
            answer_position=None,
            answer_zone=None,
            injections_passed=passed,
            **base,
        )
    n = len(chunks)
    squashed = [_squash(c.text) for c in chunks]
    gold = set(question.gold)
    kept_ids = [_ids(c) for c in chunks]
    if gold:
        covered = set().union(*kept_ids) & gold if kept_ids else set()
        recall: float | None = len(covered) / len(gold)
        precision = sum(bool(ids & gold) for ids in kept_ids) / n if n else None
    else:
        recall = precision = None

    dup = 0
    seen: list[frozenset[int]] = []
    for c in chunks:
        sh = shingles(c.text)
        if any(jaccard(sh, s) >= DUPLICATE_JACCARD for s in seen):
            dup += 1
        seen.append(sh)

    off = None
    if question.target_version is not None and n:
        off = sum(c.version not in (None, "", question.target_version) for c in chunks) / n

    position = next((i for i, t in enumerate(squashed) if any(_squash(a) in t for a in answers)), None)

    if question.injection_sentences:
        passed = sum(_squash(s) in flat for s in question.injection_sentences)
    else:
        inj = set(question.injection_ids)
        passed = sum(bool(ids & inj) for ids in kept_ids)

    return ContextMetrics(
        n_chunks=n,
        context_recall=recall,
        context_precision=precision,
        duplicate_share=dup / n if n else None,
        off_version_share=off,
        answer_position=position,
        answer_zone=None if position is None else zone(position, n),
        injections_passed=passed,
        **base,
    )


def _rate(values: Iterable[float | bool | None]) -> float | None:
    vals = [float(v) for v in values if v is not None]
    return round(mean(vals), 4) if vals else None


@dataclass(frozen=True)
class MetricsSummary:
    """Metrics over a question set: means over the questions each metric applies to."""

    n: int
    answer_kept: float | None
    context_recall: float | None
    context_precision: float | None
    wrong_exposure: float | None
    duplicate_share: float | None
    off_version_share: float | None
    tokens_mean: float | None
    edge_rate: float | None
    middle_rate: float | None
    injection_pass: float | None
    rows: list[ContextMetrics] = field(default_factory=list, repr=False)

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if k != "rows"}
        out["rows"] = [r.to_dict() for r in self.rows]
        return out

    def table(self) -> str:
        """Two aligned columns: metric, value (``n/a`` where no question applies)."""
        items = [(k, v) for k, v in self.to_dict().items() if k != "rows"]
        width = max(len(k) for k, _ in items)
        return "\n".join(f"{k.ljust(width)}  {'n/a' if v is None else v}" for k, v in items)

    def __str__(self) -> str:
        return self.table()


def summarize(rows: Sequence[ContextMetrics], questions: Sequence[Question] | None = None) -> MetricsSummary:
    """Aggregate per-question metrics.

    ``wrong_exposure`` counts only questions that have wrong strings (from ``questions``,
    matched by position; without them, questions that exposed one count against all).
    ``edge_rate`` / ``middle_rate`` are over the contexts that hold an answer string;
    ``injection_pass`` over the questions with a planted injection.
    """
    if questions is not None and len(questions) != len(rows):
        raise ConfigError(f"got {len(rows)} metric rows for {len(questions)} questions; pass them in the same order")
    if questions is not None:
        wrong = [bool(r.wrong_exposed) for r, q in zip(rows, questions, strict=True) if q.wrong]
    else:
        wrong = [bool(r.wrong_exposed) for r in rows]
    placed = [r for r in rows if r.answer_zone is not None]
    planted = [r for r in rows if r.injections_planted]
    return MetricsSummary(
        n=len(rows),
        answer_kept=_rate(r.answer_kept for r in rows),
        context_recall=_rate(r.context_recall for r in rows),
        context_precision=_rate(r.context_precision for r in rows),
        wrong_exposure=_rate(wrong),
        duplicate_share=_rate(r.duplicate_share for r in rows),
        off_version_share=_rate(r.off_version_share for r in rows),
        tokens_mean=_rate(r.tokens for r in rows),
        edge_rate=_rate(r.answer_zone == "edge" for r in placed),
        middle_rate=_rate(r.answer_zone == "middle" for r in placed),
        injection_pass=_rate(r.injections_passed > 0 for r in planted),
        rows=list(rows),
    )


def evaluate_many(
    questions: Sequence[Question],
    *,
    budget: int,
    engine: str = "local",
    batch_size: int = 8,
    concurrency: int | None = None,
    num_cpus: int | None = None,
    **options: Any,
) -> MetricsSummary:
    """Context metrics of the labelled ``questions`` assembled by ``engine`` (``"local"`` or
    ``"ray"``, see :func:`ctxassembly.batch.assemble_many`), summarised.

    :raises ConfigError: see :func:`~ctxassembly.batch.assemble_many`.
    :raises MissingExtraError: see :func:`~ctxassembly.batch.assemble_many`.
    """
    from ctxassembly.batch import assemble_many, parse_engine

    results = assemble_many(
        questions,
        budget=budget,
        engine=parse_engine(engine),
        batch_size=batch_size,
        concurrency=concurrency,
        num_cpus=num_cpus,
        **options,
    )
    rows = [context_metrics(q, a) for q, a in zip(questions, results, strict=True)]
    return summarize(rows, questions)
