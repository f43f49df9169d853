"""Per-position citation histogram: which positions of the context the reader cites and
answers from, over a question set.

Each question's context is assembled (or built by your function), the reader is asked to
answer and cite document ids, and the citations are mapped back to positions. Two counts
per position: ``cited`` (the reader named the document there) and ``used`` (the reader's
answer was right and the document there holds an answer string). Divided by
``present`` (contexts that have a document at that position) they are rates, so that
short contexts do not make late positions look neglected.

Usage::

    from ctxassembly.eval import SmolLM2Reader, citation_histogram, demo_questions
    result = citation_histogram(SmolLM2Reader(), demo_questions(), budget=800)
    print(result.table()); result.plot("positions.png")
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.eval._common import CITE, layout, to_chunk_list
from ctxassembly.eval.questions import Question
from ctxassembly.eval.results import HistogramResult, HistogramRow
from ctxassembly.eval.scoring import contains_answer, parse_citations
from ctxassembly.kinds import Format
from ctxassembly.llm.readers import as_reader

__all__ = ["citation_histogram"]

_WS = re.compile(r"\s+")


def _assembled(budget: int, options: Mapping[str, Any]) -> Callable[[Question], Sequence[Chunk]]:
    from ctxassembly.assembler import assemble

    def build(q: Question) -> Sequence[Chunk]:
        return assemble(q.question, q.candidates, budget=budget, target_version=q.asked_version, **options).chunks

    return build


def citation_histogram(
    reader: object,
    questions: Sequence[Question],
    *,
    build: Callable[[Question], Sequence[Chunk | Mapping[str, Any]]] | None = None,
    budget: int = 1500,
    assemble_options: Mapping[str, Any] | None = None,
    fmt: Format = "xml",
    instructions: str | None = None,
) -> HistogramResult:
    """Count, by position, the documents ``reader`` cites and answers from.

    :param build: the context of a question, in order (default: ``assemble`` of its
        candidates within ``budget`` with ``assemble_options``, told the version only
        when the question names it: :attr:`Question.asked_version`).
    :param instructions: must ask for ids in a form :func:`parse_citations` reads
        (the default asks for ``[id]``).
    :raises ConfigError: no questions.
    """
    if not questions:
        raise ConfigError("questions is empty; pass labelled questions (see load_questions)")
    ask = as_reader(reader)
    make = _assembled(budget, assemble_options or {}) if build is None else build
    prompt_text = CITE if instructions is None else instructions
    rows = []
    for q in questions:
        docs = to_chunk_list(make(q), f"build({q.qid!r})")
        response = ask(layout(docs, q.question, fmt=fmt, instructions=prompt_text))
        ids = [d.id for d in docs]
        cited = tuple(sorted({ids.index(i) for i in parse_citations(response, ids)}))
        answers = [_WS.sub(" ", a).strip() for a in q.answer if a.strip()]
        holding = tuple(i for i, d in enumerate(docs) if answers and any(a in _WS.sub(" ", d.text) for a in answers))
        rows.append(HistogramRow(q.qid, len(docs), cited, holding, contains_answer(response, q.answer), response))
    width = max((r.n_docs for r in rows), default=0)
    present, cited_n, used = [0] * width, [0] * width, [0] * width
    for r in rows:
        for p in range(r.n_docs):
            present[p] += 1
        for p in r.cited:
            cited_n[p] += 1
        if r.correct:
            for p in r.answer_positions:
                used[p] += 1
    return HistogramResult(present=present, cited=cited_n, used=used, rows=rows)
