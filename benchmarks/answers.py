"""End-to-end answer accuracy with a real reader: SmolLM2-135M-Instruct on CPU.

For every question, three contexts at one budget (default 1,000 tokens): naive top-k
truncated to the budget, the best peer (highest context answer_hit at that budget among
the framework peers; measured here unless ``--peer`` names one) and ctxassembly
(model-free). The prompt layout is held constant: every context is rendered by the same
renderer (the chunks' id / title / section / version labels — which helps the peers,
whose own output has none), then the same instructions, then the question. The reply is
scored with ``ctxassembly.eval.scoring.contains_answer`` against the answer strings
(all of them), and against the wrong-version strings (any).

Slow: ~135M parameters, greedy, ``max_new_tokens`` 48, one CPU thread. Each reply is
appended to ``results/answers.jsonl`` as it comes, and a rerun resumes (``--fresh``
starts over), so run it in the background:

    nohup python benchmarks/answers.py > /tmp/answers.log 2>&1 &
    python benchmarks/answers.py --report        # the table from what is done so far
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from _tables import DEFAULT_QUESTIONS, RESULTS, load, load_records, machine, pct, publish
from peers import PEERS, build

from ctxassembly.chunk import Chunk
from ctxassembly.eval._common import BRIEF, layout
from ctxassembly.eval.metrics import context_metrics
from ctxassembly.eval.questions import Question
from ctxassembly.eval.scoring import contains_answer

CANDIDATE_PEERS = [p for p in PEERS if p not in ("naive_topk", "naive_budget")]


def chunks_of(name: str, pipe: Any, record: dict[str, Any], budget: int) -> list[Chunk]:
    """The pipeline's context as Chunks; ctxassembly's own (with its status labels)."""
    if name.startswith("ctxassembly"):
        return list(pipe.run(record, budget).chunks)
    return [Chunk.from_dict(d, index=i) for i, d in enumerate(pipe(record, budget))]


def best_peer(records: list[dict[str, Any]], budget: int) -> tuple[str, dict[str, float]]:
    """The framework peer with the highest context answer_hit at ``budget`` (ties: listed first)."""
    rates: dict[str, float] = {}
    for name in CANDIDATE_PEERS:
        pipe = build(name)
        hits = [context_metrics(Question.from_dict(r), pipe(r, budget)).answer_kept for r in records]
        rates[name] = sum(bool(h) for h in hits) / len(hits)
        print(f"context answer_hit @{budget} {name}: {pct(rates[name])}  (load {load()})", flush=True)
    return max(rates, key=lambda n: rates[n]), rates


def done_keys(path: Path) -> set[tuple[str, str]]:
    if not path.exists():
        return set()
    return {(r["qid"], r["pipeline"]) for r in map(json.loads, path.read_text().splitlines()) if r}


def run(args: argparse.Namespace) -> None:
    from ctxassembly.llm.readers import SmolLM2Reader

    records = load_records(args.questions)[: args.limit]
    RESULTS.mkdir(exist_ok=True)
    OUT = Path(args.out)
    if args.fresh and OUT.exists():
        OUT.unlink()
    peer = args.peer
    if peer == "auto":
        peer, rates = best_peer(records, args.budget)
        (RESULTS / "answers_peer.json").write_text(json.dumps({"best": peer, "answer_hit": rates}, indent=1))
    names = ["naive_budget", peer, "ctxassembly"]
    pipes = {n: build(n) for n in names}
    reader = SmolLM2Reader(max_new_tokens=args.max_new_tokens, threads=args.threads).load()
    print(f"reader loaded in {reader.load_seconds:.1f}s; pipelines {names}; load {load()}", flush=True)
    done = done_keys(OUT)
    t_start = time.perf_counter()
    with OUT.open("a", encoding="utf-8") as f:
        for r in records:
            q = Question.from_dict(r)
            for name in names:
                if (q.qid, name) in done:
                    continue
                docs = chunks_of(name, pipes[name], r, args.budget)
                prompt = layout(docs, q.question, fmt="xml", instructions=BRIEF)
                t0 = time.perf_counter()
                reply = reader(prompt)
                row = {
                    "qid": q.qid,
                    "pipeline": name,
                    "budget": args.budget,
                    "context_hit": context_metrics(q, docs).answer_kept,
                    "correct": contains_answer(reply, q.answer),
                    "wrong": bool(q.wrong) and bool(contains_answer(reply, q.wrong, require="any")),
                    "has_wrong": bool(q.wrong),
                    "prompt_tokens": reader.count_tokens(prompt),
                    "seconds": round(time.perf_counter() - t0, 2),
                    "load": load(),
                    "reply": reply,
                }
                f.write(json.dumps(row) + "\n")
                f.flush()
                print(f"{q.qid} {name:14} correct={row['correct']} {row['seconds']}s", flush=True)
    print(f"done in {time.perf_counter() - t_start:.0f}s", flush=True)
    report(args)


def report(args: argparse.Namespace) -> None:
    OUT = Path(args.out)
    rows = [json.loads(x) for x in OUT.read_text().splitlines() if x.strip()] if OUT.exists() else []
    if not rows:
        print("no answers yet")
        return
    order = list(dict.fromkeys(r["pipeline"] for r in rows))
    lines = [
        f"SmolLM2-135M-Instruct (greedy, max_new_tokens={args.max_new_tokens}, {args.threads} thread), "
        f"budget {rows[0]['budget']:,} tokens; machine: {machine()}; load average at report {load()}.",
        "",
        "| pipeline | questions | answer in context | reply correct | correct when in context "
        "| reply has a wrong-version answer | prompt tokens (SmolLM2) | s / reply (median) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    total = 0.0
    for name in order:
        rs = [r for r in rows if r["pipeline"] == name]
        total += sum(r["seconds"] for r in rs)
        hit = [r for r in rs if r["context_hit"]]
        wrong = [r for r in rs if r["has_wrong"]]
        secs = sorted(r["seconds"] for r in rs)
        toks = sorted(r["prompt_tokens"] for r in rs)
        lines.append(
            f"| {name} | {len(rs)} | {pct(len(hit) / len(rs))} | {pct(sum(bool(r['correct']) for r in rs) / len(rs))} "
            f"| {pct(sum(bool(r['correct']) for r in hit) / len(hit)) if hit else 'n/a'} "
            f"| {pct(sum(r['wrong'] for r in wrong) / len(wrong)) if wrong else 'n/a'} "
            f"| {toks[len(toks) // 2]:,} | {secs[len(secs) // 2]:.1f} |"
        )
    peer_file = RESULTS / "answers_peer.json"
    if peer_file.exists():
        info = json.loads(peer_file.read_text())
        got = ", ".join(f"{k} {pct(v)}" for k, v in info["answer_hit"].items())
        lines += ["", f"Best peer chosen by context answer_hit at this budget: {info['best']} ({got})."]
    lines += ["", f"Reader time for {len(rows)} replies: {total / 60:.0f} min."]
    text = "\n".join(lines)
    print(text)
    if Path(args.out) == RESULTS / "answers.jsonl":
        publish("answers", text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("questions", nargs="?", default=str(DEFAULT_QUESTIONS))
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--peer", default="auto", help="a peer name, or 'auto': the best by context answer_hit")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--max-new-tokens", type=int, default=48)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default=str(RESULTS / "answers.jsonl"), help="where replies are appended")
    ap.add_argument("--fresh", action="store_true", help="discard earlier replies")
    ap.add_argument("--report", action="store_true", help="only print and publish the table")
    args = ap.parse_args()
    report(args) if args.report else run(args)


if __name__ == "__main__":
    main()
