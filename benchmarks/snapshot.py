"""A snapshot of everything a call decides, to prove a restructuring changed nothing.

For every dev corpus x metadata mode x budget x pipeline it records the rendered context,
the kept ids and every chunk's fate (``Decision.to_dict()``) and the report's notes, one
JSON line per call. Take one before a change and one after, then compare:

    HF_HUB_OFFLINE=1 python benchmarks/snapshot.py take /tmp/before.jsonl.gz
    ... change the code ...
    HF_HUB_OFFLINE=1 python benchmarks/snapshot.py take /tmp/after.jsonl.gz
    python benchmarks/snapshot.py compare /tmp/before.jsonl.gz /tmp/after.jsonl.gz

``--pipeline model_free`` (default: model_free and with_models), ``--corpus`` (default:
every vendored dev corpus), ``--budget`` (default 500, 1000, 2000). The metadata modes are
the benchmark's own (``strip_metadata`` of its ``score.py``, read from ``--bench``, the
benchmark folder beside the repository by default; it is imported, never copied).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import adapters  # noqa: E402
from _tables import bench_folder, strip_metadata  # noqa: E402

from ctxassembly import assemble  # noqa: E402
from ctxassembly.jsonl import read_jsonl  # noqa: E402

MODES = ("full", "source", "none")


def _pipelines() -> dict[str, Callable[..., Any]]:
    def model_free(rec: dict[str, Any], budget: int) -> Any:
        return assemble(rec["question"], rec["candidates"], budget=budget, target_version=adapters._version(rec))

    def with_models(rec: dict[str, Any], budget: int) -> Any:
        m = adapters.minilm()
        return assemble(
            rec["question"],
            rec["candidates"],
            budget=budget,
            target_version=adapters._version(rec),
            reranker=m,
            embedder=m,
        )

    return {"model_free": model_free, "with_models": with_models}


def _corpora(names: list[str] | None) -> list[Path]:
    data = ROOT / "benchmarks" / "data"
    if names:
        return [data / n if (data / n).is_dir() else Path(n) for n in names]
    return sorted(p.parent for p in data.glob("*/questions.jsonl*") if p.parent.name != "synthetic")


def records(folder: Path) -> list[dict[str, Any]]:
    """The questions of a vendored corpus folder (compressed or not)."""
    qs = next(p for p in (folder / "questions.jsonl.gz", folder / "questions.jsonl") if p.exists())
    return list(read_jsonl(qs))


def take(out: Path, pipelines: list[str], corpora: list[Path], budgets: list[int], bench: Path) -> int:
    strip = strip_metadata(bench)
    pipes = _pipelines()
    n = 0
    with gzip.open(out, "wt", encoding="utf-8") as f:
        for name in pipelines:
            for folder in corpora:
                corpus = records(folder)
                for mode in MODES:
                    for budget in budgets:
                        for rec in corpus:
                            res = pipes[name](strip(rec, mode, folder.name), budget)
                            line = {
                                "key": [name, folder.name, mode, budget, rec["qid"]],
                                "text": res.text,
                                "kept": [c.id for c in res.chunks],
                                "fates": [d.to_dict() for d in res.report.decisions],
                                "notes": res.report.notes,
                            }
                            f.write(json.dumps(line, sort_keys=True, default=str) + "\n")
                            n += 1
                print(f"{name} {folder.name}: {n} calls so far", file=sys.stderr, flush=True)
    print(f"{n} calls written to {out}")
    return 0


def _read(path: Path) -> Iterator[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            yield json.loads(line)


def compare(a: Path, b: Path) -> int:
    left = {tuple(r["key"]): r for r in _read(a)}
    right = {tuple(r["key"]): r for r in _read(b)}
    if left.keys() != right.keys():
        only_a, only_b = len(left.keys() - right.keys()), len(right.keys() - left.keys())
        print(f"different calls: {only_a} only in {a}, {only_b} only in {b}")
        return 1
    fields = ("text", "kept", "fates", "notes")
    diff = {field: [k for k in left if left[k][field] != right[k][field]] for field in fields}
    for field, keys in diff.items():
        first = f"; first: {keys[0]}" if keys else ""
        print(f"{field}: {len(left) - len(keys)} of {len(left)} calls identical{first}")
    return int(any(diff.values()))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("take")
    t.add_argument("out", type=Path)
    t.add_argument("--pipeline", action="append", choices=sorted(_pipelines()))
    t.add_argument("--corpus", action="append")
    t.add_argument("--budget", type=int, action="append")
    t.add_argument("--bench", type=Path, default=bench_folder())
    c = sub.add_parser("compare")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    args = ap.parse_args()
    if args.cmd == "compare":
        return compare(args.a, args.b)
    return take(
        args.out,
        args.pipeline or ["model_free", "with_models"],
        _corpora(args.corpus),
        args.budget or [500, 1000, 2000],
        args.bench,
    )


if __name__ == "__main__":
    sys.exit(main())
