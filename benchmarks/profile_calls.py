"""Where the time of a first-sight call goes: per-stage milliseconds and a cProfile top list.

Real traffic brings chunk texts the process has never seen, so every call here gets its
own copy of the candidates with a word no earlier call used written in front of each
text: no cache keyed by text (token counts, shingles, scans, parses) can answer from an
earlier call. The candidates are the first Django dev question's 40, enlarged to 200 and
1,000 with altered copies of them (new ids, a few words replaced by other words of the
same list, jittered scores; so version rules, dedup and rivals all have real work).
The metadata modes are the benchmark's own (``full`` / ``source`` / ``none``, its
``strip_metadata``, imported from ``--bench``, never copied); the stripping is outside
the timed call.

Each cell is the median over ``--calls`` calls of the default model-free pipeline
(``assemble``, the target version passed only when the question names it; ``--models``:
with the MiniLM bi-encoder as reranker and embedder, ``adapters.with_models``) of the call's
wall time and of each stage's ``report.timings_ms``; ``other`` is what the call spends
outside the stages (input checks, rendering, the final fit, the report).
``--cprofile none:1000`` (repeatable) adds the functions with the most own time in that
cell (``--top`` rows), summed over its calls.

    python benchmarks/profile_calls.py [--sizes 40,200,1000] [--meta full --meta none] \
        [--cprofile none:1000] [--publish]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import random
import statistics
import sys
import time
from itertools import count
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's ctxassembly, whatever is installed

import adapters  # noqa: E402
from _tables import DEFAULT_QUESTIONS, bench_folder, load, load_records, machine, publish, strip_metadata  # noqa: E402

from ctxassembly import assemble  # noqa: E402

MODES = ("full", "source", "none")
_SORTS = {"tottime": "by own time", "cumulative": "by time with callees"}
_call = count()


def grow(candidates: list[dict[str, Any]], n: int, seed: int = 28) -> list[dict[str, Any]]:
    """``candidates`` and altered copies of them, ``n`` in all, best score first."""
    rng = random.Random(seed)
    words = sorted({w for c in candidates for w in c["text"].split() if w.isalpha() and len(w) > 3})
    out = [dict(c) for c in candidates[:n]]
    copy_no = 0
    while len(out) < n:
        copy_no += 1
        for c in candidates[: n - len(out)]:
            text = c["text"].split()
            for _ in range(rng.randint(1, 3)):
                text[rng.randrange(len(text))] = rng.choice(words)
            score = (c.get("score") or 0.0) + rng.uniform(-0.05, 0.05)
            out.append({**c, "id": f"{c['id']}#{copy_no}", "text": " ".join(text), "score": round(score, 4)})
    out.sort(key=lambda c: -(c.get("score") or 0.0))
    return out


def first_sight(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with every candidate text new to the process (a word no call used before)."""
    word = f"call{next(_call):06d}"
    return {**record, "candidates": [{**c, "text": f"{word} {c['text']}"} for c in record["candidates"]]}


def one_call(record: dict[str, Any], budget: int, models: bool = False) -> Any:
    """The benchmark adapter's call (``benchmarks/adapters.py``), returning the result."""
    target = record["target_version"] if record.get("version_explicit") else None
    if not models:
        return assemble(record["question"], record["candidates"], budget=budget, target_version=target)
    m = adapters.minilm()
    return assemble(
        record["question"], record["candidates"], budget=budget, target_version=target, reranker=m, embedder=m
    )


def cell(
    record: dict[str, Any], budget: int, calls: int, prof: cProfile.Profile | None, models: bool = False
) -> dict[str, float]:
    """Median ms per call (``total``) and per stage over ``calls`` first-sight calls."""
    one_call(first_sight(record), budget, models)  # warm-up: imports, model load, the cached assembler
    rows: list[dict[str, float]] = []
    for _ in range(calls):
        rec = first_sight(record)
        t0 = time.perf_counter()
        res = one_call(rec, budget, models)
        total = (time.perf_counter() - t0) * 1000
        stages = dict(res.report.timings_ms)
        rows.append({"total": total, **stages, "other": total - sum(stages.values())})
    for _ in range(calls if prof is not None else 0):  # as many calls again, profiled (not timed)
        rec = first_sight(record)
        assert prof is not None  # for mypy: the range is empty otherwise
        prof.enable()
        one_call(rec, budget, models)
        prof.disable()
    names = list(dict.fromkeys(k for r in rows for k in r))
    return {k: statistics.median(r.get(k, 0.0) for r in rows) for k in names}


