"""Milliseconds per call of every pipeline at 40, 200, 1,000 and 10,000 candidates, one run.

The candidates are a question's 40 real ones, enlarged with other real chunks of the
benchmark corpus (all three versions, so version filtering and dedup do real work).
Each cell is the median of repeated calls (one per question, up to ``--questions``, and
at most ``--cell-seconds`` of calls, at least one); peak traced memory of one call
(``tracemalloc``: Python and numpy allocations, not torch's own buffers).

ctxassembly is timed at **first sight**: before each call every text cache is emptied
(token counts, shingles, injection scan, embeddings) and the assembler is new, so it
pays for everything as on a list it has never seen; the second figure is the same call
repeated (caches warm, as for chunks retrieved again). The peers have no cache. Two
variants supply embeddings computed beforehand: ctxassembly reads them from each
chunk's ``embedding`` field; LangChain's only way is ``CacheBackedEmbeddings``, filled
before timing.

A cell whose projected time (previous size's median, preparation included, x the growth
in n) is over ``--max-call-seconds`` is not run and says so. Ratios are to ctxassembly model-free at
first sight (for the model pipelines also to ctxassembly + models).

    python benchmarks/speed.py [--sizes 40,200,1000,10000] [--budget 1000]
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _tables import DEFAULT_QUESTIONS, RESULTS, load, load_corpus, load_records, machine, publish
from peers import LABELS, Ctx, LangChain, build
from speed_core import clear_text_caches

import ctxassembly

ORDER = [
    "naive_topk",
    "naive_budget",
    "llamaindex",
    "llamaindex_bf",
    "haystack",
    "langchain",
    "langchain_bf",
    "langchain_cached",
    "ctxassembly",
    "ctxassembly_models",
    "ctxassembly_models_emb",
    "ctxassembly_rerank_emb",
]
LABELS = {
    **LABELS,
    "langchain_cached": "LangChain, embeddings supplied (CacheBackedEmbeddings, filled beforehand)",
    "ctxassembly_models_emb": "**ctxassembly + MiniLM, embeddings supplied**",
    "ctxassembly_rerank_emb": "ctxassembly + MiniLM without sentence extraction (`extract=False`), embeddings supplied",
}
CTX = {"ctxassembly", "ctxassembly_models", "ctxassembly_models_emb", "ctxassembly_rerank_emb"}
SUPPLIED = {"ctxassembly_models_emb", "ctxassembly_rerank_emb"}
OPTIONS: dict[str, dict[str, Any]] = {"ctxassembly_rerank_emb": {"extract": False}}


def enlarged(record: dict[str, Any], corpus: list[dict[str, Any]], n: int, rng: random.Random) -> dict[str, Any]:
    cands = list(record["candidates"])
    if n > len(cands):
        # a retriever hands back its best first: the real candidates lead, the rest follow
        extra = rng.sample(corpus, n - len(cands))
        cands += [{**c, "score": round(rng.uniform(0.1, 0.5), 4)} for c in extra]
    return {**record, "candidates": cands[:n]}


def with_embeddings(record: dict[str, Any], embed: Callable[[list[str]], Any]) -> dict[str, Any]:
    vectors = embed([c["text"] for c in record["candidates"]])
    return {**record, "candidates": [{**c, "embedding": v} for c, v in zip(record["candidates"], vectors, strict=True)]}


class Timed:
    """A pipeline plus how to prepare its input and caches for a first-sight call."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.models = name in ("ctxassembly_models", *SUPPLIED)
        if name == "langchain_cached":
            self.pipe: Any = LangChain(cached=True)
        elif name in CTX:
            self.pipe = Ctx(models=self.models, **OPTIONS.get(name, {}))
        else:
            self.pipe = build(name)

    def prepare(self, record: dict[str, Any]) -> dict[str, Any]:
        """Untimed work a user would have done before: supplied vectors, a filled cache."""
        if self.name in SUPPLIED:
            from ctxassembly.models import embedder_for

            return with_embeddings(record, embedder_for(_model_of()).embed)
        if self.name == "langchain_cached":
            self.pipe.filter.embeddings.embed_documents([c["text"] for c in record["candidates"]])
        return record

    def cold(self) -> None:
        if self.name in CTX:
            clear_text_caches()
            self.pipe = Ctx(models=self.models, **OPTIONS.get(self.name, {}))

    def __call__(self, record: dict[str, Any], budget: int) -> Any:
        return self.pipe(record, budget)


def _model_of() -> Any:
    """The one MiniLM instance the ctxassembly pipelines use (so its Embedder is shared)."""
    from peers import _st_model
    from sentence_transformers import SentenceTransformer

    return _st_model(SentenceTransformer)


