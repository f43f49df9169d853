"""Scale: one call with 100,000 candidates; wall time and peak memory.

Candidates are real chunks of the benchmark corpus (three versions) repeated with light
edits until the list is long enough, so version filtering, exact and near dedup (MinHash
LSH) and the injection scan all do real work. Peak RSS is the process's high-water mark
(``ru_maxrss``) after the call minus before it, and tracemalloc's peak for the call.

    python benchmarks/scale.py [--n 100000] [--data benchmarks/data/django]
"""

from __future__ import annotations

import argparse
import random
import resource
import time
import tracemalloc
from pathlib import Path

from _tables import DATA, load_corpus

from ctxassembly import Assembler

HERE = Path(__file__).resolve().parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--budget", type=int, default=2000)
    ap.add_argument("--data", default=str(DATA / "django"), help="a corpus folder (corpus.jsonl, .xz)")
    args = ap.parse_args()
    corpus = load_corpus(args.data)
    rng = random.Random(0)
    cands = []
    while len(cands) < args.n:
        c = rng.choice(corpus)
        edit = rng.random()
        text = c["text"] if edit < 0.5 else c["text"] + f"\n\n(copy {len(cands)})"
        cands.append(
            {k: c[k] for k in ("doc_id", "title", "section", "version", "start", "end")}
            | {"id": f"{c['id']}~{len(cands)}", "text": text, "score": round(rng.random(), 4)}
        )
    question = "What is the default value of SESSION_COOKIE_AGE in Django 5.1?"
    assembler = Assembler()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    t0 = time.perf_counter()
    result = assembler.run(question, cands, budget=args.budget)
    seconds = time.perf_counter() - t0
    traced = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print("| candidates | seconds | peak RSS growth MiB | tracemalloc peak MiB | kept | reasons |")
    print("|---:|---:|---:|---:|---:|---|")
    reasons = ", ".join(f"{r} {n:,}" for r, n in result.report.reasons.most_common())
    rss = (after - before) / 1024
    print(f"| {args.n:,} | {seconds:.1f} | {rss:.0f} | {traced:.0f} | {len(result.chunks)} | {reasons} |")


if __name__ == "__main__":
    main()
