"""A near twin with something added: how strong a signal is it? (measured, not built)

A planted injection is often a copy of a real chunk with a sentence added. Among the
candidates of every dev question, this finds the near-duplicate pairs (word 5-shingle
Jaccard >= ``--jaccard``, on the text without markup, as the dedup stage reads it) in
which one side adds one to three sentences the other lacks, and asks of the added part:
does it carry an order signal of the title rule (an order at its start, a must on "you",
a claim that the docs are wrong, a weak signal), and what does the shipped model give it
(its probability over the model's threshold)? Split into the planted copies (the
records' ``planted_injection``) and every other pair (version-to-version edits of real
documentation). Prints one line per corpus.

    python benchmarks/injection_twins.py [--jaccard 0.6]
"""

from __future__ import annotations

import argparse
import sys
from itertools import combinations
from pathlib import Path

from _tables import bench_folder

from ctxassembly.jsonl import read_jsonl
from ctxassembly.text import injection as inj
from ctxassembly.text.injection_model import builtin, sentence_bounds
from ctxassembly.text.lexical import jaccard, shingles, without_markup

ROOT = Path(__file__).resolve().parents[1]


def _questions() -> dict[str, Path]:
    bench = bench_folder() / "data"
    vendored = ROOT / "benchmarks" / "data"
    return {
        "django": bench / "django" / "questions.jsonl",
        "pytest": bench / "pytest" / "questions.jsonl",
        "celery": bench / "celery" / "questions.jsonl",
        "black": vendored / "black" / "questions.jsonl.gz",
        "pymdown": vendored / "pymdown" / "questions.jsonl.gz",
    }


def _norm(s: str) -> str:
    return " ".join(s.lower().split())


def _orders(text: str) -> bool:
    return inj._orders(text, 0, len(text))  # the title rule's own test of a block


def added(a: str, b: str) -> list[str]:
    """The sentences of ``a`` that ``b`` does not hold."""
    have = {_norm(b[s:e]) for s, e in sentence_bounds(b)}
    whole = _norm(b)
    return [a[s:e] for s, e in sentence_bounds(a) if _norm(a[s:e]) not in have and _norm(a[s:e]) not in whole]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jaccard", type=float, default=0.6)
    args = ap.parse_args(argv)
    model = builtin()
    print(
        "| corpus | near pairs | a side adds 1-3 sentences | planted: order signal | planted: model / threshold "
        "| others: order signal | others: highest model / threshold |"
    )
    print("|---|---:|---:|---:|---|---:|---:|")
    for name, path in _questions().items():
        pairs = sides = 0
        planted: list[tuple[bool, float]] = []
        others: list[tuple[bool, float]] = []
        seen: set[frozenset[str]] = set()
        for rec in read_jsonl(path):
            ids = rec.get("planted_injection") or []
            if ids is True:
                ids = rec.get("planted_injection_ids") or []
            by_text = {str(c["text"]): c for c in rec["candidates"]}
            texts = list(by_text)
            sh = [shingles(without_markup(t), 5) for t in texts]
            for i, j in combinations(range(len(texts)), 2):
                key = frozenset((texts[i], texts[j]))
                if key in seen or jaccard(sh[i], sh[j], args.jaccard) < args.jaccard:
                    continue
                seen.add(key)
                pairs += 1
                for a, b in ((texts[i], texts[j]), (texts[j], texts[i])):
                    extra = added(a, b)
                    if not 1 <= len(extra) <= 3:
                        continue
                    sides += 1
                    row = (any(_orders(x) for x in extra), float(model.probabilities(extra).max()) / model.threshold)
                    (planted if by_text[a]["id"] in ids else others).append(row)
        top = max((p for _, p in others), default=0.0)
        print(
            f"| {name} | {pairs} | {sides} | {sum(o for o, _ in planted)} of {len(planted)} | "
            f"{', '.join(f'{p:.2f}' for _, p in sorted(planted, key=lambda r: r[1]))} | "
            f"{sum(o for o, _ in others)} of {len(others)} | {top:.2f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
