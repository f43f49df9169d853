"""Model-free assembly speed: ms per call for 40 real candidates and for enlarged lists.

For each of the 40 Django dev questions, the 40 real candidates; then lists enlarged to
200, 1,000 and 10,000 candidates with other real chunks of the benchmark corpus (all three
versions, so version filtering, exact and near dedup — MinHash LSH from 200 up — all
work for real). Reports the median and p95 per call, the growth from 1,000 to 10,000
and peak traced memory of one call.

    python benchmarks/speed_core.py [--bench ../shared/bench] [--sizes 40,200,1000,10000]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import time
import tracemalloc
from pathlib import Path

from ctxassembly import Assembler

HERE = Path(__file__).resolve().parent


def enlarged(record: dict, corpus: list[dict], n: int, rng: random.Random) -> list[dict]:
    cands = list(record["candidates"])
    if n <= len(cands):
        return cands[:n]
    extra = rng.sample(corpus, n - len(cands))
    # a retriever hands back its best first: the real candidates lead, the rest follow
    return cands + [{**c, "score": round(rng.uniform(0.1, 0.5), 4)} for c in extra]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", default=str(HERE.parents[1] / "shared" / "bench"))
    ap.add_argument("--sizes", default="40,200,1000,10000")
    ap.add_argument("--budget", type=int, default=1000)
    args = ap.parse_args()
    data = Path(args.bench) / "data" / "django"
    records = [json.loads(line) for line in (data / "questions.jsonl").read_text().splitlines()]
    corpus = [json.loads(line) for line in (data / "corpus.jsonl").read_text().splitlines()]
    for c in corpus:
        c.pop("tokens", None), c.pop("release", None)
    rng = random.Random(0)
    assembler = Assembler()
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        questions = records if n <= 1000 else records[:5]
        lists = [(r, enlarged(r, corpus, n, rng)) for r in questions]
        for r, cands in lists[:2]:  # warm-up: tokenizer load, caches
            assembler.run(r["question"], cands, budget=args.budget)
        cold, times = [], []
        for r, cands in lists:
            tv = r["target_version"] if r["version_explicit"] else None
            for out in (cold, times):  # first sight of these texts, then the same list again
                t0 = time.perf_counter()
                assembler.run(r["question"], cands, budget=args.budget, target_version=tv)
                out.append((time.perf_counter() - t0) * 1000)
        tracemalloc.start()
        assembler.run(lists[0][0]["question"], lists[0][1], budget=args.budget)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        times.sort()
        rows.append(
            (
                n,
                len(times),
                statistics.median(cold),
                statistics.median(times),
                times[int(0.95 * (len(times) - 1))],
                peak,
            )
        )
    machine = platform.processor() or platform.machine()
    print(f"machine: {machine}, python {platform.python_version()}, budget {args.budget}, load {os.getloadavg()}")
    print("| candidates | calls | ms p50, first sight | ms p50, cached | ms p95, cached | peak MiB (one call) |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n, calls, first, p50, p95, peak in rows:
        print(f"| {n:,} | {calls} | {first:.2f} | {p50:.2f} | {p95:.2f} | {peak:.1f} |")
    by_n = {n: first for n, _, first, _, _, _ in rows}
    if 1000 in by_n and 10000 in by_n:
        print(f"growth 1,000 -> 10,000 candidates (first sight): x{by_n[10000] / by_n[1000]:.1f} for x10 input")


if __name__ == "__main__":
    main()
