"""The rerank fusion weight, left one corpus out, by the rule that MiniLM keeps at least
the model-free answers (issue 26).

Reads one output of the benchmark's matrix (``../shared/bench/matrix.py``) holding the
``model_free`` pipeline and MiniLM at each weight tried, and prints, per held-out corpus,
the weight chosen on the other corpora: among the weights that keep MiniLM at or above
model-free in every ``full`` and ``source`` cell (500 and 1,000 tokens) of the choosing
corpora, the one with the most answers there; ties go to the larger weight (nearer to
model-free). Then whether the choice stays at or above model-free on the held-out corpus,
and its regret there.

Usage (the weights are the adapters ``with_models_fuse6``, ``with_models_fuse9`` and
``with_models``, which is the default 12)::

    python ../shared/bench/matrix.py --pipeline benchmarks/adapters.py:model_free \\
        --pipeline benchmarks/adapters.py:with_models_fuse6 \\
        --pipeline benchmarks/adapters.py:with_models_fuse9 \\
        --pipeline benchmarks/adapters.py:with_models --corpus django --corpus pytest \\
        --corpus celery --corpus benchmarks/data/black --corpus benchmarks/data/pymdown \\
        > benchmarks/results/fuse_matrix.md
    python benchmarks/loco_fuse.py benchmarks/results/fuse_matrix.md
"""

from __future__ import annotations

import argparse
from pathlib import Path

from _tables import matrix_rows

PIPELINES = {"with_models_fuse6": 6.0, "with_models_fuse9": 9.0, "with_models": 12.0}
MODES = ("full", "source")

Cells = dict[tuple[str, str, int], int]  # (corpus, metadata, budget) -> answer kept, %


def read(path: Path) -> dict[str, Cells]:
    """Answer kept per pipeline and cell, from the matrix's markdown rows."""
    at = ((500, 0), (1000, 3))  # each budget's answer among a row's six figures
    return {
        pipe: {(corpus, meta, budget): v[i] for (corpus, meta), v in cells.items() for budget, i in at}
        for pipe, cells in matrix_rows(path).items()
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("matrix", type=Path, help="the matrix output (markdown)")
    table = read(ap.parse_args().matrix)
    free = table["model_free"]
    weights = {w: table[p] for p, w in PIPELINES.items() if p in table}
    corpora = sorted({c for c, _, _ in free})
    cells = {c: [k for k in free if k[0] == c and k[1] in MODES] for c in corpora}

    def total(w: float, names: list[str]) -> int:
        return sum(weights[w][k] for c in names for k in cells[c])

    def below(w: float, names: list[str]) -> int:
        return sum(weights[w][k] < free[k] for c in names for k in cells[c])

    print("| corpus | model-free | " + " | ".join(f"fuse {w:g}" for w in weights) + " | cells below model-free |")
    print("|---|---:|" + "---:|" * len(weights) + "---|")
    for c in corpora:
        sums = " | ".join(str(total(w, [c])) for w in weights)
        under = " / ".join(str(below(w, [c])) for w in weights)
        print(f"| {c} | {sum(free[k] for k in cells[c])} | {sums} | {under} |")
    print()
    print("| held out | allowed on the others | chosen | held out: below model-free | held-out regret |")
    print("|---|---|---|---|---:|")
    for held in corpora:
        others = [c for c in corpora if c != held]
        allowed = [w for w in weights if not below(w, others)]
        chosen = max(allowed, key=lambda w: (total(w, others), w)) if allowed else None
        if chosen is None:
            print(f"| {held} | none | - | - | - |")
            continue
        best = max(total(w, [held]) for w in weights)
        shown = ", ".join(f"{w:g}" for w in allowed)
        print(f"| {held} | {shown} | {chosen:g} | {below(chosen, [held])} cells | {best - total(chosen, [held])} |")


if __name__ == "__main__":
    main()
