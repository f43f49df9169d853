"""Assembly over many questions at once: an in-process loop, or Ray Data across a cluster.

Both engines build one :class:`~ctxassembly.Assembler` per worker (the in-process loop
has one worker: this process) and call it on each item, so they return the same
results: the same chunks in the same order, the same rendered text and the same report
(timings aside). The Ray engine (extra ``ray``) puts the items in a ``ray.data`` dataset
and runs ``map_batches`` with a class whose ``__init__`` builds the assembler, so a
model loads once per worker, not once per batch; results come back in input order.

Ray is started locally when it is not running (``ray.init(num_cpus=...)``); to use a
cluster, call ``ray.init(address=...)`` first and ctxassembly joins it.

Usage::

    from ctxassembly.batch import assemble_many
    results = assemble_many(items, budget=1000, engine="ray")   # items: questions + candidates
    results[0].chunks, results[0].report.table()
"""

from __future__ import annotations

import pickle
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal, get_args

from ctxassembly.assembler import Assembled, Assembler
from ctxassembly.errors import ConfigError, MissingExtraError
from ctxassembly.tokens import get_counter

__all__ = ["ENGINES", "Engine", "assemble_many", "evaluate_many", "parse_engine"]

Engine = Literal["local", "ray"]
ENGINES: tuple[str, ...] = get_args(Engine)
Item = tuple[str, Sequence[Any], "str | None"]


def parse_engine(value: object) -> Engine:
    """``value`` as an :data:`Engine`.

    :raises ConfigError: anything else (the message lists the engines).
    """
    if value not in ENGINES:
        raise ConfigError(f"engine must be one of {', '.join(map(repr, ENGINES))}, got {value!r}")
    return value  # type: ignore[return-value]


def _item(obj: object, i: int) -> Item:
    """``(question, candidates, target_version)`` from a mapping or a labelled Question.

    A labelled record with ``version_explicit`` false passes no version: a fair call tells
    the pipeline the version only when the user named it (the benchmark's "fair use of a record").

    :raises ConfigError: no question string or no candidate list, naming the item.
    """
    if isinstance(obj, Mapping):
        get = obj.get
    elif hasattr(obj, "question") and hasattr(obj, "candidates"):

        def get(name: str, default: Any = None) -> Any:
            return getattr(obj, name, default)
    else:
        raise ConfigError(f"item {i}: expected a mapping or a Question, got {type(obj).__name__}")
    question, candidates, version = get("question"), get("candidates"), get("target_version")
    if get("version_explicit", True) is False:
        version = None
    if not isinstance(question, str):
        raise ConfigError(f"item {i}: field 'question': expected a string, got {question!r}")
    if isinstance(candidates, (str, bytes, Mapping)) or not isinstance(candidates, Iterable):
        raise ConfigError(f"item {i}: field 'candidates': expected a list of chunks, got {type(candidates).__name__}")
    if version is not None and not isinstance(version, str):
        raise ConfigError(f"item {i}: field 'target_version': expected a string or None, got {version!r}")
    return question, list(candidates), version