def top_list(prof: cProfile.Profile, top: int, sort: str) -> str:
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats(sort).print_stats(top)
    lines = out.getvalue().splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("ncalls"))
    keep = [line.replace(str(ROOT) + "/", "") for line in lines[start:] if line.strip()]
    return "\n".join(keep)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="40,200,1000")
    ap.add_argument("--meta", action="append", choices=MODES, help="metadata mode (repeatable; default: all three)")
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--models", action="store_true", help="the MiniLM pipeline (adapters.with_models)")
    ap.add_argument("--calls", type=int, default=0, help="calls a cell (default: 15 up to 200 candidates, else 7)")
    ap.add_argument("--cprofile", action="append", default=[], help="MODE:SIZE to profile (repeatable)")
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--sort", default="tottime", choices=("tottime", "cumulative"), help="cProfile order")
    ap.add_argument("--bench", type=Path, default=bench_folder(), help="folder of score.py")
    ap.add_argument("--clock", default="wall", choices=("wall", "cpu"), help="cpu: the process's CPU time")
    ap.add_argument("--publish", action="store_true", help="write the table to benchmarks/README.md")
    a = ap.parse_args()
    if a.clock == "cpu":
        # every perf_counter of the process (the stages' timings too) reads the CPU clock:
        # on a shared machine, waiting for a core inflates wall time far more than work
        time.perf_counter = time.process_time
    strip = strip_metadata(a.bench)
    base = load_records(DEFAULT_QUESTIONS)[0]
    modes = a.meta or list(MODES)
    sizes = [int(x) for x in a.sizes.split(",")]
    profiled = {tuple(s.split(":")) for s in a.cprofile}
    cells: dict[tuple[str, int], dict[str, float]] = {}
    profiles: dict[tuple[str, int], str] = {}
    for n in sizes:
        grown = {**base, "candidates": grow(base["candidates"], n)}
        for mode in modes:
            rec = strip(grown, mode, "django")
            calls = a.calls or (15 if n <= 200 else 7)
            prof = cProfile.Profile() if (mode, str(n)) in profiled else None
            cells[mode, n] = cell(rec, a.budget, calls, prof, a.models)
            if prof is not None:
                profiles[mode, n] = top_list(prof, a.top, a.sort)
            print(f"{mode} {n}: {cells[mode, n]['total']:.1f} ms", file=sys.stderr)
    text = render(
        cells, profiles, budget=a.budget, sort=a.sort, clock=a.clock, pipeline="MiniLM" if a.models else "model-free"
    )
    print(text)
    if a.publish:
        publish("profile", text)
    return 0


def render(
    cells: dict[tuple[str, int], dict[str, float]],
    profiles: dict[tuple[str, int], str],
    *,
    budget: int,
    sort: str,
    clock: str,
    pipeline: str,
) -> str:
    keys = list(cells)
    stages = list(dict.fromkeys(k for c in cells.values() for k in c if k not in ("total", "other")))
    head = "| stage | " + " | ".join(f"{m} {n}" for m, n in keys) + " |"
    lines = [
        f"First-sight calls, {pipeline} pipeline, budget {budget}, ms per call ({clock} clock, median; per stage "
        f"`report.timings_ms`). {machine()}, load {load()}.",
        "",
        head,
        "|---|" + "---:|" * len(keys),
    ]
    for name in [*stages, "other", "total"]:
        label = f"**{name}**" if name == "total" else name
        lines.append(f"| {label} | " + " | ".join(f"{cells[k].get(name, 0.0):.2f}" for k in keys) + " |")
    for (mode, n), listing in profiles.items():
        lines += ["", f"cProfile, `{mode}` metadata, {n} candidates ({_SORTS[sort]}, summed over the calls):", ""]
        lines += ["```", listing, "```"]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
