"""Context quality of every pipeline on the same candidates and budgets, side by side.

Each question's real candidates go through naive top-k, naive truncated, LangChain,
LlamaIndex, Haystack (each as a careful user configures it: ``peers.py``), ctxassembly
model-free and ctxassembly with the MiniLM models, at 500, 1,000 and 2,000 tokens. The
contexts are measured with the project's own ``ctxassembly.eval.metrics`` and, as a
cross-check, re-scored by the benchmark's independent scorer
(``../shared/bench/score.py``, imported read-only, never copied); any disagreement on
answer_hit or wrong-version exposure is printed.

    python benchmarks/quality.py [QUESTIONS.jsonl] [--budgets 500,1000,2000] [--pipelines a,b]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import time
from pathlib import Path
from typing import Any

from _tables import DEFAULT_QUESTIONS, RESULTS, SCORER, load, load_records, machine, pct, publish
from peers import LABELS, PIPELINES, build

from ctxassembly.eval.metrics import context_metrics, summarize
from ctxassembly.eval.questions import Question

UNBUDGETED = {"naive_topk"}  # ignores the budget by design: a reference, not a competitor


# The LangChain filter embeds every candidate on every call; its output does not depend on
# that (the vectors are the same), so quality runs it over LangChain's own embedding cache
# (CacheBackedEmbeddings) to embed each text once across the three budgets. Speed is
# measured without it, in speed.py.
SAME_OUTPUT_FASTER = {"langchain": "langchain_cached", "langchain_bf": "langchain_bf_cached"}


def run_pipeline(name: str, records: list[dict[str, Any]], budgets: list[int]) -> dict[int, list[dict[str, Any]]]:
    """Per budget, one row per question: the pipeline's output and its latency."""
    pipe = build(SAME_OUTPUT_FASTER.get(name, name))
    pipe(records[0], budgets[0])  # warm-up: model load, tokenizer, caches
    out: dict[int, list[dict[str, Any]]] = {}
    for budget in budgets:
        rows = []
        for r in records:
            t0 = time.perf_counter()
            chunks = pipe(r, budget)
            ms = (time.perf_counter() - t0) * 1000
            rows.append({"record": r, "chunks": chunks, "ms": ms})
        out[budget] = rows
    return out


def summary_row(name: str, budget: int, rows: list[dict[str, Any]]) -> dict[str, Any]:
    questions = [Question.from_dict(x["record"]) for x in rows]
    metrics = [context_metrics(q, x["chunks"]) for q, x in zip(questions, rows, strict=True)]
    s = summarize(metrics, questions)
    return {
        "pipeline": name,
        "budget": budget,
        "answer_hit": s.answer_kept,
        "wrong_exposure": s.wrong_exposure,
        "context_recall": s.context_recall,
        "tokens_mean": s.tokens_mean,
        "over_budget": sum(m.tokens > budget for m in metrics) / len(metrics),
        "duplicate_share": s.duplicate_share,
        "off_version_share": s.off_version_share,
        "edge_rate": s.edge_rate,
        "middle_rate": s.middle_rate,
        "injection_pass": s.injection_pass,
        "ms_p50": statistics.median(x["ms"] for x in rows),
        "per_question": [m.to_dict() for m in metrics],
    }


def cross_check(results: dict[str, dict[int, list[dict[str, Any]]]]) -> list[str]:
    """Disagreements between our metrics and the benchmark's scorer on the same outputs."""
    if not SCORER.is_file():
        return [f"cross-check skipped: {SCORER} not found"]
    spec = importlib.util.spec_from_file_location("bench_score", SCORER)
    if spec is None or spec.loader is None:
        return [f"cross-check skipped: cannot load {SCORER}"]
    score = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(score)
    issues, compared = [], 0
    for name, by_budget in results.items():
        for budget, rows in by_budget.items():
            for x in rows:
                theirs = score.evaluate_output(x["record"], x["chunks"], budget)
                ours = context_metrics(Question.from_dict(x["record"]), x["chunks"])
                compared += 1
                if theirs["answer_hit"] is not None and bool(theirs["answer_hit"]) != bool(ours.answer_kept):
                    issues.append(f"{name} @{budget} {x['record']['qid']}: answer_hit {theirs['answer_hit']} vs ours")
                if theirs["wrong_exposed"] is not None and bool(theirs["wrong_exposed"]) != bool(ours.wrong_exposed):
                    issues.append(f"{name} @{budget} {x['record']['qid']}: wrong_exposed differs")
    return [f"cross-check with {SCORER.name}: {compared} contexts, {len(issues)} disagreements", *issues]