def one_call(t: Timed, raw: dict[str, Any], budget: int) -> tuple[float, float | None, float, dict[str, Any]]:
    """One first-sight call (and, for ctxassembly, the same list again): ms first, ms
    repeat, ms including the untimed preparation, and the prepared record."""
    t_prep = time.perf_counter()
    r = t.prepare(raw)
    t.cold()
    gc.collect()
    t0 = time.perf_counter()
    t(r, budget)
    first = (time.perf_counter() - t0) * 1000
    repeat = None
    if t.name in CTX:
        t1 = time.perf_counter()
        t(r, budget)
        repeat = (time.perf_counter() - t1) * 1000
    return first, repeat, (time.perf_counter() - t_prep) * 1000, r


def measure(
    timed: dict[str, Timed], names: list[str], records: list[dict[str, Any]], budget: int, cell_seconds: float
) -> dict[str, dict[str, Any]]:
    """All pipelines of one size, interleaved: each question goes through every pipeline
    before the next question (the order rotating), so a change of machine load in the
    middle of the run hits every pipeline alike and the ratios stay comparable."""
    acc: dict[str, dict[str, Any]] = {n: {"firsts": [], "repeats": [], "total": [], "spent": 0.0} for n in names}
    for i, raw in enumerate(records):
        for name in names[i % len(names) :] + names[: i % len(names)]:
            a = acc[name]
            if a["spent"] > cell_seconds:
                continue
            first, repeat, total, a["last"] = one_call(timed[name], raw, budget)
            a["firsts"].append(first)
            a["total"].append(total)
            if repeat is not None:
                a["repeats"].append(repeat)
            a["spent"] += total / 1000  # untimed preparation still counts against the cell's time
    return {
        name: {
            "calls": len(a["firsts"]),
            "ms_with_prep": statistics.median(a["total"]),
            "ms": statistics.median(a["firsts"]),
            "ms_repeat": statistics.median(a["repeats"]) if a["repeats"] else None,
            "last": a["last"],
        }
        for name, a in acc.items()
        if a["firsts"]
    }


def peak_mib(t: Timed, record: dict[str, Any], budget: int) -> float:
    t.cold()
    gc.collect()
    tracemalloc.start()
    try:
        t(record, budget)
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def fmt_ms(ms: float | None) -> str:
    if ms is None:
        return "–"
    return f"{ms:,.2f}" if ms < 10 else f"{ms:,.1f}" if ms < 1000 else f"{ms:,.0f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("questions", nargs="?", default=str(DEFAULT_QUESTIONS))
    ap.add_argument("--sizes", default="40,200,1000,10000")
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--pipelines", default=",".join(ORDER))
    ap.add_argument("--questions-per-cell", type=int, default=10, dest="per_cell")
    ap.add_argument("--cell-seconds", type=float, default=20.0, help="stop repeating a cell after this long")
    ap.add_argument("--max-call-seconds", type=float, default=90.0, help="skip a cell projected slower than this")
    ap.add_argument("--no-publish", action="store_true")
    ap.add_argument("--core-only", action="store_true", help="republish the model-free table from results/speed.json")
    args = ap.parse_args()
    if args.core_only:
        rows = json.loads((RESULTS / "speed.json").read_text())
        publish("speed_core", core_table({(r["pipeline"], r["n"]): r for r in rows}, args.budget))
        return
    records = load_records(args.questions)
    corpus = load_corpus(Path(args.questions).parent)
    for c in corpus:
        c.pop("tokens", None), c.pop("release", None)
    sizes = [int(s) for s in args.sizes.split(",")]
    names = [n for n in args.pipelines.split(",") if n]
    load_start, t_start = load(), time.perf_counter()
    warm = records[-1]  # warm-up on a question outside the timed ones: model loads, imports
    timed = {}
    for name in names:
        timed[name] = Timed(name)
        timed[name](timed[name].prepare(warm), args.budget)
    rng = random.Random(0)
    lists = {n: [enlarged(r, corpus, n, rng) for r in records[: args.per_cell]] for n in sizes}
    cells: dict[tuple[str, int], dict[str, Any]] = {}
    prev: dict[str, tuple[int, float]] = {}
    for n in sizes:
        active = []
        for name in names:
            if name in prev and prev[name][1] * n / prev[name][0] > args.max_call_seconds * 1000:
                cells[name, n] = {"skipped": prev[name][1] * n / prev[name][0]}
                print(
                    f"{name:24} n={n:>6}: skipped (projected {cells[name, n]['skipped'] / 1000:.0f} s/call)", flush=True
                )
            else:
                active.append(name)
        for name, cell in measure(timed, active, lists[n], args.budget, args.cell_seconds).items():
            cell["peak_mib"] = peak_mib(timed[name], cell.pop("last"), args.budget) if cell["ms"] < 10_000 else None
            cells[name, n] = cell
            prev[name] = (n, cell["ms_with_prep"])  # project with the preparation: it grows with n too
            print(
                f"{name:24} n={n:>6}: {fmt_ms(cell['ms'])} ms ({cell['calls']} calls), "
                f"repeat {fmt_ms(cell['ms_repeat'])}, peak {cell['peak_mib']} MiB, load {load()}",
                flush=True,
            )
    text = render(
        cells=cells, names=names, sizes=sizes, args=args, load_start=load_start, seconds=time.perf_counter() - t_start
    )
    print(text)
    if not args.no_publish:
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "speed.json").write_text(
            json.dumps([{"pipeline": k[0], "n": k[1], **v} for k, v in cells.items()], indent=1, default=str)
        )
        publish("speed", text)
        if "ctxassembly" in names:
            publish("speed_core", core_table(cells, args.budget))


