"""A/B runner: several pipelines × budgets over a labelled question file, one reader and
one prompt layout for all.

A *pipeline* is a callable ``(question, candidates, budget, target_version) -> context``
where the context is a list of chunks (``Chunk`` or chunk dicts, in final order), an
``Assembled``, or a rendered string. Every pipeline is called the same, fair way: the
question text, a deep copy of the retrieved candidates, the budget, and the target
version only when the question names it (:attr:`Question.asked_version`) — never the
gold ids, answers or wrong strings. Three are built in:

* ``raw``: naive top-k, candidates in retrieval order until the next would overflow
  the budget (duplicates, other versions and all);
* ``dedup``: the same after exact and near-duplicate removal (the ``Dedup`` stage alone);
* ``assembler``: the full model-free :class:`~ctxassembly.Assembler` (default options).

Chunk contexts are rendered with the same labelled XML layout, so every pipeline is
measured on, and the reader reads, the same kind of text. The token budget of ``raw``
and ``dedup`` is counted on that rendered text, as the assembler counts its own.
Without a reader the runner computes the context metrics (:mod:`ctxassembly.eval.metrics`);
with one it also asks the reader (documents, instructions, question last) and scores the
answer by normalised containment (:func:`~ctxassembly.eval.scoring.contains_answer`).

Usage::

    from ctxassembly.eval import load_questions
    from ctxassembly.eval.runner import run_ab
    result = run_ab(load_questions("questions.jsonl"), budgets=[1000, 500])
    print(result.table()); result.summary[0]
"""

from __future__ import annotations

import copy
import importlib
import importlib.util
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.eval._common import BRIEF, layout, to_chunk_list
from ctxassembly.eval.metrics import ContextMetrics, context_metrics, summarize, text_metrics
from ctxassembly.eval.questions import Question
from ctxassembly.eval.results import ABResult, ABRow
from ctxassembly.eval.scoring import contains_answer
from ctxassembly.llm.readers import as_reader
from ctxassembly.render import Renderer, prompt

__all__ = ["BUILTIN", "Pipeline", "dedup_only", "load_pipeline", "raw_topk", "run_ab"]

Pipeline = Callable[[str, list[dict[str, Any]], int, "str | None"], Any]

FMT: Literal["xml"] = "xml"  # one layout for every pipeline and the reader
_RENDER = Renderer(FMT)


def _fit_prefix(chunks: Sequence[Chunk], budget: int, count: Callable[[str], int]) -> list[Chunk]:
    """The longest prefix of ``chunks`` whose rendered context fits ``budget`` (break at
    the first chunk that does not fit: the naive truncation)."""
    kept: list[Chunk] = []
    for c in chunks:
        if count(_RENDER.render([*kept, c])) > budget:
            break
        kept.append(c)
    return kept


def raw_topk(question: str, candidates: list[dict[str, Any]], budget: int, target_version: str | None) -> list[Chunk]:
    """Naive top-k: retrieval order, truncated to the budget (the question and version
    are not read: that is what makes it naive)."""
    from ctxassembly.assembler import to_chunks
    from ctxassembly.tokens import get_counter

    return _fit_prefix(to_chunks(candidates), budget, get_counter(None))


def dedup_only(question: str, candidates: list[dict[str, Any]], budget: int, target_version: str | None) -> list[Chunk]:
    """Exact and near duplicates removed (the ``Dedup`` stage with its defaults, alone),
    then retrieval order truncated to the budget like :func:`raw_topk`."""
    from ctxassembly.assembler import Assembler
    from ctxassembly.stages.dedup import Dedup
    from ctxassembly.tokens import get_counter

    big = sys.maxsize  # the stage list has no select: the budget is applied below
    unique = Assembler(stages=[Dedup()]).run(question, candidates, budget=big, target_version=target_version)
    return _fit_prefix(unique.chunks, budget, get_counter(None))


def _assembler(options: Mapping[str, Any]) -> Pipeline:
    from ctxassembly.assembler import Assembler

    engine = Assembler(**options)

    def assembler(question: str, candidates: list[dict[str, Any]], budget: int, target_version: str | None) -> Any:
        return engine.run(question, candidates, budget=budget, target_version=target_version)

    return assembler


BUILTIN: tuple[str, ...] = ("raw", "dedup", "assembler")


