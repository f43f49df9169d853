"""Token cost of spotlighting: the contexts of the dev questions rendered plain and marked.

For each question of a dev corpus, the default model-free assembly at ``--budget``; its
chunks are rendered again with ``spotlight="datamark"`` and ``"base64"`` in every format
and counted with cl100k. Prints the median ratio of marked to unmarked tokens and the
note's own cost (said once per prompt).

    python benchmarks/spotlight_cost.py [--corpus django] [--budget 1000]
"""

from __future__ import annotations

import argparse
import statistics

from _tables import DATA, load_records

from ctxassembly import Assembler
from ctxassembly.render import FORMATS, Renderer, Spotlight
from ctxassembly.tokens import get_counter


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="django")
    ap.add_argument("--budget", type=int, default=1000)
    args = ap.parse_args()
    count = get_counter()
    records = load_records(DATA / args.corpus / "questions.jsonl.gz")
    print(f"{args.corpus}: {len(records)} questions, budget {args.budget}, cl100k")
    print("| format | tokens unmarked (median) | datamark | ratio | base64 | ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    for fmt in FORMATS:
        plain, dm, b64 = [], [], []
        assembler = Assembler(format=fmt)
        for r in records:
            out = assembler.run(r["question"], r["candidates"], budget=args.budget)
            plain.append(count(Renderer(fmt).render(out.chunks)))
            dm.append(count(Renderer(fmt, Spotlight.drawn("datamark")).render(out.chunks)))
            b64.append(count(Renderer(fmt, Spotlight("base64")).render(out.chunks)))
        ratio_dm = statistics.median(d / p for d, p in zip(dm, plain, strict=True))
        ratio_b64 = statistics.median(b / p for b, p in zip(b64, plain, strict=True))
        print(
            f"| {fmt} | {statistics.median(plain):.0f} | {statistics.median(dm):.0f} | x{ratio_dm:.2f} | "
            f"{statistics.median(b64):.0f} | x{ratio_b64:.2f} |"
        )
    notes = {m: count(Spotlight(m, "ˆ").note()) for m in ("datamark", "base64")}
    print(f"the note, once per prompt: datamark {notes['datamark']} tokens, base64 {notes['base64']} tokens")


if __name__ == "__main__":
    main()
