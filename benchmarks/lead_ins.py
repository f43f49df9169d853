"""How often a cut leaves a lead-in over a gap: prose that ends in a colon ("use the
following command:", reST's ``::``) kept in a cut chunk while what it leads into was left
out, as the reader of the context sees it (the colon right before the gap marker, or at
the end of a cut chunk).

    HF_HUB_OFFLINE=1 python benchmarks/lead_ins.py                 # every vendored corpus
    HF_HUB_OFFLINE=1 python benchmarks/lead_ins.py --corpus alembic --examples 3

Model-free calls (the ``model_free`` adapter's), the benchmark's three metadata modes
(``strip_metadata`` of its ``score.py``, imported from ``--bench``, never copied), budgets
500 and 1,000. Prints, per corpus, the chunks the contexts hold cut and how many of them
end a kept passage on a lead-in.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from _tables import bench_folder, strip_metadata  # noqa: E402
from snapshot import _corpora, _pipelines, records  # noqa: E402

from ctxassembly.text.structure import is_mark  # noqa: E402

GAP = "[…]"


def dangling(cut: str, whole: str) -> str | None:
    """The lead-in a cut text leaves over a gap (its last line), else ``None``."""
    pieces = cut.split(GAP)
    ends = [p.rstrip() for p in pieces[:-1]]
    if not whole.rstrip().endswith(cut.rstrip()[-40:]):  # cut at the end too
        ends.append(pieces[-1].rstrip())
    for end in ends:
        last = end.rsplit("\n\n", 1)[-1].strip()
        if last.endswith(":") and not is_mark(last):
            return last.rsplit("\n", 1)[-1]
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", action="append", help="a vendored corpus name or folder (default: all)")
    ap.add_argument("--budget", type=int, action="append")
    ap.add_argument("--examples", type=int, default=0, help="print this many lead-ins per corpus")
    ap.add_argument("--bench", type=Path, default=None, help="the benchmark folder (default: beside the checkout)")
    args = ap.parse_args()
    strip = strip_metadata(args.bench or bench_folder())
    model_free = _pipelines()["model_free"]
    total_cut = total_left = 0
    for folder in _corpora(args.corpus):
        cut = left = 0
        seen: list[str] = []
        for mode in ("full", "source", "none"):
            for budget in args.budget or [500, 1000]:
                for rec in records(folder):
                    r = strip(rec, mode, folder.name)
                    whole = {c["id"]: c["text"] for c in r["candidates"]}
                    res = model_free(r, budget)
                    for c in res.chunks:
                        if GAP not in c.text or c.text == whole.get(c.id):
                            continue
                        cut += 1
                        lead = dangling(c.text, whole.get(c.id, ""))
                        if lead is not None:
                            left += 1
                            if len(seen) < args.examples:
                                seen.append(lead[-100:])
        total_cut, total_left = total_cut + cut, total_left + left
        share = f"{100 * left / cut:.1f}%" if cut else "-"
        print(f"{folder.name:10} cut chunks {cut:5}  a lead-in over a gap {left:4} ({share})")
        for s in seen:
            print(f"    {s}")
    print(f"{'all':10} cut chunks {total_cut:5}  a lead-in over a gap {total_left:4}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