def load_pipeline(spec: str) -> tuple[str, Pipeline]:
    """A pipeline from a CLI spec: a built-in name, or ``module:attr`` / ``file.py:attr``
    (``attr()`` calls a factory first); ``SPEC=label`` renames it.

    :raises ConfigError: an unknown name or a spec that names nothing importable (the
        message names the pipeline).
    """
    label = None
    if "=" in spec:
        spec, label = spec.rsplit("=", 1)
    if spec in BUILTIN:
        fn: Any = raw_topk if spec == "raw" else dedup_only if spec == "dedup" else _assembler({})
        return label if label is not None else spec, fn
    target, sep, attr = spec.rpartition(":")
    if not sep or not target or not attr:
        raise ConfigError(
            f"unknown pipeline {spec!r}: expected one of {', '.join(BUILTIN)} or 'module:attr' / 'file.py:attr'"
        )
    call = attr.endswith("()")
    name = attr.removesuffix("()")
    try:
        if target.endswith(".py"):
            path = Path(target).resolve()
            mod_spec = importlib.util.spec_from_file_location(f"_ctxassembly_pipeline_{path.stem}", path)
            if mod_spec is None or mod_spec.loader is None or not path.is_file():
                raise ImportError(f"no Python file at {str(path)!r}")
            module = importlib.util.module_from_spec(mod_spec)
            sys.modules[mod_spec.name] = module  # dataclasses and pickling look the module up by name
            mod_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(target)
        obj = getattr(module, name)
    except (ImportError, AttributeError, OSError) as e:
        raise ConfigError(f"pipeline {spec!r}: {e}") from None
    obj = obj() if call else obj
    if not callable(obj):
        raise ConfigError(f"pipeline {spec!r}: {type(obj).__name__} is not callable")
    return label if label is not None else name, obj


SUMMARY_KEYS = (
    "answer_kept",
    "accuracy",
    "wrong_exposure",
    "context_recall",
    "context_precision",
    "duplicate_share",
    "off_version_share",
    "tokens_mean",
    "edge_rate",
    "middle_rate",
    "injection_pass",
    "latency_ms_median",
)


def _summary(pipeline: str, budget: int, rows: Sequence[ABRow], questions: Sequence[Question]) -> dict[str, Any]:
    s = summarize([r.metrics for r in rows], questions).to_dict()
    s.pop("rows")
    scored = [r.correct for r in rows if r.correct is not None]
    lat = [r.latency_ms for r in rows if r.latency_ms is not None]
    return {
        "pipeline": pipeline,
        "budget": budget,
        **s,
        "errors": sum(r.error is not None for r in rows),
        "accuracy": round(sum(scored) / len(scored), 4) if scored else None,
        "latency_ms_median": round(statistics.median(lat), 3) if lat else None,
    }


def _fair_call(fn: Pipeline, q: Question, budget: int) -> tuple[object, float, str | None]:
    """Call ``fn`` the fair way; a crash is a recorded failure of that question."""
    candidates = copy.deepcopy([dict(c) for c in q.candidates])  # the pipeline may not touch ours
    t0 = time.perf_counter()
    try:
        out, err = fn(q.question, candidates, budget, q.asked_version), None
    except Exception as e:  # any crash of the code under test is that question's recorded failure, as in score.py
        out, err = [], f"{type(e).__name__}: {e}"
    return out, (time.perf_counter() - t0) * 1000, err


def _measure(q: Question, out: object) -> tuple[ContextMetrics, list[Chunk] | None, str]:
    """Metrics on the context as the reader sees it (chunks rendered in the common layout).

    :raises ConfigError: an output that is not chunks, an Assembled or a string.
    """
    if isinstance(out, str):
        return text_metrics(q, out), None, out
    chunks_attr = getattr(out, "chunks", None)
    chunks = list(chunks_attr) if isinstance(chunks_attr, list) else None
    if chunks is None:
        if isinstance(out, Mapping) or not isinstance(out, Iterable):
            raise ConfigError(f"returned {type(out).__name__}; expected a list of chunks, an Assembled or a str")
        chunks = to_chunk_list(out, "returned context")
    text = _RENDER.render(chunks)
    return context_metrics(q, chunks, text=text), chunks, text


