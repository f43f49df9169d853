"""The pipeline contract and its run loop.

A stage has a ``name`` and one ``run(chunks, ctx)`` that returns chunks (new objects
where it changed them; every chunk it removes gets one ``ctx.report.drop``). Built-in
stages subclass :class:`StageBase`, which also declares what the pipeline may ask of
them: the tokens they keep back (``reserve``) and whether they call a model
(``uses_model``). A custom stage that has only ``name`` and ``run`` works as well: it
reserves nothing and counts as model-free.

:func:`run` runs the stages in order. A :class:`Widening` stage (the depth, the horizon) cuts the
list short for the costly stages after it; when its :meth:`~Widening.starved` says the
cut left the budget unspent, the pipeline forgets what the stages after it recorded and
runs them again with the cut widened (``ledger.call.widened`` one higher). What a stage
tells another it writes to the call's :class:`~ctxassembly.ledger.Ledger`, declaring
the facts in its ``reads`` and ``writes`` (:func:`check_declared`).
:func:`fit_rendered` renders the result and drops the lowest-ranked chunk until the
rendered text fits the budget.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple, Protocol, runtime_checkable

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.kinds import Reason
from ctxassembly.ledger import CALL, FACTS, Ledger, Selection
from ctxassembly.report import Report
from ctxassembly.text.selection import removed_passages
from ctxassembly.tokens import CachedCounter, TokenCounter, count_joined, get_counter

__all__ = [
    "SHRINK_SLACK",
    "Context",
    "Selection",
    "Stage",
    "StageBase",
    "Traits",
    "Widening",
    "check_declared",
    "fit_rendered",
    "run",
    "traits",
]


@dataclass(frozen=True)
class Context:
    """What every stage may read about the call (frozen), and the records it writes to:
    ``report`` (fates and notes) and ``ledger`` (the facts, :mod:`ctxassembly.ledger`).

    ``count_tokens`` is a :class:`~ctxassembly.tokens.TokenCounter` (a plain callable
    ``text -> int`` is wrapped in one, without a lower bound). ``target_version`` is the
    caller's; the version stage's target is ``ledger.call.target_version``.
    """

    question: str
    budget: int
    report: Report
    count_tokens: TokenCounter
    target_version: str | None = None
    principals: frozenset[str] | None = None

    def __post_init__(self) -> None:
        # the cached counter first: isinstance against the runtime protocol costs ~10 us
        if not isinstance(self.count_tokens, CachedCounter) and not isinstance(self.count_tokens, TokenCounter):
            object.__setattr__(self, "count_tokens", get_counter(self.count_tokens))
        if self.target_version is not None and self.report.ledger.call.target_version is None:
            self.report.ledger.update_call(target_version=self.target_version)

    @property
    def ledger(self) -> Ledger:
        """The call's facts (the report's ledger)."""
        return self.report.ledger

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
    :cvar reads: the ledger facts the stage reads (:class:`~ctxassembly.ledger.Facts` and
        :class:`~ctxassembly.ledger.Call` field names).
    :cvar writes: the ledger facts it writes; writing any other raises.
    :cvar shrinks: the stage never adds a chunk and never makes one cost select more than a
        few tokens (:data:`SHRINK_SLACK`) beyond its whole cost before the stage (it drops,
        reorders, cuts or joins): a widening stage may then judge a pass from the chunks
        before it (:meth:`Depth.hopeless <ctxassembly.stages.horizon.Depth.hopeless>`).
        ``False`` (the default) for any stage that may write new text.
    """

    name: str
    reserve: int = 0
    uses_model: bool = False
    reads: ClassVar[frozenset[str]] = frozenset()
    writes: ClassVar[frozenset[str]] = frozenset()
    shrinks: ClassVar[bool] = False


#: tokens a shrinking stage may still add to one chunk's cost: a blank line bridging a
#: merge gap, a gap marker standing where an excerpt removed a block
SHRINK_SLACK = 8


@runtime_checkable
class Widening(Stage, Protocol):
    """A stage that cuts the list short and can tell, after the stages behind it ran,
    that the cut starved them (the horizon)."""

    def starved(self, ctx: Context) -> bool: ...