def core_table(cells: dict[tuple[str, int], dict[str, Any]], budget: int) -> str:
    """ctxassembly model-free alone: first sight, repeated, peak memory, growth."""
    rows = sorted((n, c) for (name, n), c in cells.items() if name == "ctxassembly" and "ms" in c)
    lines = [
        f"From `speed.py` (budget {budget:,}; load average in the speed table below):",
        "",
        "| candidates | calls | ms p50, first sight (caches emptied) | ms p50, same list again | peak MiB (one call) |",
        "|---:|---:|---:|---:|---:|",
    ]
    for n, c in rows:
        peak = "n/a" if c.get("peak_mib") is None else f"{float(c['peak_mib']):.1f}"
        lines.append(f"| {n:,} | {c['calls']} | {fmt_ms(c['ms'])} | {fmt_ms(c.get('ms_repeat'))} | {peak} |")
    by_n = {n: c["ms"] for n, c in rows}
    if 1000 in by_n and 10000 in by_n:
        lines += [
            "",
            f"Growth 1,000 -> 10,000 candidates (first sight): x{by_n[10000] / by_n[1000]:.1f} for x10 input.",
        ]
    return "\n".join(lines)


def render(
    *,
    cells: dict[tuple[str, int], dict[str, Any]],
    names: list[str],
    sizes: list[int],
    args: argparse.Namespace,
    load_start: str,
    seconds: float,
) -> str:
    def ms(name: str, n: int) -> float | None:
        c = cells.get((name, n), {})
        return c.get("ms")

    head = "| pipeline | " + " | ".join(f"{n:,}" for n in sizes) + " | growth 40→1,000 | growth 1,000→10,000 |"
    lines = [
        f"ctxassembly {ctxassembly.__version__}; budget {args.budget:,} tokens; machine: {machine()}; "
        f"load average {load_start} at the start, {load()} at the end; {seconds / 60:.0f} min for the run. "
        f"Median ms per call (calls per cell: up to {args.per_cell} questions or {args.cell_seconds:.0f} s; "
        "pipelines interleaved question by question); "
        "in brackets, the ratio to ctxassembly model-free at first sight.",
        "",
        head,
        "|---|" + "---:|" * (len(sizes) + 2),
    ]
    for name in names:
        row = [LABELS.get(name, name)]
        for n in sizes:
            c = cells.get((name, n), {})
            if "skipped" in c:
                row.append(f"not run (~{c['skipped'] / 1000:,.0f} s projected)")
                continue
            base = ms("ctxassembly", n)
            ratio = f" (x{c['ms'] / base:,.1f})" if base and name != "ctxassembly" else ""
            rep = f"; repeat {fmt_ms(c['ms_repeat'])}" if c.get("ms_repeat") is not None else ""
            row.append(f"{fmt_ms(c['ms'])}{ratio}{rep}")
        for a, b in ((40, 1000), (1000, 10000)):
            x, y = ms(name, a), ms(name, b)
            row.append(f"x{y / x:,.0f}" if x and y else "–")
        lines.append("| " + " | ".join(row) + " |")
    lines += [
        "",
        "Peak traced memory of one call, MiB (Python + numpy allocations; torch's buffers are not seen):",
        "",
    ]
    lines += ["| pipeline | " + " | ".join(f"{n:,}" for n in sizes) + " |", "|---|" + "---:|" * len(sizes)]
    for name in names:
        vals = [cells.get((name, n), {}).get("peak_mib") for n in sizes]
        lines.append(
            f"| {LABELS.get(name, name)} | " + " | ".join("–" if v is None else f"{v:,.1f}" for v in vals) + " |"
        )
    lines += ["", "Acceptance ratios (same run):", ""]
    checks = [
        ("Haystack / ctxassembly model-free at 1,000", "haystack", "ctxassembly", 1000, 3),
        ("LangChain / ctxassembly + models at 40", "langchain", "ctxassembly_models", 40, 2),
        ("LangChain / ctxassembly + models, embeddings supplied, at 40", "langchain", "ctxassembly_models_emb", 40, 10),
        (
            "LangChain with its cache filled / ctxassembly + models, embeddings supplied, at 40",
            "langchain_cached",
            "ctxassembly_models_emb",
            40,
            None,
        ),
    ]
    for label, peer, ours, n, target in checks:
        a, b = ms(peer, n), ms(ours, n)
        if a is None or b is None:
            lines.append(f"- {label}: not measured")
            continue
        goal = "" if target is None else (f" (goal >= {target}x: {'met' if a / b >= target else 'NOT met'})")
        lines.append(f"- {label}: {fmt_ms(a)} / {fmt_ms(b)} ms = **x{a / b:,.1f}**{goal}")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