def run_ab(
    questions: Sequence[Question],
    *,
    budgets: Sequence[int] = (1000,),
    pipelines: Mapping[str, Pipeline] | Sequence[str] | None = None,
    reader: object = None,
    reader_name: str | None = None,
    instructions: str | None = None,
    engine: str = "local",
    assemble_options: Mapping[str, Any] | None = None,
    on_step: Callable[[str, int, Question], None] | None = None,
) -> ABResult:
    """Run every pipeline at every budget on every question.

    :param pipelines: names (built-ins or ``module:attr`` specs) or a ``name ->
        callable`` mapping; default: the built-ins ``raw``, ``dedup``, ``assembler``.
    :param reader: ``None`` (context metrics only), or a callable ``prompt -> str``, a
        LangChain chat model or a LlamaIndex LLM: asked once per row, same layout for all.
    :param engine: ``local``, or ``ray`` to assemble the built-in ``assembler`` rows with
        :func:`ctxassembly.batch.assemble_many` on Ray Data (same contexts, same metrics;
        per-question latency is then ``None``).
    :param assemble_options: :class:`~ctxassembly.Assembler` options of the built-in
        ``assembler`` (e.g. ``order``).
    :param on_step: called after each row with (pipeline, budget, question): progress.
    :raises ConfigError: no questions, a bad budget, an unknown pipeline or engine.
    """
    from ctxassembly.batch import parse_engine

    if not questions:
        raise ConfigError("questions is empty; pass labelled questions (see load_questions)")
    chosen_engine = parse_engine(engine)
    bad = [b for b in budgets if isinstance(b, bool) or not isinstance(b, int) or b < 1]
    if bad or not budgets:
        raise ConfigError(f"budgets must be positive ints (tokens), got {list(budgets)!r}")
    fns, ray_able = _resolve(pipelines, assemble_options or {})
    ask = None if reader is None else as_reader(reader)
    prompt_text = BRIEF if instructions is None else instructions
    rows: list[ABRow] = []
    summary: list[dict[str, Any]] = []
    for name, fn in fns.items():
        for budget in budgets:
            on_ray = chosen_engine == "ray" and name in ray_able
            batch = _ray_outputs(questions, budget, assemble_options or {}) if on_ray else None
            cell = []
            for i, q in enumerate(questions):
                if batch is not None:
                    out, ms, err = batch[i], None, None
                else:
                    out, ms, err = _fair_call(fn, q, budget)
                try:
                    metrics, chunks, text = _measure(q, out)
                except (ConfigError, ValueError) as e:  # ChunkError is a ValueError
                    err = f"{type(e).__name__}: {e}"
                    metrics, chunks, text = _measure(q, [])
                answer = correct = reader_ms = None
                if ask is not None:
                    p = (
                        layout(chunks, q.question, fmt=FMT, instructions=prompt_text)
                        if chunks is not None
                        else prompt(text, q.question, prompt_text)
                    )
                    t0 = time.perf_counter()
                    answer = ask(p)
                    reader_ms = (time.perf_counter() - t0) * 1000
                    correct = contains_answer(answer, q.answer)
                cell.append(ABRow(q.qid, name, budget, metrics, answer, correct, ms, reader_ms, err))
                if on_step is not None:
                    on_step(name, budget, q)
            rows.extend(cell)
            summary.append(_summary(name, budget, cell, questions))
    return ABResult(
        pipelines=tuple(fns),
        budgets=tuple(budgets),
        rows=rows,
        summary=summary,
        reader=None if ask is None else (reader_name if reader_name is not None else repr(ask)),
    )


def _resolve(
    pipelines: Mapping[str, Pipeline] | Sequence[str] | None, options: Mapping[str, Any]
) -> tuple[dict[str, Any], set[str]]:
    """Name -> callable, in the given order, and the names of the built-in assembler
    (the one pipeline the Ray engine can run: its options travel to the workers).

    :raises ConfigError: an unknown or duplicate name, or a value that is not callable.
    """
    builtin_assembler: set[str] = set()
    specs: Iterable[Any] = BUILTIN if pipelines is None else pipelines
    if isinstance(specs, str):
        raise ConfigError(f"pipelines must be a list of names or a mapping, got the string {specs!r}")
    out: dict[str, Any] = {}
    items = specs.items() if isinstance(specs, Mapping) else ((None, s) for s in specs)
    for key, value in items:
        if isinstance(value, str):
            name, fn = load_pipeline(value)
            if value.partition("=")[0] == "assembler":
                fn = _assembler(options)
                builtin_assembler.add(name)
        elif callable(value):
            name, fn = str(key) if key is not None else getattr(value, "__name__", repr(value)), value
        else:
            raise ConfigError(f"pipeline {key!r}: expected a callable or a spec string, got {type(value).__name__}")
        if name in out:
            raise ConfigError(f"pipeline {name!r} given twice; rename one with 'spec=label'")
        out[name] = fn
    if not out:
        raise ConfigError("no pipelines to run")
    return out, builtin_assembler


def _ray_outputs(questions: Sequence[Question], budget: int, options: Mapping[str, Any]) -> list[Any]:
    """The built-in assembler's contexts for every question, assembled on Ray Data."""
    from ctxassembly.batch import assemble_many

    items = [
        {"question": q.question, "candidates": [dict(c) for c in q.candidates], "target_version": q.asked_version}
        for q in questions
    ]
    return list(assemble_many(items, budget=budget, engine="ray", **options))
