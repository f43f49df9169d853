"""PNG plots of the probe, the dilution curve, the position histogram and the A/B budgets
(matplotlib, Agg).

Each function reads only the fields it draws, described by a :class:`~typing.Protocol`
below, so this module imports no other evaluation module: the result classes
(:mod:`ctxassembly.eval.results`) call these functions from their ``plot`` methods.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO, Protocol

from ctxassembly.errors import MissingExtraError

__all__ = ["plot_budgets", "plot_dilution", "plot_histogram", "plot_probe"]


class ProbeLike(Protocol):
    """What :func:`plot_probe` reads (a :class:`~ctxassembly.eval.results.ProbeResult`)."""

    @property
    def n_docs(self) -> int: ...
    @property
    def trials(self) -> int: ...
    @property
    def accuracy(self) -> Mapping[int, float]: ...


class DilutionLike(Protocol):
    """What :func:`plot_dilution` reads (a :class:`~ctxassembly.eval.results.DilutionResult`)."""

    @property
    def sizes(self) -> Sequence[int]: ...
    @property
    def placements(self) -> Sequence[str]: ...
    @property
    def accuracy(self) -> Mapping[str, Mapping[int, float | None]]: ...


class HistogramLike(Protocol):
    """What :func:`plot_histogram` reads (a :class:`~ctxassembly.eval.results.HistogramResult`)."""

    @property
    def present(self) -> Sequence[int]: ...
    @property
    def cite_rate(self) -> Sequence[float]: ...
    @property
    def use_rate(self) -> Sequence[float]: ...
    @property
    def rows(self) -> Sequence[object]: ...


class BudgetsLike(Protocol):
    """What :func:`plot_budgets` reads (an :class:`~ctxassembly.eval.results.ABResult`)."""

    @property
    def reader(self) -> str | None: ...
    @property
    def pipelines(self) -> Sequence[str]: ...
    @property
    def budgets(self) -> Sequence[int]: ...
    def cell(self, pipeline: str, budget: int) -> dict[str, Any]: ...


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError as e:
        raise MissingExtraError("matplotlib", "eval") from e
    matplotlib.use("Agg")  # files only: no display on servers and CI
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: str | Path | BinaryIO) -> str:
    """Write ``fig`` as a PNG to a path (parents made) or a binary file object; close it."""
    fig.tight_layout()
    if isinstance(path, (str, Path)):
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(out, dpi=110)
        where = str(out)
    else:
        fig.savefig(path, dpi=110, format="png")
        where = "<stream>"
    _pyplot().close(fig)
    return where


def plot_probe(result: ProbeLike, path: str | Path | BinaryIO) -> str:
    """Accuracy by position of the planted fact."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.6))
    xs = list(result.accuracy)
    ax.plot(xs, [result.accuracy[x] for x in xs], marker="o")
    ax.set(
        xlabel=f"position of the planted fact (0 = first of {result.n_docs})",
        ylabel="accuracy",
        ylim=(-0.05, 1.05),
        title=f"Planted-fact probe ({result.trials} trial(s) per position)",
    )
    ax.set_xticks(xs)
    ax.grid(alpha=0.3)
    return _save(fig, path)


def plot_dilution(result: DilutionLike, path: str | Path | BinaryIO) -> str:
    """Accuracy against distractor count, one line per gold placement."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for p in result.placements:
        pts = [(k, v) for k, v in result.accuracy[p].items() if v is not None]
        ax.plot([k for k, _ in pts], [v for _, v in pts], marker="o", label=f"gold {p}")
    ax.set(xlabel="distractors added", ylabel="accuracy", ylim=(-0.05, 1.05), title="Dilution curve")
    ax.set_xticks(list(result.sizes))
    ax.legend()
    ax.grid(alpha=0.3)
    return _save(fig, path)


def plot_histogram(result: HistogramLike, path: str | Path | BinaryIO) -> str:
    """Cite and use rate by position, with how many contexts reach each position."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(6, 0.5 * len(result.present)), 3.6))
    xs = list(range(len(result.present)))
    w = 0.4
    ax.bar([x - w / 2 for x in xs], result.cite_rate, width=w, label="cited")
    ax.bar([x + w / 2 for x in xs], result.use_rate, width=w, label="answered from")
    ax.set(
        xlabel="position in the context (0 = first)",
        ylabel="share of contexts",
        ylim=(0, 1.05),
        title=f"Citations by position ({len(result.rows)} questions)",
    )
    ax.set_xticks(xs)
    ax.legend()
    return _save(fig, path)


def plot_budgets(result: BudgetsLike, path: str | Path | BinaryIO) -> str:
    """A/B metrics by budget, one line per pipeline: answer kept and wrong-version
    exposure (and reader accuracy when the run had a reader)."""
    plt = _pyplot()
    panels = [("answer_kept", "answer kept"), ("wrong_exposure", "wrong exposure")]
    if result.reader is not None:
        panels.append(("accuracy", "reader accuracy"))
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.6), squeeze=False)
    budgets = sorted(set(result.budgets))
    for ax, (key, label) in zip(axes[0], panels, strict=True):
        for name in result.pipelines:
            pts = [(b, result.cell(name, b)[key]) for b in budgets]
            pts = [(b, v) for b, v in pts if v is not None]
            ax.plot([b for b, _ in pts], [v for _, v in pts], marker="o", label=name)
        ax.set(xlabel="token budget", ylabel=label, ylim=(-0.05, 1.05), title=f"{label} by budget")
        ax.set_xticks(budgets)
        ax.grid(alpha=0.3)
    axes[0][0].legend()
    return _save(fig, path)
