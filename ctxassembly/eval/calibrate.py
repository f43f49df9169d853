"""Threshold calibration: the relevance threshold (on the retriever score) and the near-dup
Jaccard threshold that keep the answer most often within a budget, measured on a
labelled sample of *your* corpus and retriever — instead of a round number.

Retriever scores are not comparable across encoders and corpora (a cosine of 0.5 is high
for one model and noise for another), so the grid of score thresholds is taken from the
sample itself: no threshold, then the 5th, 10th, 20th, 30th, 40th and 50th percentiles of
the candidates' scores. The near-dup grid is Jaccard 0.5 … 0.9 plus "exact duplicates
only". Every pair is run through the assembler on every question; the chosen pair has
the highest answer recall (share of questions whose answer strings are all in the
context), then the fewest tokens, then the fewest wrong-version exposures, then the
higher score threshold, then the most conservative dedup (exact only, else the highest
Jaccard: fewer merges). The whole curve is printed so the choice can be judged.

Fair use of a record: the assembler sees the question, the candidates and the target
version only when the record says the question names it (``version_explicit``; a record
without that field is taken at its word). The labels (answers, wrong strings) are only
used to score.

CLI: ``ctxassembly calibrate QUESTIONS.jsonl --budget 500`` (:mod:`ctxassembly.cli.eval`).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from statistics import mean
from typing import Any

import numpy as np

from ctxassembly.assembler import Assembler
from ctxassembly.errors import ConfigError
from ctxassembly.eval.metrics import context_metrics
from ctxassembly.eval.questions import Question
from ctxassembly.kinds import Reason
from ctxassembly.stages.relevance import DEFAULT_WEIGHTS

__all__ = ["Calibration", "Loco", "Point", "Setting", "calibrate", "loco", "score_grid"]

PERCENTILES = (5, 10, 20, 30, 40, 50)
NEAR_GRID: tuple[float | None, ...] = (None, 0.5, 0.6, 0.7, 0.8, 0.9)


@dataclass(frozen=True)
class Point:
    """One threshold pair measured over the sample."""

    min_score: float | None
    near_threshold: float | None
    answer_recall: float
    tokens_mean: float
    wrong_exposure: float | None
    dropped_below_threshold: float  # mean candidates dropped by the threshold per question


@dataclass
class Calibration:
    """The curve and the chosen pair."""

    budget: int
    n_questions: int
    points: list[Point]
    chosen: Point
    default: Point | None = None
    source: str = ""
    options: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "budget": self.budget,
            "n_questions": self.n_questions,
            "source": self.source,
            "options": self.options,
            "chosen": asdict(self.chosen),
            "default": None if self.default is None else asdict(self.default),
            "points": [asdict(p) for p in self.points],
        }

    def table(self) -> str:
        """The chosen thresholds, then the curve: answer recall per (score, near-dup) pair,
        and the two one-dimensional slices through the chosen point."""
        c = self.chosen
        lines = [
            f"calibrated on {self.n_questions} questions{' from ' + self.source if self.source else ''}, "
            f"budget {self.budget} tokens",
            f"chosen: min_score={_f(c.min_score)}  near_threshold={_f(c.near_threshold)}  "
            f"-> answer recall {c.answer_recall:.1%}, {c.tokens_mean:.0f} tokens, "
            f"wrong exposure {_pct(c.wrong_exposure)}",
        ]
        if self.default is not None:
            d = self.default
            lines.append(
                f"library default: min_score=none  near_threshold=0.8  -> answer recall {d.answer_recall:.1%}, "
                f"{d.tokens_mean:.0f} tokens, wrong exposure {_pct(d.wrong_exposure)}"
            )
        scores = sorted({p.min_score for p in self.points}, key=lambda v: -1.0 if v is None else v)
        nears = sorted({p.near_threshold for p in self.points}, key=lambda v: 2.0 if v is None else v)
        by = {(p.min_score, p.near_threshold): p for p in self.points}
        lines += ["", "answer recall by min_score (rows) and near_threshold (columns; 'exact' = exact dups only)"]
        head = "min_score".ljust(10) + "".join(("exact" if n is None else f"{n:.2f}").rjust(8) for n in nears)
        lines.append(head)
        for s in scores:
            row = _f(s).ljust(10)
            for n in nears:
                p = by.get((s, n))
                mark = "*" if p is c else " "
                row += ("" if p is None else f"{p.answer_recall:.1%}{mark}").rjust(8)
            lines.append(row)
        lines += ["", f"curve at near_threshold={_f(c.near_threshold)}:"]
        lines.append("min_score  dropped/q  recall   tokens  wrong")
        for s in scores:
            p = by[(s, c.near_threshold)]
            lines.append(
                f"{_f(s).ljust(9)}  {p.dropped_below_threshold:9.1f}  {p.answer_recall:6.1%}  "
                f"{p.tokens_mean:6.0f}  {_pct(p.wrong_exposure)}"
            )
        lines += ["", f"curve at min_score={_f(c.min_score)}:", "near      recall   tokens  wrong"]
        for n in nears:
            p = by[(c.min_score, n)]
            label = "exact" if n is None else f"{n:.2f}"
            lines.append(f"{label.ljust(8)}  {p.answer_recall:6.1%}  {p.tokens_mean:6.0f}  {_pct(p.wrong_exposure)}")
        return "\n".join(lines)


def _f(v: float | None) -> str:
    return "none" if v is None else f"{v:.4g}"


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.1%}"


def score_grid(records: Sequence[Mapping[str, Any]], percentiles: Sequence[float] = PERCENTILES) -> list[float | None]:
    """``None`` (no threshold) and the given percentiles of the candidates' scores.

    :raises ConfigError: no candidate carries a score.
    """
    scores = [
        float(c["score"]) for r in records for c in r.get("candidates", ()) if isinstance(c.get("score"), (int, float))
    ]
    if not scores:
        raise ConfigError("no candidate has a numeric 'score': nothing to calibrate a relevance threshold on")
    values = sorted({round(float(v), 4) for v in np.percentile(scores, list(percentiles))})
    return [None, *values]


def _version(record: Mapping[str, Any]) -> str | None:
    if record.get("version_explicit", True) is False:
        return None
    v = record.get("target_version")
    return None if v is None else str(v)


def calibrate(
    records: Sequence[Mapping[str, Any]],
    *,
    budget: int = 500,
    min_scores: Sequence[float | None] | None = None,
    near_thresholds: Sequence[float | None] = NEAR_GRID,
    source: str = "",
    **options: Any,
) -> Calibration:
    """Measure every (min_score, near_threshold) pair on ``records`` and choose one.

    :param records: benchmark-style records (``question``, ``candidates``, ``answer`` ...).
    :param min_scores: the score grid (default: :func:`score_grid` of the sample).
    :param near_thresholds: the near-dup grid (``None``: exact duplicates only).
    :param options: other :class:`~ctxassembly.assembler.Assembler` options, held fixed
        (a ``reranker``/``embedder`` for calibrating per encoder).
    :raises ConfigError: no records, no record with answer strings, or a bad grid value.
    """
    questions = [Question.from_dict(r, index=i) for i, r in enumerate(records)]
    labelled = [i for i, q in enumerate(questions) if q.answer]
    if not labelled:
        raise ConfigError("no question has 'answer' strings: answer recall cannot be measured")
    grid_s = score_grid(records) if min_scores is None else list(min_scores)
    for n in near_thresholds:
        if n is not None and not 0 < n <= 1:
            raise ConfigError(f"near_thresholds must be in (0, 1] or None, got {n!r}")
    points: list[Point] = []
    for near in near_thresholds:
        for s in grid_s:
            points.append(
                _measure(
                    records=records,
                    questions=questions,
                    labelled=labelled,
                    budget=budget,
                    min_score=s,
                    near=near,
                    options=options,
                )
            )
    best = max(
        points,
        key=lambda p: (
            p.answer_recall,
            -p.tokens_mean,
            -(p.wrong_exposure or 0.0),
            -1.0 if p.min_score is None else p.min_score,
            2.0 if p.near_threshold is None else p.near_threshold,
        ),
    )
    default = next((p for p in points if p.min_score is None and p.near_threshold == 0.8), None)
    return Calibration(budget, len(labelled), points, best, default, source, {k: repr(v) for k, v in options.items()})


def _measure(
    *,
    records: Sequence[Mapping[str, Any]],
    questions: Sequence[Question],
    labelled: Sequence[int],
    budget: int,
    min_score: float | None,
    near: float | None,
    options: Mapping[str, Any],
) -> Point:
    assembler = Assembler(min_score=min_score, near_threshold=near, **options)
    kept, tokens, wrong, dropped = [], [], [], []
    for i in labelled:
        r, q = records[i], questions[i]
        res = assembler.run(q.question, r["candidates"], budget=budget, target_version=_version(r))
        m = context_metrics(q, res)
        kept.append(bool(m.answer_kept))
        tokens.append(res.report.tokens_after)
        if q.wrong:
            wrong.append(bool(m.wrong_exposed))
        dropped.append(res.report.reasons.get(Reason.BELOW_THRESHOLD, 0))
    return Point(
        min_score=min_score,
        near_threshold=near,
        answer_recall=round(mean(kept), 4),
        tokens_mean=round(mean(tokens), 1),
        wrong_exposure=round(mean(wrong), 4) if wrong else None,
        dropped_below_threshold=round(mean(dropped), 2),
    )


# ------------------------------------------------------------------ leave-one-corpus-out
# The relevance weights (and, with an encoder, the rerank fusion weight) are chosen on one
# labelled corpus and judged on the others: a default must hold on docs it was not tuned
# on. Grid: the incoming (retriever) order always counts 1; BM25 over the candidates and
# BM25 over the names each chunk defines take the values below; the phrase signal its
# default unless asked (``phrase=``).
LEXICAL_GRID: tuple[float, ...] = (0.0, 0.5, 1.0, 2.0)
DEFINE_GRID: tuple[float, ...] = (0.0, 0.5, 1.0, 2.0)
PHRASE_GRID: tuple[float, ...] = (DEFAULT_WEIGHTS["phrase"],)
FUSE_GRID: tuple[float | None, ...] = (3.0, 6.0, 12.0)
LOCO_BUDGETS: tuple[int, ...] = (500, 1000)


@dataclass(frozen=True)
class Setting:
    """One point of the weight grid with its answer recall per corpus (mean over budgets)."""

    weights: dict[str, float]
    rerank_fuse: float | None
    recall: dict[str, float]

    @property
    def label(self) -> str:
        w = ", ".join(f"{k} {v:g}" for k, v in self.weights.items())
        return w + ("" if self.rerank_fuse is None else f"; fuse {self.rerank_fuse:g}")

    @property
    def size(self) -> float:
        """How far from the retriever's own order (the tie-break: the simpler, more
        conservative setting first). Independent of the library's current defaults, so
        that re-running the calibration on new defaults cannot move its own choice."""
        return sum(v for k, v in self.weights.items() if k != "order") + (self.rerank_fuse or 0.0) / 100


@dataclass
class Loco:
    """Every setting's recall on every corpus, and, for each corpus held out, the setting
    the other corpora choose and how it does on the one they did not see."""

    corpora: list[str]
    budgets: tuple[int, ...]
    settings: list[Setting]
    held_out: dict[str, Setting]  # corpus -> the setting chosen on all the others
    default: Setting
    regret: dict[str, float] = field(default_factory=dict)

    def table(self) -> str:
        names = self.corpora
        lines = [
            f"leave-one-corpus-out over {len(self.settings)} settings, answer recall (mean of budgets "
            f"{', '.join(map(str, self.budgets))})",
            "",
            "| held out | chosen on the others | " + " | ".join(names) + " | held-out regret |",
            "|---|---|" + "---|" * len(names) + "---|",
        ]
        for name, s in self.held_out.items():
            cells = [f"{s.recall[n]:.1%}" + (" (held out)" if n == name else "") for n in names]
            lines.append(f"| {name} | {s.label} | " + " | ".join(cells) + f" | {self.regret.get(name, 0.0):.1%} |")
        d = self.default
        lines.append("| **default** | " + d.label + " | " + " | ".join(f"{d.recall[n]:.1%}" for n in names) + " | |")
        lines.append(
            "(each row: the setting with the best mean recall on every corpus but the held-out one, ties to "
            "the simpler; regret: the best recall any setting reaches on the held-out corpus minus the "
            "choice's. The default: the setting most folds choose; ties: the best mean over all corpora, "
            "then the simpler)"
        )
        lines += [
            "",
            "every setting:",
            "| weights | " + " | ".join(names) + " | mean |",
            "|---|" + "---|" * (len(names) + 1),
        ]
        for s in sorted(self.settings, key=lambda s: (-mean(s.recall.values()), s.size)):
            cells = [f"{s.recall[n]:.1%}" for n in names] + [f"{mean(s.recall.values()):.1%}"]
            lines.append(f"| {s.label} | " + " | ".join(cells) + " |")
        return "\n".join(lines)


def _recall(records: Sequence[Mapping[str, Any]], budgets: Sequence[int], options: Mapping[str, Any]) -> float:
    assembler = Assembler(**options)
    kept = []
    for r in records:
        q = Question.from_dict(r, index=0)
        if not q.answer:
            continue
        for b in budgets:
            res = assembler.run(q.question, r["candidates"], budget=b, target_version=_version(r))
            kept.append(bool(context_metrics(q, res).answer_kept))
    if not kept:
        raise ConfigError("no question has 'answer' strings: answer recall cannot be measured")
    return round(mean(kept), 4)


def loco(
    corpora: Mapping[str, Sequence[Mapping[str, Any]]],
    *,
    budgets: Sequence[int] = LOCO_BUDGETS,
    lexical: Sequence[float] = LEXICAL_GRID,
    define: Sequence[float] = DEFINE_GRID,
    phrase: Sequence[float] = PHRASE_GRID,
    fuse: Sequence[float | None] = (None,),
    **options: Any,
) -> Loco:
    """Leave one corpus out: hold each corpus out in turn, choose the relevance weights on
    all the others (best mean recall, ties to the simpler setting, see
    :attr:`Setting.size`) and measure the choice on the held-out one. The returned
    ``default`` is the setting most folds choose (ties: the best mean over all corpora,
    then the simpler). With two corpora each fold chooses on the other one alone.

    :param corpora: name -> labelled records (at least two corpora).
    :param phrase: weights of the ``phrase`` signal to try (default: its default alone).
    :param fuse: rerank fusion weights to try (only with a ``reranker`` in ``options``).
    :raises ConfigError: fewer than two corpora, or a corpus without answer strings.
    """
    if len(corpora) < 2:
        raise ConfigError(f"leave-one-corpus-out needs at least two corpora, got {len(corpora)}")
    settings: list[Setting] = []
    for f in fuse:
        for lx, df, ph in itertools.product(lexical, define, phrase):
            weights = {"order": 1.0, "lexical": lx, "define": df, "phrase": ph}
            extra = dict(options, weights={k: v for k, v in weights.items() if v})
            if f is not None:
                extra["rerank_fuse"] = f
            recall = {n: _recall(recs, budgets, extra) for n, recs in corpora.items()}
            settings.append(Setting(weights, f, recall))

    def chosen_without(name: str) -> Setting:
        """The setting with the best mean recall on every corpus but ``name``; ties: the
        simpler (more conservative) one."""
        others = [m for m in corpora if m != name]
        return max(settings, key=lambda s: (mean(s.recall[m] for m in others), -s.size))

    held_out = {n: chosen_without(n) for n in corpora}
    best = {n: max(s.recall[n] for s in settings) for n in corpora}
    regret = {n: best[n] - s.recall[n] for n, s in held_out.items()}
    votes = Counter(s.label for s in held_out.values())
    default = max(held_out.values(), key=lambda s: (votes[s.label], mean(s.recall.values()), -s.size))
    return Loco(list(corpora), tuple(budgets), settings, held_out, default, regret)
