"""Model-free assembly speed: ms per call for 40 real candidates and for enlarged lists.

For each of the 40 Django dev questions, the 40 real candidates; then lists enlarged to
200, 1,000 and 10,000 candidates with other real chunks of the benchmark corpus (all three
versions, so version filtering, the horizon, exact and near dedup all work for real).
Each list is assembled at **first sight** (every text cache emptied, a new Assembler, as
``speed.py`` does) and then again (caches warm). Reports the medians, the p95 of the
repeated call, the growth from 1,000 to 10,000, peak traced memory of one call, and the
median milliseconds of each stage at first sight.

    python benchmarks/speed_core.py [--data benchmarks/data/django] [--sizes 40,200,1000,10000]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

from _tables import DATA, load_corpus, load_records

from ctxassembly import Assembler

HERE = Path(__file__).resolve().parent


def clear_text_caches() -> None:
    """Empty ctxassembly's module-level text caches (tokens, shingles, scans, sentences) and
    the shared embedding caches: the next call sees its texts for the first time."""
    from ctxassembly.models import embedder as models

    for name, mod in list(sys.modules.items()):
        if not name.startswith("ctxassembly") or mod is None:
            continue
        for obj in list(vars(mod).values()):
            info = getattr(obj, "cache_info", None)
            if callable(info) and (info().maxsize or 0) >= 1024:
                obj.cache_clear()
    for emb in list(models._SHARED.values()):
        emb.clear()
    from ctxassembly.text.injection_model import builtin

    builtin().clear()  # the learned injection model's spans


def enlarged(record: dict, corpus: list[dict], n: int, rng: random.Random) -> list[dict]:
    cands = list(record["candidates"])
    if n <= len(cands):
        return cands[:n]
    extra = rng.sample(corpus, n - len(cands))
    # a retriever hands back its best first: the real candidates lead, the rest follow
    return cands + [{**c, "score": round(rng.uniform(0.1, 0.5), 4)} for c in extra]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(DATA / "django"), help="a corpus folder (questions, corpus)")
    ap.add_argument("--sizes", default="40,200,1000,10000")
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--rules-only", action="store_true", help="injection_model=None: the injection rules alone")
    args = ap.parse_args()
    options = {"injection_model": None} if args.rules_only else {}
    records = load_records(Path(args.data) / "questions.jsonl.gz")
    corpus = load_corpus(args.data)
    for c in corpus:
        c.pop("tokens", None), c.pop("release", None)
    rng = random.Random(0)
    rows, stage_ms = [], {}
    for n in (int(s) for s in args.sizes.split(",")):
        questions = records if n <= 1000 else records[:5]
        lists = [(r, enlarged(r, corpus, n, rng)) for r in questions]
        Assembler(**options).run(lists[0][0]["question"], lists[0][1], budget=args.budget)  # warm-up: imports
        cold, times, stages = [], [], {}
        for r, cands in lists:
            tv = r["target_version"] if r["version_explicit"] else None
            clear_text_caches()
            assembler = Assembler(**options)  # its token counter's cache is new too
            for out in (cold, times):  # first sight of these texts, then the same list again
                t0 = time.perf_counter()
                res = assembler.run(r["question"], cands, budget=args.budget, target_version=tv)
                out.append((time.perf_counter() - t0) * 1000)
                if out is cold:
                    for stage, ms in res.report.timings_ms.items():
                        stages.setdefault(stage, []).append(ms)
        stage_ms[n] = {k: statistics.median(v) for k, v in stages.items()}
        clear_text_caches()
        tracemalloc.start()
        Assembler(**options).run(lists[0][0]["question"], lists[0][1], budget=args.budget)
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
    print(
        "| candidates | calls | ms p50, first sight | ms p50, same list again | ms p95, again | peak MiB (one call) |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    for n, calls, first, p50, p95, peak in rows:
        print(f"| {n:,} | {calls} | {first:.2f} | {p50:.2f} | {p95:.2f} | {peak:.1f} |")
    by_n = {n: first for n, _, first, _, _, _ in rows}
    if 1000 in by_n and 10000 in by_n:
        print(f"growth 1,000 -> 10,000 candidates (first sight): x{by_n[10000] / by_n[1000]:.1f} for x10 input")
    print("\nms per stage at first sight (median):")
    for n, per_stage in stage_ms.items():
        print(f"  {n:>6,}: " + ", ".join(f"{k} {v:.1f}" for k, v in per_stage.items()))


if __name__ == "__main__":
    main()