def _check(budget: object, batch_size: object) -> None:
    for name, value in (("budget", budget), ("batch_size", batch_size)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(f"{name} must be a positive int, got {value!r}")


def assemble_many(
    items: Iterable[object],
    *,
    budget: int,
    engine: Engine = "local",
    batch_size: int = 8,
    concurrency: int | None = None,
    num_cpus: int | None = None,
    **options: Any,
) -> list[Assembled]:
    """Assemble every item within ``budget``; results in input order.

    :param items: mappings with ``question``, ``candidates`` and optionally
        ``target_version``, or :class:`~ctxassembly.eval.Question` objects.
    :param engine: ``"local"`` (this process, the default) or ``"ray"`` (Ray Data).
    :param batch_size: items per ``map_batches`` call (Ray only).
    :param concurrency: Ray workers, each with its own assembler (default: the CPUs
        Ray has, at most the number of batches).
    :param num_cpus: CPUs of the local Ray started when none is running.
    :param options: :class:`~ctxassembly.Assembler` options, the same for every item.
        With Ray they are pickled to each worker: pass a model as a path or hub name so
        that each worker loads it itself.
    :raises ConfigError: a bad engine, budget, batch size or item; a bad option.
    :raises MissingExtraError: ``engine="ray"`` without Ray Data installed.
    """
    chosen = parse_engine(engine)
    _check(budget, batch_size)
    work = [_item(obj, i) for i, obj in enumerate(items)]
    if chosen == "local":
        return _Worker(budget, options).run(work)
    return _ray(work, budget=budget, batch_size=batch_size, concurrency=concurrency, num_cpus=num_cpus, options=options)


class _Worker:
    """One assembler, built once; the map_batches class of the Ray engine."""

    def __init__(self, budget: int, options: Mapping[str, Any]) -> None:
        self.budget = budget
        self.assembler = Assembler(**options)

    def run(self, work: Sequence[Item]) -> list[Assembled]:
        return [self.assembler.run(q, c, budget=self.budget, target_version=v) for q, c, v in work]

    def __call__(self, batch: Mapping[str, Any]) -> dict[str, Any]:
        import numpy as np

        work = [pickle.loads(b) for b in batch["item"]]
        out = [pickle.dumps(_portable(a), protocol=pickle.HIGHEST_PROTOCOL) for a in self.run(work)]
        return {"i": np.asarray(batch["i"]), "result": np.array(out, dtype=object)}


def _portable(assembled: Assembled) -> Assembled:
    """A copy that pickles: the report's token counter (an lru_cache around a closure)
    stays behind; the driver gives the report its own counter back (:func:`_restore`)."""
    return replace(assembled, report=replace(assembled.report, count_tokens=None))


def _restore(assembled: Assembled, options: Mapping[str, Any]) -> Assembled:
    # tokens_before is computed on demand from the inputs with this counter
    assembled.report.count_tokens = get_counter(options.get("tokenizer"))
    return assembled


def _ray_modules() -> tuple[Any, Any]:
    try:
        import ray
        import ray.data
    except ImportError as e:
        raise MissingExtraError("ray[data]", "ray") from e
    return ray, ray.data


def _ray(
    work: list[Item],
    *,
    budget: int,
    batch_size: int,
    concurrency: int | None,
    num_cpus: int | None,
    options: Mapping[str, Any],
) -> list[Assembled]:
    if not work:
        return []
    ray, data = _ray_modules()
    if not ray.is_initialized():
        ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)
    ctx = data.DataContext.get_current()
    ctx.enable_progress_bars = False
    batches = -(-len(work) // batch_size)
    if concurrency is None:
        concurrency = max(1, min(batches, int(ray.available_resources().get("CPU", 1))))
    rows = [{"i": i, "item": pickle.dumps(w, protocol=pickle.HIGHEST_PROTOCOL)} for i, w in enumerate(work)]
    ds = data.from_items(rows, override_num_blocks=batches).map_batches(
        _Worker,
        fn_constructor_kwargs={"budget": budget, "options": dict(options)},
        batch_size=batch_size,
        batch_format="numpy",
        compute=data.ActorPoolStrategy(size=concurrency),
        num_cpus=1,
    )
    out: list[Assembled | None] = [None] * len(work)
    for row in ds.take_all():
        out[int(row["i"])] = _restore(pickle.loads(row["result"]), options)
    missing = [i for i, a in enumerate(out) if a is None]
    if missing:  # Ray Data returns every row or raises; this guards a silent loss
        raise RuntimeError(f"Ray returned no result for items {missing[:10]}")
    return [a for a in out if a is not None]


def evaluate_many(
    questions: Sequence[Any],
    *,
    budget: int,
    engine: Engine = "local",
    batch_size: int = 8,
    concurrency: int | None = None,
    num_cpus: int | None = None,
    **options: Any,
) -> Any:
    """Context metrics of the labelled ``questions`` (:class:`~ctxassembly.eval.Question`)
    assembled by ``engine``: a :class:`~ctxassembly.eval.MetricsSummary`.

    :raises ConfigError: see :func:`assemble_many`.
    :raises MissingExtraError: see :func:`assemble_many`.
    """
    from ctxassembly.eval.metrics import context_metrics, summarize

    results = assemble_many(
        questions,
        budget=budget,
        engine=engine,
        batch_size=batch_size,
        concurrency=concurrency,
        num_cpus=num_cpus,
        **options,
    )
    rows = [context_metrics(q, a) for q, a in zip(questions, results, strict=True)]
    return summarize(rows, questions)
