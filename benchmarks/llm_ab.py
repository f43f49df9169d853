"""A/B: raw top-k vs deterministic assembly vs assembly + LLM evidence extraction (SmolLM2).

For every question of the Django dev set, at one budget (default 500 tokens):

* ``raw``: the retriever's order cut at the budget (the benchmark's ``naive_budget`` peer);
* ``deterministic``: ``ctxassembly.assemble`` with its defaults, no model;
* ``llm_extract``: the same pipeline with :class:`~ctxassembly.stages.llm_extract.LLMExtract`
  before select, the model being the real local SmolLM2-135M-Instruct (greedy, one CPU
  thread, ``--max-new-tokens``), one call at a time (one shared CPU; the reader is
  serialised anyway).

Fair use of a record: only ``question``, ``candidates`` and ``target_version`` when
``version_explicit``. Per question and pipeline it records the context tokens (cl100k),
whether every answer string is in the context (``ctxassembly.eval.metrics``), the wall
time, and for the LLM path the calls, discarded sentences, restored units and bypasses.
Rows are appended to ``results/llm_ab.jsonl`` as they come (with the returned chunks) and
a rerun resumes, so run it in the background:

    nohup python benchmarks/llm_ab.py > /tmp/llm_ab.log 2>&1 &
    python benchmarks/llm_ab.py --report          # the table from what is done so far

The independent scorer can judge the very same contexts: ``replay_raw``,
``replay_deterministic`` and ``replay_llm_extract`` return the stored chunks per record:

    python ../shared/bench/score.py ../shared/bench/data/django/questions.jsonl --budget 500 \\
        --pipeline benchmarks/llm_ab.py:replay_llm_extract ...
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _tables import DEFAULT_QUESTIONS, RESULTS, load, load_records, machine, pct, publish
from adapters import _out, _version, model_free
from peers import naive_budget

from ctxassembly import Assembler
from ctxassembly.eval.metrics import context_metrics
from ctxassembly.eval.questions import Question
from ctxassembly.tokens import get_counter

OUT = RESULTS / "llm_ab.jsonl"
PIPELINES = ("raw", "deterministic", "llm_extract")
_COUNT = get_counter()


@lru_cache(maxsize=1)
def llm_assembler(max_new_tokens: int = 96) -> Any:
    """The default pipeline with LLMExtract(SmolLM2) inserted before select."""
    from ctxassembly.eval.readers import SmolLM2Reader
    from ctxassembly.stages.llm_extract import LLMExtract

    reader = SmolLM2Reader(max_new_tokens=max_new_tokens, threads=1).load()
    base = Assembler()
    stages = list(base.stages)
    at = next(i for i, s in enumerate(stages) if s.name == "select")
    stages.insert(at, LLMExtract(reader, concurrency=1, reach=1.5))
    return Assembler(stages=stages)


def run_llm(record: dict[str, Any], budget: int, max_new_tokens: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    res = llm_assembler(max_new_tokens).run(
        record["question"], record["candidates"], budget=budget, target_version=_version(record)
    )
    notes = [n for n in res.report.notes if n["stage"] == "llm_extract"]
    extra = {
        "calls": sum(n["event"] in ("extracted", "no_evidence", "kept_whole", "llm_failed") for n in notes),
        "extracted": sum(n["event"] == "extracted" for n in notes),
        "no_evidence": sum(n["event"] == "no_evidence" for n in notes),
        "discarded": sum(n["event"] == "discarded" for n in notes),
        "restored": sum(n["event"] == "restored" for n in notes),
        "bypass": [n["why"] for n in notes if n["event"] == "bypass"],
        "llm_ms": round(res.report.timings_ms.get("llm_extract", 0.0), 1),
    }
    return _out(res), extra


def measure(name: str, record: dict[str, Any], budget: int, max_new_tokens: int) -> dict[str, Any]:
    t0 = time.perf_counter()
    extra: dict[str, Any] = {}
    if name == "raw":
        chunks = naive_budget(record, budget)
    elif name == "deterministic":
        chunks = model_free(record, budget)
    else:
        chunks, extra = run_llm(record, budget, max_new_tokens)
    seconds = time.perf_counter() - t0
    m = context_metrics(Question.from_dict(record), [dict(c) for c in chunks])
    return {
        "qid": record["qid"],
        "pipeline": name,
        "budget": budget,
        "tokens": _COUNT("\n\n".join(c["text"] for c in chunks)),
        "answer_kept": m.answer_kept,
        "wrong_exposed": bool(m.wrong_exposed),
        "seconds": round(seconds, 3),
        "load": load(),
        **extra,
        "chunks": [{"id": c.get("id"), "text": c["text"], "version": c.get("version")} for c in chunks],
    }


def done(path: Path) -> set[tuple[str, str, int]]:
    if not path.exists():
        return set()
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {(r["qid"], r["pipeline"], r["budget"]) for r in rows}


def run(questions: Path, budget: int, max_new_tokens: int, limit: int | None) -> None:
    records = load_records(questions)[:limit]
    seen = done(OUT)
    RESULTS.mkdir(exist_ok=True)
    for name in PIPELINES:  # the fast ones first: their table is complete in seconds
        for r in records:
            if (r["qid"], name, budget) in seen:
                continue
            row = measure(name, r, budget, max_new_tokens)
            with OUT.open("a", encoding="utf-8") as f:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
            print(
                f"{name:14} {r['qid']} kept={row['answer_kept']} tokens={row['tokens']} "
                f"{row['seconds']:.1f}s load {row['load']}",
                flush=True,
            )


def rows_by(budget: int) -> dict[str, dict[str, dict[str, Any]]]:
    out: dict[str, dict[str, dict[str, Any]]] = {p: {} for p in PIPELINES}
    if OUT.exists():
        for line in OUT.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            if r["budget"] == budget:
                out[r["pipeline"]][r["qid"]] = r
    return out


def report(budget: int) -> str:
    by = rows_by(budget)
    qids = [q for q in by["raw"] if all(q in by[p] for p in PIPELINES)]
    lines = [
        f"Budget {budget} tokens, {len(qids)} questions with all three pipelines done. Machine: {machine()}, "
        "shared with other jobs (load average per row in results/llm_ab.jsonl). SmolLM2-135M-Instruct, greedy, "
        "1 thread, one call at a time.",
        "",
        "| pipeline | answer kept | mean tokens | median s/question | p95 s/question |",
        "|---|---|---|---|---|",
    ]
    for p in PIPELINES:
        rs = [by[p][q] for q in qids]
        if not rs:
            continue
        secs = sorted(r["seconds"] for r in rs)
        p95 = secs[min(len(secs) - 1, int(0.95 * len(secs)))]
        kept = [bool(r["answer_kept"]) for r in rs if r["answer_kept"] is not None]
        lines.append(
            f"| {p} | {pct(sum(kept) / len(kept))} | {statistics.mean(r['tokens'] for r in rs):.0f} "
            f"| {statistics.median(secs):.2f} | {p95:.2f} |"
        )
    llm = [by["llm_extract"][q] for q in qids]
    if llm:
        lines += [
            "",
            f"LLM path over {len(llm)} questions: {sum(r['calls'] for r in llm)} model calls, "
            f"{sum(r['extracted'] for r in llm)} chunks cut to verified evidence, "
            f"{sum(r['no_evidence'] for r in llm)} with no verified evidence (kept whole), "
            f"{sum(r['discarded'] for r in llm)} returned sentences discarded as not verbatim, "
            f"{sum(r['restored'] for r in llm)} units restored (conditions, headings, near copies), "
            f"{sum(bool(r['bypass']) for r in llm)} questions with a bypass.",
        ]
    lines += [
        "",
        "| qid | raw tokens | raw kept | det. tokens | det. kept | det. s "
        "| LLM tokens | LLM kept | LLM s | LLM calls |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]

    def yn(v: object) -> str:
        return "n/a" if v is None else ("yes" if v else "no")

    for q in qids:
        a, d, m = by["raw"][q], by["deterministic"][q], by["llm_extract"][q]
        lines.append(
            f"| {q} | {a['tokens']} | {yn(a['answer_kept'])} | {d['tokens']} | {yn(d['answer_kept'])} "
            f"| {d['seconds']:.2f} | {m['tokens']} | {yn(m['answer_kept'])} | {m['seconds']:.1f} | {m['calls']} |"
        )
    return "\n".join(lines)


def _replay(name: str, record: dict[str, Any], budget: int) -> list[dict[str, Any]]:
    r = rows_by(budget)[name].get(record["qid"])
    if r is None:
        raise KeyError(f"{name}: no stored result for {record['qid']} at budget {budget}; run llm_ab.py first")
    return r["chunks"]


def replay_raw(record: dict[str, Any], budget: int) -> list[dict[str, Any]]:
    return _replay("raw", record, budget)


def replay_deterministic(record: dict[str, Any], budget: int) -> list[dict[str, Any]]:
    return _replay("deterministic", record, budget)


def replay_llm_extract(record: dict[str, Any], budget: int) -> list[dict[str, Any]]:
    return _replay("llm_extract", record, budget)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS)
    ap.add_argument("--budget", type=int, default=500)
    ap.add_argument("--max-new-tokens", type=int, default=96)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--report", action="store_true", help="print (and publish) the table from what is done")
    a = ap.parse_args()
    if not a.report:
        run(a.questions, a.budget, a.max_new_tokens, a.limit)
    text = report(a.budget)
    print(text)
    publish("llm_ab", text)


if __name__ == "__main__":
    main()