class Traits(NamedTuple):
    reserve: int
    uses_model: bool


def declared(stage: Stage) -> tuple[frozenset[str], frozenset[str]]:
    """What ``stage`` reads and writes of the ledger (nothing, for a plain stage)."""
    if isinstance(stage, StageBase):
        return stage.reads, stage.writes
    return frozenset(), frozenset()


def check_declared(stages: Sequence[Stage]) -> None:
    """Refuse a stage that declares a ledger fact that does not exist.

    :raises ConfigError: naming the stage, the name and the valid names.
    """
    valid = FACTS | CALL
    for stage in stages:
        reads, writes = declared(stage)
        unknown = sorted((reads | writes) - valid)
        if unknown:
            raise ConfigError(f"stage {stage.name!r} declares unknown ledger facts {unknown}; valid: {sorted(valid)}")


def traits(stage: Stage) -> Traits:
    """What ``stage`` declares: a :class:`StageBase`'s ``reserve`` and ``uses_model``;
    for any other stage, no reserve and no model."""
    if isinstance(stage, StageBase):
        return Traits(stage.reserve, stage.uses_model)
    return Traits(0, False)


class _Hopeless(Exception):
    """The pass under way will starve whatever the stages left in it do (see :func:`run`)."""


@dataclass(frozen=True)
class _Hooks:
    """What a widening stage offers :func:`run`, each ``None`` where the stage lacks it:
    ``starved(ctx)`` (the pass starved: widen), ``unsettled(out, ctx)`` with ``begin(ctx)``
    (the call facts of the next pass and of the first), ``hopeless(chunks, ctx, rest)`` and
    ``doomed(ctx)`` (the pass under way will be rolled back: stop it early)."""

    starved: Callable[[Context], bool] | None
    unsettled: Callable[[list[Chunk], Context], dict[str, object] | None] | None
    begin: Callable[[Context], dict[str, object]] | None
    hopeless: Callable[[list[Chunk], Context, Sequence[Stage]], bool] | None
    doomed: Callable[[Context], bool] | None

    @classmethod
    def of(cls, stage: Stage) -> _Hooks:
        """The hooks of ``stage``, read once per call.

        :raises ConfigError: an ``unsettled`` method without ``begin``, naming the stage.
        """

        def hook(name: str) -> Any:  # a duck-typed method: its signature is the field's
            f = getattr(stage, name, None)
            return f if callable(f) else None

        hooks = cls(hook("starved"), hook("unsettled"), hook("begin"), hook("hopeless"), hook("doomed"))
        if hooks.unsettled is not None and hooks.begin is None:
            raise ConfigError(f"stage {stage.name!r} has unsettled(out, ctx) but no begin(ctx): it needs both")
        return hooks


def run(
    stages: Sequence[Stage],
    chunks: list[Chunk],
    ctx: Context,
    hopeless: Callable[[list[Chunk], Sequence[Stage]], bool] | None = None,
    doomed: Callable[[Context], bool] | None = None,
) -> list[Chunk]:
    """Run ``stages`` in order; from each :class:`Widening` stage on, again while it says
    the pass starved (the report and the ledger of the starved pass are rolled back, and
    ``ledger.call.widened`` goes one up: every widening stage's cut doubles). A widening
    stage behind another (the horizon behind the depth) widens first, inside the pass.

    A widening stage with a ``hopeless(chunks, ctx, rest)`` method is asked once in each of
    its passes, before the next widening stage (the depth: after the version and relevance
    stages, before the horizon), whether the pass must starve whatever ``rest`` (the
    stages still to run in it) does; if so, the costly stages are not run for a pass that
    would be rolled back, and it widens at once. One with a ``doomed(ctx)`` method (a cheap
    test of the call's facts) is asked after each stage of its pass up to the next widening
    stage: once a stage has made the pass one to roll back (the version stage found no
    chunk of the target within the depth), the stages after it are not run at all.
    """
    at = next((i for i, s in enumerate(stages) if _widens(s)), len(stages))
    head = _run(stages[:at], chunks, ctx, doomed)
    if at == len(stages):
        return head
    if hopeless is not None and hopeless(head, stages[at:]):
        raise _Hopeless
    widening = stages[at]
    rest = stages[at + 1 :]
    hooks = _Hooks.of(widening)
    judge = hooks.hopeless
    check = None if judge is None else lambda chunks, left: bool(judge(chunks, ctx, left))
    ledger = ctx.ledger
    if hooks.begin is not None and hooks.unsettled is not None:
        ledger.update_call(**hooks.begin(ctx))
    mark, start = ctx.report.mark(), ledger.mark()
    while True:
        again: dict[str, object] | None
        try:
            out = run(rest, _run([widening], head, ctx), ctx, check, hooks.doomed)
        except _Hopeless:
            again = {"widened": ledger.call.widened + 1}
        else:
            if hooks.unsettled is not None:
                t0 = time.perf_counter()
                again = hooks.unsettled(out, ctx)  # its scan is the stage's time
                timings = ctx.report.timings_ms
                timings[widening.name] = timings.get(widening.name, 0.0) + (time.perf_counter() - t0) * 1000
            else:
                assert hooks.starved is not None  # a widening stage has one of the two (_widens)
                again = {"widened": ledger.call.widened + 1} if hooks.starved(ctx) else None
            if again is None:
                return out
        ctx.report.rollback(mark)
        ledger.rollback(start)
        ledger.update_call(**again)


