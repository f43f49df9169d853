"""Instruments to measure context assembly on your own model and traffic.

* :func:`context_metrics` / :func:`summarize`: what a context holds against a labelled
  question (answer kept, context recall and precision, wrong-version strings, duplicates,
  off-version share, tokens, answer position, injections passed). No reader needed.
  :func:`evaluate_many`: the same over a batch assembled in-process or on Ray Data
  (:mod:`ctxassembly.batch`).
* Results (:mod:`ctxassembly.eval.results`): frozen dataclasses with ``to_dict`` /
  ``from_dict``, ``table()`` and, for the reader experiments, ``plot(path)``.
* Readers (from :mod:`ctxassembly.llm.readers`): :func:`as_reader` (a callable, a LangChain
  chat model, a LlamaIndex LLM) and :class:`SmolLM2Reader`, a real local reader that works offline.
* :func:`planted_fact_probe`: accuracy by position of a planted fact.
* :func:`dilution_curve`: the gold chunk alone, then with 4 and 16 distractors, placed
  first or in the middle.
* :func:`citation_histogram`: which positions the reader cites and answers from.
* :func:`run_ab`: several pipelines × budgets over a question file, one reader and
  prompt for all; per-question rows and a summary (reports in :mod:`ctxassembly.eval.report`).

Nothing here is imported by ``ctxassembly`` itself; torch, transformers and matplotlib
load only when a reader or a plot needs them.
"""

from ctxassembly.eval.dilution import dilution_curve, gold_and_distractors
from ctxassembly.eval.histogram import citation_histogram
from ctxassembly.eval.metrics import (
    ContextMetrics,
    MetricsSummary,
    context_metrics,
    evaluate_many,
    summarize,
    text_metrics,
    zone,
)
from ctxassembly.eval.probe import PlantedFact, make_fact, planted_fact_probe, spread
from ctxassembly.eval.questions import Question, demo_questions, load_questions
from ctxassembly.eval.results import (
    ABResult,
    ABRow,
    DilutionResult,
    DilutionRow,
    HistogramResult,
    HistogramRow,
    ProbeResult,
    ProbeTrial,
)
from ctxassembly.eval.runner import run_ab
from ctxassembly.eval.scoring import contains_answer, normalize_answer, parse_citations
from ctxassembly.llm.readers import Reader, SmolLM2Reader, as_reader, smollm2_gguf

__all__ = [
    "ABResult",
    "ABRow",
    "ContextMetrics",
    "DilutionResult",
    "DilutionRow",
    "HistogramResult",
    "HistogramRow",
    "MetricsSummary",
    "PlantedFact",
    "ProbeResult",
    "ProbeTrial",
    "Question",
    "Reader",
    "SmolLM2Reader",
    "as_reader",
    "citation_histogram",
    "contains_answer",
    "context_metrics",
    "demo_questions",
    "dilution_curve",
    "evaluate_many",
    "gold_and_distractors",
    "load_questions",
    "make_fact",
    "normalize_answer",
    "parse_citations",
    "planted_fact_probe",
    "run_ab",
    "smollm2_gguf",
    "spread",
    "summarize",
    "text_metrics",
    "zone",
]
