"""The floor of a first-sight call: what its injection scan and its token counts cost alone.

A call must scan every chunk it shows (the rules and the learned detector read each shown
chunk's original text) and count the tokens of the texts the budget and the report need
(tiktoken, never seen before at first sight). This takes ``profile_calls.py``'s
candidates, runs one first-sight call per metadata mode, records the texts tiktoken was
asked to encode and the chunks shown, and times the three alone on those texts (CPU
clock, best of ``--repeat``, a fresh word in front of every text each time): no exact
change to the other stages can bring a call below their sum.

    python benchmarks/floor_first.py [--sizes 40] [--meta full --meta none]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's ctxassembly, whatever is installed

import profile_calls  # noqa: E402
from _tables import DEFAULT_QUESTIONS, bench_folder, load_records, strip_metadata  # noqa: E402

from ctxassembly.text.injection import find_injections  # noqa: E402
from ctxassembly.text.injection_model import builtin  # noqa: E402
from ctxassembly.tokens import tiktoken_encoding  # noqa: E402


def _best_ms(f: Callable[[int], Any], repeat: int) -> float:
    best = float("inf")
    for k in range(repeat):
        t0 = time.process_time()
        f(k)
        best = min(best, time.process_time() - t0)
    return best * 1000


def floor(record: dict[str, Any], budget: int, repeat: int) -> dict[str, float]:
    """The tokenized and shown texts of one first-sight call of ``record``, and what
    tiktoken, the learned detector and the rules cost on them alone."""
    enc = tiktoken_encoding("cl100k_base")
    cls = type(enc)
    encode = cls.encode
    asked: list[str] = []

    def recording(self: Any, text: str, *args: Any, **kwargs: Any) -> Any:
        asked.append(text)
        return encode(self, text, *args, **kwargs)

    for _ in range(2):
        profile_calls.one_call(profile_calls.first_sight(record), budget)  # warm-up
    rec = profile_calls.first_sight(record)
    cls.encode = recording  # type: ignore[method-assign]  # only for this one call
    try:
        res = profile_calls.one_call(rec, budget)
    finally:
        cls.encode = encode  # type: ignore[method-assign]
    original = {c["id"]: c["text"] for c in rec["candidates"]}
    shown = [original[c.id] for c in res.chunks]
    model = builtin()
    return {
        "tokenized": len(asked),
        "tokenized_chars": sum(map(len, asked)),
        "tiktoken": _best_ms(lambda k: [len(enc.encode(f"f{k} {t}", disallowed_special=())) for t in asked], repeat),
        "shown": len(shown),
        "shown_chars": sum(map(len, shown)),
        "detector": _best_ms(lambda k: model.spans_many([f"f{k} {t}" for t in shown]), repeat),
        "rules": _best_ms(lambda k: [find_injections.__wrapped__(f"f{k} {t}") for t in shown], repeat),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="40")
    ap.add_argument("--meta", action="append", choices=profile_calls.MODES, help="metadata mode (repeatable)")
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--bench", type=Path, default=bench_folder(), help="folder of score.py")
    a = ap.parse_args()
    strip = strip_metadata(a.bench)
    base = load_records(DEFAULT_QUESTIONS)[0]
    print("| cell | texts tokenized (chars) | tiktoken ms | texts shown (chars) | detector ms | rules ms | sum ms |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for n in (int(x) for x in a.sizes.split(",")):
        grown = {**base, "candidates": profile_calls.grow(base["candidates"], n)}
        for mode in a.meta or ["full", "none"]:
            f = floor(strip(grown, mode, "django"), a.budget, a.repeat)
            total = f["tiktoken"] + f["detector"] + f["rules"]
            print(
                f"| {mode} {n} | {f['tokenized']} ({f['tokenized_chars']:,}) | {f['tiktoken']:.2f} | "
                f"{f['shown']} ({f['shown_chars']:,}) | {f['detector']:.2f} | {f['rules']:.2f} | {total:.2f} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
