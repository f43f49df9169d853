"""The results of the evaluation instruments: plain frozen dataclasses with ``to_dict`` /
``from_dict`` (JSON round trip), ``table()`` (aligned text) and, for the reader
experiments, ``plot(path)`` (a PNG through :mod:`ctxassembly.eval.plots`).

They live apart from the instruments that compute them so that the report and the plots
read results without importing the runner or the experiments (no import cycle).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from ctxassembly.errors import ConfigError
from ctxassembly.eval import plots
from ctxassembly.eval._common import table
from ctxassembly.eval.metrics import ContextMetrics

__all__ = [
    "COLUMNS",
    "ABResult",
    "ABRow",
    "DilutionResult",
    "DilutionRow",
    "HistogramResult",
    "HistogramRow",
    "ProbeResult",
    "ProbeTrial",
    "fmt_cell",
    "summary_rows",
]


# -- planted-fact probe ------------------------------------------------------------
@dataclass(frozen=True)
class ProbeTrial:
    """One reader call: the fact at ``position`` of ``n_docs`` documents."""

    trial: int
    position: int
    n_docs: int
    answer: str
    response: str
    correct: bool


@dataclass(frozen=True)
class ProbeResult:
    """Accuracy by position (``accuracy[p]``: share of trials answered correctly with the
    fact at position ``p``, 0-based), and every trial."""

    n_docs: int
    trials: int
    placement: str
    accuracy: dict[int, float]
    rows: list[ProbeTrial] = field(default_factory=list, repr=False)

    @property
    def overall(self) -> float:
        return round(sum(r.correct for r in self.rows) / len(self.rows), 4) if self.rows else 0.0

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["accuracy"] = {str(k): v for k, v in self.accuracy.items()}
        out["overall"] = self.overall
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProbeResult:
        """Read back what :meth:`to_dict` wrote (e.g. ``ctxassembly probe --json``).

        :raises ConfigError: a missing key.
        """
        try:
            return cls(
                n_docs=int(data["n_docs"]),
                trials=int(data["trials"]),
                placement=str(data["placement"]),
                accuracy={int(k): float(v) for k, v in data["accuracy"].items()},
                rows=[ProbeTrial(**r) for r in data.get("rows", [])],
            )
        except KeyError as e:
            raise ConfigError(f"probe result: missing key {e}") from None

    def table(self) -> str:
        rows: list[list[object]] = [["position", "of", "accuracy", "trials"]]
        for p, acc in self.accuracy.items():
            rows.append([p, self.n_docs, f"{acc:.2f}", sum(r.position == p for r in self.rows)])
        return table(rows)

    def __str__(self) -> str:
        return self.table()

    def plot(self, path: str | Path | BinaryIO) -> str:
        """Save the curve as a PNG at ``path`` (matplotlib, Agg backend)."""
        return plots.plot_probe(self, path)


# -- dilution curve ---------------------------------------------------------------
@dataclass(frozen=True)
class DilutionRow:
    qid: str
    size: int
    placement: str
    position: int
    n_docs: int
    correct: bool
    response: str


@dataclass(frozen=True)
class DilutionResult:
    """``accuracy[placement][size]``: share of questions answered with ``size``
    distractors and the gold at ``placement``. ``skipped`` names the questions that had
    no answer-bearing candidate (and why)."""

    sizes: tuple[int, ...]
    placements: tuple[str, ...]
    accuracy: dict[str, dict[int, float | None]]
    rows: list[DilutionRow] = field(default_factory=list, repr=False)
    skipped: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["accuracy"] = {p: {str(k): v for k, v in by.items()} for p, by in self.accuracy.items()}
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DilutionResult:
        """Read back what :meth:`to_dict` wrote (e.g. ``ctxassembly dilution --json``).

        :raises ConfigError: a missing key.
        """
        try:
            return cls(
                sizes=tuple(int(k) for k in data["sizes"]),
                placements=tuple(data["placements"]),
                accuracy={p: {int(k): v for k, v in by.items()} for p, by in data["accuracy"].items()},
                rows=[DilutionRow(**r) for r in data.get("rows", [])],
                skipped=dict(data.get("skipped", {})),
            )
        except KeyError as e:
            raise ConfigError(f"dilution result: missing key {e}") from None

    def table(self) -> str:
        rows: list[list[object]] = [["gold placed", *[f"+{k} distractors" for k in self.sizes]]]
        for p in self.placements:
            rows.append([p, *[_rate(self.accuracy[p][k]) for k in self.sizes]])
        return table(rows)

    def __str__(self) -> str:
        return self.table()

    def plot(self, path: str | Path | BinaryIO) -> str:
        """Save accuracy against distractor count, one line per placement, as a PNG."""
        return plots.plot_dilution(self, path)


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


# -- citation histogram -----------------------------------------------------------
@dataclass(frozen=True)
class HistogramRow:
    qid: str
    n_docs: int
    cited: tuple[int, ...]
    answer_positions: tuple[int, ...]
    correct: bool | None
    response: str


@dataclass(frozen=True)
class HistogramResult:
    """Counts by 0-based position: ``present``, ``cited``, ``used``; rates are count / present."""

    present: list[int]
    cited: list[int]
    used: list[int]
    rows: list[HistogramRow] = field(default_factory=list, repr=False)

    @property
    def cite_rate(self) -> list[float]:
        return [round(c / n, 4) if n else 0.0 for c, n in zip(self.cited, self.present, strict=True)]

    @property
    def use_rate(self) -> list[float]:
        return [round(u / n, 4) if n else 0.0 for u, n in zip(self.used, self.present, strict=True)]

    @property
    def uncited(self) -> int:
        """Replies that cited no document of their context."""
        return sum(not r.cited for r in self.rows)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["cite_rate"], out["use_rate"], out["uncited"] = self.cite_rate, self.use_rate, self.uncited
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> HistogramResult:
        """Read back what :meth:`to_dict` wrote (e.g. ``ctxassembly histogram --json``).

        :raises ConfigError: a missing key.
        """
        try:
            rows = [
                HistogramRow(
                    r["qid"], r["n_docs"], tuple(r["cited"]), tuple(r["answer_positions"]), r["correct"], r["response"]
                )
                for r in data.get("rows", [])
            ]
            return cls(present=list(data["present"]), cited=list(data["cited"]), used=list(data["used"]), rows=rows)
        except KeyError as e:
            raise ConfigError(f"histogram result: missing key {e}") from None

    def table(self) -> str:
        rows: list[list[object]] = [["position", "present", "cited", "cite rate", "used", "use rate"]]
        for p, n in enumerate(self.present):
            rows.append([p, n, self.cited[p], f"{self.cite_rate[p]:.2f}", self.used[p], f"{self.use_rate[p]:.2f}"])
        return table(rows)

    def __str__(self) -> str:
        return self.table()

    def plot(self, path: str | Path | BinaryIO) -> str:
        """Save the cite and use rates by position as a PNG bar chart."""
        return plots.plot_histogram(self, path)


# -- A/B runner -------------------------------------------------------------------
@dataclass(frozen=True)
class ABRow:
    """One question through one pipeline at one budget: the context metrics, and the
    reader's answer when there is a reader (``answer``/``correct`` ``None`` without)."""

    qid: str
    pipeline: str
    budget: int
    metrics: ContextMetrics
    answer: str | None = None
    correct: bool | None = None
    latency_ms: float | None = None
    reader_ms: float | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Flat: the metric fields beside the run fields (one CSV row)."""
        out: dict[str, Any] = {"qid": self.qid, "pipeline": self.pipeline, "budget": self.budget}
        out.update({k: v for k, v in self.metrics.to_dict().items() if k != "qid"})
        out.update(
            answer=self.answer,
            correct=self.correct,
            latency_ms=self.latency_ms,
            reader_ms=self.reader_ms,
            error=self.error,
        )
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ABRow:
        """The inverse of :meth:`to_dict` (for rows read back from JSON).

        :raises ConfigError: a row that lacks a field (named).
        """
        names = [f for f in ContextMetrics.__dataclass_fields__ if f != "qid"]
        missing = [k for k in ("qid", "pipeline", "budget", *names) if k not in data]
        if missing:
            raise ConfigError(f"row {data.get('qid')!r}: missing field(s) {missing}")
        values = {k: data[k] for k in names}
        values["wrong_exposed"] = tuple(values["wrong_exposed"] or ())
        return cls(
            qid=str(data["qid"]),
            pipeline=str(data["pipeline"]),
            budget=int(data["budget"]),
            metrics=ContextMetrics(qid=str(data["qid"]), **values),
            answer=data.get("answer"),
            correct=data.get("correct"),
            latency_ms=data.get("latency_ms"),
            reader_ms=data.get("reader_ms"),
            error=data.get("error"),
        )


@dataclass(frozen=True)
class ABResult:
    """Per-question :class:`ABRow` s and one summary dict per pipeline × budget (means
    over the questions each metric applies to; ``accuracy`` over the scored answers)."""

    pipelines: tuple[str, ...]
    budgets: tuple[int, ...]
    rows: list[ABRow] = field(default_factory=list, repr=False)
    summary: list[dict[str, Any]] = field(default_factory=list)
    reader: str | None = None

    def cell(self, pipeline: str, budget: int) -> dict[str, Any]:
        """The summary of one pipeline at one budget.

        :raises KeyError: a pipeline or budget that was not run.
        """
        for s in self.summary:
            if s["pipeline"] == pipeline and s["budget"] == budget:
                return s
        raise KeyError(f"no summary for pipeline {pipeline!r} at budget {budget}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "pipelines": list(self.pipelines),
            "budgets": list(self.budgets),
            "reader": self.reader,
            "summary": self.summary,
            "rows": [r.to_dict() for r in self.rows],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ABResult:
        """Read back what :meth:`to_dict` wrote (e.g. a ``--json`` file).

        :raises ConfigError: a missing key or row field.
        """
        try:
            return cls(
                pipelines=tuple(data["pipelines"]),
                budgets=tuple(int(b) for b in data["budgets"]),
                rows=[ABRow.from_dict(r) for r in data["rows"]],
                summary=[dict(s) for s in data["summary"]],
                reader=data.get("reader"),
            )
        except KeyError as e:
            raise ConfigError(f"A/B result: missing key {e}") from None

    def table(self) -> str:
        """The summary as aligned plain text (see :mod:`ctxassembly.eval.report` for rich,
        Markdown and HTML)."""
        return table(summary_rows(self))


# summary column: (key, header, kind) — kind: % rate, n count, t tokens, ms milliseconds
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("pipeline", "pipeline", "s"),
    ("budget", "budget", "n"),
    ("n", "n", "n"),
    ("answer_kept", "answer kept", "%"),
    ("accuracy", "correct", "%"),
    ("wrong_exposure", "wrong exposed", "%"),
    ("context_recall", "recall", "%"),
    ("context_precision", "precision", "%"),
    ("duplicate_share", "dup share", "%"),
    ("off_version_share", "off version", "%"),
    ("tokens_mean", "tokens", "t"),
    ("edge_rate", "edge", "%"),
    ("middle_rate", "middle", "%"),
    ("injection_pass", "injection", "%"),
    ("latency_ms_median", "ms p50", "ms"),
    ("errors", "errors", "n"),
)


def fmt_cell(value: object, kind: str) -> str:
    """One summary cell as text: ``%`` rate, ``t`` tokens, ``ms`` milliseconds, ``n/a`` for None."""
    if value is None:
        return "n/a"
    if kind == "%" and isinstance(value, (int, float)):
        return f"{100 * value:.1f}%"
    if kind == "t" and isinstance(value, (int, float)):
        return f"{value:.0f}"
    if kind == "ms" and isinstance(value, (int, float)):
        return f"{value:.1f}"
    return str(value)


def _columns(result: ABResult) -> list[tuple[str, str, str]]:
    """The columns that say something for this run (no reader: no reader column)."""
    return [c for c in COLUMNS if c[0] != "accuracy" or result.reader is not None]


def summary_rows(result: ABResult) -> list[list[str]]:
    """The summary as rows of formatted cells, the header first."""
    cols = _columns(result)
    return [[h for _, h, _ in cols], *[[fmt_cell(s.get(k), kind) for k, _, kind in cols] for s in result.summary]]
