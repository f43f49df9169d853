"""LLM-assisted stages and what they share (opt-in; see docs/llm.md).

* :mod:`~ctxassembly.llm.readers`: any LLM behind one shape, ``prompt -> str``
  (:func:`as_reader`), and :class:`SmolLM2Reader`, a real local reader that works offline.
* :mod:`~ctxassembly.llm.caller`: :class:`LLMCaller` (bounded, timed, async calls),
  :func:`run_sync`, :class:`Reply` and the :class:`Bypass` rules.
* :mod:`~ctxassembly.llm.parsing`: :func:`parse_json` (lenient JSON) and :func:`locate`
  (verbatim location of a sentence in its source).
* The stages: :class:`LLMExtract` (verified evidence), :class:`MapReduce` (aggregate
  questions) and :class:`Summarize` (query-focused summary with provenance).

This layer sits above the core stages and below the evaluation toolkit: nothing here
imports ``ctxassembly.eval`` or the CLI, and torch / transformers load only when a
reader is called.
"""

from ctxassembly.llm.caller import Bypass, LLMCaller, Reply, run_sync
from ctxassembly.llm.extract import LLMExtract
from ctxassembly.llm.mapreduce import MapReduce
from ctxassembly.llm.parsing import locate, parse_json
from ctxassembly.llm.readers import Reader, SmolLM2Reader, as_reader
from ctxassembly.llm.summarize import Summarize

__all__ = [
    "Bypass",
    "LLMCaller",
    "LLMExtract",
    "MapReduce",
    "Reader",
    "Reply",
    "SmolLM2Reader",
    "Summarize",
    "as_reader",
    "locate",
    "parse_json",
    "run_sync",
]