def tables(summaries: list[dict[str, Any]], budgets: list[int], n: int) -> str:
    lines = []
    for budget in budgets:
        lines += [
            f"#### {budget:,} tokens",
            "",
            "| pipeline | answer_hit | wrong_exp | recall | tok mean | over_budget | dup_share "
            "| off_version | edge_rate | mid_rate | inj_pass |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for s in (s for s in summaries if s["budget"] == budget):
            lines.append(
                f"| {LABELS.get(s['pipeline'], s['pipeline'])} | {pct(s['answer_hit'])} | {pct(s['wrong_exposure'])} "
                f"| {pct(s['context_recall'])} | {s['tokens_mean']:,.0f} | {pct(s['over_budget'])} "
                f"| {pct(s['duplicate_share'])} | {pct(s['off_version_share'])} | {pct(s['edge_rate'])} "
                f"| {pct(s['middle_rate'])} | {pct(s['injection_pass'])} |"
            )
        lines.append("")
    lines.append(
        f"n={n} questions; wrong_exp over the questions with wrong-version strings, inj_pass over those with a "
        "planted injection, edge/mid over each pipeline's answer hits; recall = share of gold chunk ids kept. "
        "Speed: see the speed table."
    )
    return "\n".join(lines)


def verdict(summaries: list[dict[str, Any]], budgets: list[int]) -> list[str]:
    """Whether each ctxassembly pipeline beats every budgeted peer on answer_hit and wrong exposure."""
    out = []
    for ours in ("ctxassembly", "ctxassembly_models"):
        for budget in budgets:
            at = {s["pipeline"]: s for s in summaries if s["budget"] == budget}
            if ours not in at:
                continue
            mine = at[ours]
            peers = [s for n, s in at.items() if not n.startswith("ctxassembly") and n not in UNBUDGETED]
            if not peers:
                continue
            best_hit = max(peers, key=lambda s: s["answer_hit"] or 0)
            least_wrong = min(peers, key=lambda s: s["wrong_exposure"] or 0)
            ok = mine["answer_hit"] > best_hit["answer_hit"] and mine["wrong_exposure"] < least_wrong["wrong_exposure"]
            out.append(
                f"{ours} @{budget}: answer_hit {pct(mine['answer_hit'])} vs best peer {pct(best_hit['answer_hit'])} "
                f"({best_hit['pipeline']}); wrong {pct(mine['wrong_exposure'])} vs least peer "
                f"{pct(least_wrong['wrong_exposure'])} ({least_wrong['pipeline']}): {'better' if ok else 'NOT better'}"
            )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("questions", nargs="?", default=str(DEFAULT_QUESTIONS))
    ap.add_argument("--budgets", default="500,1000,2000")
    ap.add_argument("--pipelines", default=",".join(n for n in PIPELINES if not n.endswith("_cached")))
    ap.add_argument("--limit", type=int, default=None, help="only the first N questions")
    ap.add_argument("--no-check", action="store_true", help="skip the cross-check with the benchmark's scorer")
    ap.add_argument("--no-publish", action="store_true", help="print only; leave README and results/ alone")
    args = ap.parse_args()
    records = load_records(args.questions)[: args.limit]
    budgets = [int(b) for b in args.budgets.split(",")]
    names = [n.strip() for n in args.pipelines.split(",") if n.strip()]
    t0 = time.perf_counter()
    results, summaries = {}, []
    for name in names:
        t1 = time.perf_counter()
        results[name] = run_pipeline(name, records, budgets)
        summaries += [summary_row(name, b, results[name][b]) for b in budgets]
        print(f"ran {name:20} {time.perf_counter() - t1:7.1f}s  load {load()}", flush=True)
    text = "\n".join(
        [
            f"Questions: `{Path(args.questions).name}` ({len(records)}); machine: {machine()}; "
            f"load average at the end {load()}; {time.perf_counter() - t0:.0f} s for the whole run.",
            "",
            tables(summaries, budgets, len(records)),
            "",
            *(f"- {v}" for v in verdict(summaries, budgets)),
        ]
    )
    if not args.no_check:
        text += "\n\n" + "\n".join(f"- {line}" for line in cross_check(results))
    print(text)
    if not args.no_publish:
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / f"quality_{Path(args.questions).parent.name}.json").write_text(json.dumps(summaries, indent=1))
        if Path(args.questions).resolve() == DEFAULT_QUESTIONS.resolve():
            publish("quality", text)


if __name__ == "__main__":
    main()