def _widens(stage: Stage) -> bool:
    """``stage`` runs the stages after it again: a :class:`Widening` one (it has a
    ``starved`` method: what the protocol asks; ``isinstance`` against a runtime protocol
    costs about 20 us a stage, on every call), or one that settles the pass after it ran
    (``unsettled(out, ctx)``, with ``begin(ctx)``: the call facts of its first pass;
    ``unsettled`` gives those of the next one, ``None`` when the pass stands: the safety
    stage scanning only what the context would show)."""
    return callable(getattr(stage, "starved", None)) or callable(getattr(stage, "unsettled", None))


def _run(
    stages: Sequence[Stage], chunks: list[Chunk], ctx: Context, doomed: Callable[[Context], bool] | None = None
) -> list[Chunk]:
    """Run ``stages`` in order, timing each; ``doomed`` (a widening stage's, see :func:`run`)
    is asked after each stage and stops the pass (:class:`_Hopeless`) once it says so."""
    report, ledger = ctx.report, ctx.ledger
    for stage in stages:
        t0 = time.perf_counter()
        n_in = len(chunks)
        ledger.writer = (stage.name, declared(stage)[1])
        try:
            chunks = stage.run(chunks, ctx)
        finally:
            ledger.writer = None
        # a stage run again after the horizon widens adds its time; counts are the last pass's
        report.timings_ms[stage.name] = report.timings_ms.get(stage.name, 0.0) + (time.perf_counter() - t0) * 1000
        report.stage_counts[stage.name] = {"in": n_in, "out": len(chunks)}
        if doomed is not None and doomed(ctx):
            raise _Hopeless
    return chunks


def fit_rendered(
    chunks: Sequence[Chunk], ctx: Context, render: Callable[[Sequence[Chunk]], Sequence[str]], limit: int
) -> tuple[list[Chunk], str, int]:
    """Render ``chunks`` and guarantee ``limit`` tokens on the real rendered text (BPE
    merges across block boundaries can differ from the per-block sum by a token or
    two): the lowest-ranked chunk leaves (``render``/``over_budget``) until it fits.
    ``render`` gives the pieces the context joins (:meth:`Renderer.render_parts`), counted
    by :func:`~ctxassembly.tokens.count_joined`; returns the chunks, the text and its tokens."""
    final = list(chunks)
    parts = render(final)
    tokens = count_joined(ctx.count_tokens, parts)
    while final and tokens > limit:
        ledger = ctx.ledger
        worst = max(range(len(final)), key=lambda i: _rank(ledger, final[i], i))
        ctx.report.drop(final[worst], "render", Reason.OVER_BUDGET, why="rendered context over budget")
        del final[worst]
        parts = render(final)
        tokens = count_joined(ctx.count_tokens, parts)
    return final, "".join(parts), tokens


def _rank(ledger: Ledger, chunk: Chunk, default: int) -> int:
    rank = ledger[chunk.index].rank
    return default if rank is None else rank
