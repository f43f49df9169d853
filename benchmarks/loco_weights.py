"""The relevance weights, left one corpus out, on two retrievers at once (issue 26).

Reads outputs of the benchmark's matrix (``../shared/bench/matrix.py``) holding the
pipelines ``weights_o{O}l{L}d{D}`` (the benchmark's hybrid BM25 + MiniLM list) and
``dense_weights_o{O}l{L}d{D}`` (a dense-only list of the same candidates), both from
``adapters.py``, and prints:

- per setting, answers / answer cut / wrong exposure summed over ``full`` and ``source``
  (both budgets), the ``none`` answers, and how many corpora lose points against the
  default, for each retriever;
- per held-out corpus, the setting chosen on all the others (the most answers over both
  retrievers, ``full`` and ``source``; ties: the fewer answer cut, then the default), and
  its figures on the held-out corpus beside the default's.

A setting is compared only where both retrievers ran it on every corpus. Usage::

    python ../shared/bench/matrix.py --pipeline benchmarks/adapters.py:weights_o1l2d2 \\
        --pipeline benchmarks/adapters.py:dense_weights_o1l2d2 \\
        --pipeline benchmarks/adapters.py:weights_o2l3d1 \\
        --pipeline benchmarks/adapters.py:dense_weights_o2l3d1 [...] \\
        --corpus django --corpus pytest [...] --budget 500 --budget 1000 \\
        --meta full --meta source --meta none > weights.md
    python benchmarks/loco_weights.py weights.md [more.md ...]
"""

from __future__ import annotations

import argparse
import re
from collections import Counter, defaultdict
from pathlib import Path

from _tables import MatrixCells, fold_choice, matrix_rows, total

_NAME = re.compile(r"(dense_)?weights_(o[\dp]+l[\dp]+d[\dp]+(?:ph[\dp]+)?)")


def read(paths: list[Path]) -> dict[str, dict[str, MatrixCells]]:
    """``{"hybrid" | "dense": {setting: cells}}`` from matrix outputs."""
    out: dict[str, dict[str, MatrixCells]] = {"hybrid": defaultdict(dict), "dense": defaultdict(dict)}
    for path in paths:
        for pipe, cells in matrix_rows(path).items():
            name = _NAME.fullmatch(pipe)
            if name is not None:
                out["dense" if name.group(1) else "hybrid"][name.group(2)].update(cells)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("matrix", nargs="+", type=Path, help="matrix.py outputs")
    ap.add_argument("--default", default="o1l2d2ph1", help="the setting to compare with (the library's default)")
    a = ap.parse_args()
    runs = read(a.matrix)
    hyb, dense = runs["hybrid"], runs["dense"]
    corpora = sorted({c for c, _ in hyb[a.default]})
    full = 3 * len(corpora)
    settings = sorted(s for s in hyb if s in dense and len(hyb[s]) == full and len(dense[s]) == full)
    if a.default not in settings:
        raise SystemExit(f"the default {a.default!r} must be run on both retrievers and every corpus")
    both = {"hybrid": hyb, "dense": dense}

    head = " | ".join(f"{r}: answer / cut / wrong | none | losing corpora" for r in ("hybrid", "dense"))
    print(f"| weights | {head} |")
    print("|---|---|---:|---:|---|---:|---:|")
    for s in settings:
        cols = []
        for run in both.values():
            a_, c_, w_ = (sum(total(run[s], c, f) for c in corpora) for f in (0, 2, 1))
            none = sum(total(run[s], c, 0, ("none",)) for c in corpora)
            lose = sum(total(run[s], c, 0) < total(run[a.default], c, 0) for c in corpora)
            cols += [f"{a_} / {c_} / {w_}", str(none), str(lose)]
        print(f"| {s}{' (default)' if s == a.default else ''} | " + " | ".join(cols) + " |")

    def score(s: str, corpus: str, field: int) -> int:
        return sum(total(run[s], corpus, field) for run in both.values())

    print()
    print("| held out | chosen on the others | hybrid | default | dense | default |")
    print("|---|---|---:|---:|---:|---:|")
    held: Counter[str] = Counter()
    chosen: Counter[str] = Counter()
    for corpus in corpora:
        others = [c for c in corpora if c != corpus]
        best = fold_choice(settings, others, score, a.default)
        chosen[best] += 1
        row = []
        for name, run in both.items():
            got, was = total(run[best], corpus, 0), total(run[a.default], corpus, 0)
            held[name] += got
            held[name + " default"] += was
            row += [str(got), str(was)]
        print(f"| {corpus} | {best} | " + " | ".join(row) + " |")
    print()
    print(
        f"held-out answers: hybrid {held['hybrid']} (default {held['hybrid default']}), "
        f"dense {held['dense']} (default {held['dense default']}); folds: "
        + ", ".join(f"{s} {n}" for s, n in chosen.most_common())
    )


if __name__ == "__main__":
    main()
