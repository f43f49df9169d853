"""The pipeline contract and its run loop.

A stage has a ``name`` and one ``run(chunks, ctx)`` that returns chunks (new objects
where it changed them; every chunk it removes gets one ``ctx.report.drop``). Built-in
stages subclass :class:`StageBase`, which also declares what the pipeline may ask of
them: the tokens they keep back (``reserve``) and whether they call a model
(``uses_model``). A custom stage that has only ``name`` and ``run`` works as well: it
reserves nothing and counts as model-free.

:func:`run` runs the stages in order. A :class:`Widening` stage (the horizon) cuts the
list short for the costly stages after it; when its :meth:`~Widening.starved` says the
cut left the budget unspent, the pipeline forgets what the stages after it recorded and
runs them again with the cut widened (:attr:`Cascade.widened` one higher).
:func:`fit_rendered` renders the result and drops the lowest-ranked chunk until the
rendered text fits the budget.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple, Protocol, runtime_checkable

from ctxassembly.chunk import Chunk
from ctxassembly.report import Report
from ctxassembly.text.selection import removed_passages
from ctxassembly.tokens import TokenCounter, get_counter

__all__ = [
    "Cascade",
    "Context",
    "Selection",
    "Stage",
    "StageBase",
    "Traits",
    "Widening",
    "fit_rendered",
    "run",
    "traits",
]


@dataclass(frozen=True, slots=True)
class Selection:
    """What the select stage spent: the horizon reads it to tell a full selection from
    a starved one."""

    tokens: int  # tokens of the chunks kept
    available: int  # the budget select had (budget minus its reserve)
    overflow: int  # chunks that did not fit


@dataclass(slots=True)
class Cascade:
    """The state one pass of the stages after a horizon shares; a new pass starts from
    the state before the first one, with ``widened`` one higher."""

    widened: int = 0  # how many times the horizon has been doubled
    horizon_total: int | None = None  # chunks that reached the horizon
    horizon_cut: int | None = None  # how many of them it passed on
    selection: Selection | None = None  # what select spent (None: no select ran)


@dataclass
class Context:
    """What every stage may read about the call, and the report it writes to.

    ``count_tokens`` is a :class:`~ctxassembly.tokens.TokenCounter` (a plain callable
    ``text -> int`` is wrapped in one, without a lower bound).
    """

    question: str
    budget: int
    report: Report
    count_tokens: TokenCounter
    target_version: str | None = None
    principals: frozenset[str] | None = None
    cascade: Cascade = field(default_factory=Cascade)

    def __post_init__(self) -> None:
        if not isinstance(self.count_tokens, TokenCounter):
            self.count_tokens = get_counter(self.count_tokens)

    def note_cut(self, stage: str, event: str, chunk: Chunk, text: str) -> None:
        """Note in the report that ``stage`` cut ``chunk`` down to ``text`` (``event`` says
        how: ``excerpted``, ``extracted``...), with its tokens before and after and the
        first words of the paragraphs it removed (``removed``, at most five)."""
        count = self.count_tokens
        self.report.note(
            stage,
            event,
            id=chunk.id,
            index=chunk.index,
            tokens_before=count(chunk.text),
            tokens_after=count(text),
            removed=removed_passages(chunk.text, text),
        )


@runtime_checkable
class Stage(Protocol):
    """A pipeline step. It never mutates its input: changed chunks are new objects.

    Every chunk it removes gets exactly one ``ctx.report.drop(...)`` call.
    """

    name: str

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]: ...


class StageBase:
    """The base of the built-in stages: declares what the pipeline may ask of a stage.
    A subclass defines ``name`` and ``run``; one without ``run`` is no :class:`Stage`, and
    the Assembler refuses it when it is built.

    :cvar reserve: tokens of the budget the stage keeps back (the final fit honours it).
    :cvar uses_model: the stage calls a model, so :meth:`Assembler.arun
        <ctxassembly.assembler.Assembler.arun>` runs the pipeline in a worker thread.
    """

    name: str
    reserve: int = 0
    uses_model: bool = False


@runtime_checkable
class Widening(Stage, Protocol):
    """A stage that cuts the list short and can tell, after the stages behind it ran,
    that the cut starved them (the horizon)."""

    def starved(self, ctx: Context) -> bool: ...


class Traits(NamedTuple):
    reserve: int
    uses_model: bool


def traits(stage: Stage) -> Traits:
    """What ``stage`` declares: a :class:`StageBase`'s ``reserve`` and ``uses_model``;
    for any other stage, no reserve and no model."""
    if isinstance(stage, StageBase):
        return Traits(stage.reserve, stage.uses_model)
    return Traits(0, False)


def run(stages: Sequence[Stage], chunks: list[Chunk], ctx: Context) -> list[Chunk]:
    """Run ``stages`` in order; from the first :class:`Widening` stage on, again while it
    says the pass starved (the report and ``ctx.cascade`` of the starved pass are
    rolled back, and ``ctx.cascade.widened`` goes one up)."""
    at = next((i for i, s in enumerate(stages) if isinstance(s, Widening)), len(stages))
    head = _run(stages[:at], chunks, ctx)
    if at == len(stages):
        return head
    widening = stages[at]
    assert isinstance(widening, Widening)  # for mypy: found above
    mark, start = ctx.report.mark(), replace(ctx.cascade)
    while True:
        out = _run(stages[at:], head, ctx)
        if not widening.starved(ctx):
            return out
        ctx.report.rollback(mark)
        ctx.cascade = replace(start, widened=ctx.cascade.widened + 1)


def _run(stages: Sequence[Stage], chunks: list[Chunk], ctx: Context) -> list[Chunk]:
    report = ctx.report
    for stage in stages:
        t0 = time.perf_counter()
        n_in = len(chunks)
        chunks = stage.run(chunks, ctx)
        # a stage run again after the horizon widens adds its time; counts are the last pass's
        report.timings_ms[stage.name] = report.timings_ms.get(stage.name, 0.0) + (time.perf_counter() - t0) * 1000
        report.stage_counts[stage.name] = {"in": n_in, "out": len(chunks)}
    return chunks


def fit_rendered(
    chunks: Sequence[Chunk], ctx: Context, render: Callable[[Sequence[Chunk]], str], limit: int
) -> tuple[list[Chunk], str]:
    """Render ``chunks`` and guarantee ``limit`` tokens on the real rendered text (BPE
    merges across block boundaries can differ from the per-block sum by a token or
    two): the lowest-ranked chunk leaves (``render``/``over_budget``) until it fits."""
    final = list(chunks)
    text = render(final)
    while final and ctx.count_tokens(text) > limit:
        worst = max(range(len(final)), key=lambda i: final[i].meta.get("relevance_rank", i))
        ctx.report.drop(final[worst], "render", "over_budget", why="rendered context over budget")
        del final[worst]
        text = render(final)
    return final, text
