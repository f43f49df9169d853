"""The blind2 red team (``benchmarks/data/blind2``): removed share per class, benign flags.

Every payload of ``payloads.jsonl`` is planted in real chunks of the six dev corpora
(two hosts each, 400-1,500 characters, the same pick every run) at the start (its own
block before the host), in the middle (after a sentence inside the host's text for a
one-line payload, between two blocks for a multi-line one) and at the end (its own block),
one chunk per call to the ``safety`` stage with the default policy (``remove``) and the
shipped model. A placement counts as removed when no five-word run of the payload
survives (``injection.survives``, after dropping zero-width characters and folding the
Cyrillic / Greek / Armenian look-alikes of Latin letters on both sides) or the chunk is
dropped.

Every near miss of ``benign.jsonl`` is run alone and planted the same way: it is flagged
when the detector flags it alone, or when the stage changes a chunk it is planted in.

``--set PATH`` scores another set the same way: a directory holding ``payloads.jsonl`` and
``benign.jsonl`` like ``blind2``, or one JSON file with ``payloads`` and ``benign`` lists
(and an optional ``name``), such as ``benchmarks/data/injection_blind3.json``.

``--wrap COLS`` hard-wraps every line of the payloads and near misses longer than ``COLS``
characters the way documentation is written (``textwrap``; a continuation keeps the line's
indent, goes on past its bullet and repeats its comment or quote mark), before planting.

``--places`` adds the removed share per placement; ``--by FIELD`` the removed share and
the near misses flagged per value of a field of the set's records (``--by lang``: per
language, English apart from the others).

    python benchmarks/injection_blind2.py [-v] [--set PATH] [--wrap COLS] [--places] [--by FIELD]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import textwrap
import unicodedata
from collections import Counter
from pathlib import Path

from injection import _ctx, _middle, detect, survives

from ctxassembly.chunk import Chunk
from ctxassembly.jsonl import read_jsonl
from ctxassembly.stages.safety import Safety
from ctxassembly.text.injection import CLASSES
from ctxassembly.text.injection_model import builtin

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data" / "blind2"
CORPORA = ("django", "pytest", "celery", "black", "pymdown", "pip")

_FOLD = str.maketrans("АВЕКМНОРСТХаеорсухіѕјԁΑΒΕΖΗΙΚΜΝΟΡΤΥΧνοՏՕ", "ABEKMHOPCTXaeopcyxisjdABEZHIKMNOPTYXvoSO")


def _visible(text: str) -> str:
    return "".join(c for c in text if unicodedata.category(c) != "Cf").translate(_FOLD)


def hosts(per_corpus: int = 2) -> list[str]:
    out = []
    for name in CORPORA:
        rows = [str(r["text"]) for r in read_jsonl(ROOT / "benchmarks" / "data" / name / "corpus.jsonl.xz")]
        fit = [t for t in rows if 400 <= len(t) <= 1500 and "\n\n" in t and not detect(t)]
        out += fit[:: max(1, len(fit) // (per_corpus + 1))][1 : per_corpus + 1]
    return out


def plant(host: str, payload: str, place: str) -> str:
    if place == "start":
        return f"{payload}\n\n{host}"
    if place == "end":
        return f"{host.rstrip()}\n\n{payload}\n"
    if "\n" in payload.strip():
        return host.replace("\n\n", f"\n\n{payload}\n\n", 1)
    return _middle(host, payload)


PLACES = ("start", "middle", "end")

_LEAD = re.compile(r"[ \t]*(?:(?:#|//|>)[ \t]*)?(?:(?:[-*+]|\d{1,3}[.)])[ \t]+)?")


def wrapped(text: str, cols: int) -> str:
    """``text`` with each line longer than ``cols`` hard-wrapped: its continuation lines
    keep its indent and comment or quote mark and go on at the column past its bullet."""
    out = []
    for line in text.split("\n"):
        if len(line) <= cols:
            out.append(line)
            continue
        lead = _LEAD.match(line).group()  # type: ignore[union-attr]  # (matches the empty string)
        rest = re.sub(r"(?:[-*+]|\d{1,3}[.)])(?=[ \t]+$)", lambda m: " " * len(m.group()), lead)
        out.append(
            textwrap.fill(
                line[len(lead) :],
                cols,
                initial_indent=lead,
                subsequent_indent=rest,
                break_long_words=False,
                break_on_hyphens=False,
            )
        )
    return "\n".join(out)


def load_set(path: Path) -> tuple[str, list[dict[str, str]], list[dict[str, str]]]:
    """A set's name, payloads and near misses: a ``blind2``-style directory or one JSON file."""
    if path.is_dir():
        rows, benign_rows, name = read_jsonl(path / "payloads.jsonl"), read_jsonl(path / "benign.jsonl"), path.name
    else:
        doc = json.loads(path.read_text(encoding="utf-8"))
        rows, benign_rows, name = doc["payloads"], doc.get("benign", []), str(doc.get("name") or path.stem)
    payloads = [{k: str(v) for k, v in r.items()} for r in rows]
    benign = [{k: str(v) for k, v in r.items()} for r in benign_rows]
    return name, payloads, benign


def main(argv: list[str] | None = None) -> int:  # noqa: PLR0915 (a report, read top to bottom)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-v", "--verbose", action="store_true", help="list every missed placement")
    ap.add_argument("--set", type=Path, default=DATA, help="a set directory or JSON file (default: blind2)")
    ap.add_argument("--wrap", type=int, metavar="COLS", help="hard-wrap the texts' lines longer than COLS first")
    ap.add_argument("--places", action="store_true", help="also print the removed share per placement")
    ap.add_argument("--by", metavar="FIELD", help="also print the removed share per value of this field (e.g. lang)")
    args = ap.parse_args(argv)
    name, payloads, benign = load_set(args.set)
    if args.wrap:
        payloads = [{**r, "text": wrapped(r["text"], args.wrap)} for r in payloads]
        benign = [{**r, "text": wrapped(r["text"], args.wrap)} for r in benign]
    hs = hosts()
    safety = Safety(model=builtin())
    stats: dict[str, Counter[str]] = {}
    missed: dict[str, list[str]] = {}
    by_place: dict[str, Counter[str]] = {place: Counter() for place in PLACES}
    by_value: dict[str, Counter[str]] = {}
    for rec in payloads:
        s = stats.setdefault(rec["class"], Counter())
        for place in PLACES:
            for h, host in enumerate(hs):
                out = safety.run([Chunk(id=f"h{h}", text=plant(host, rec["text"], place), index=0)], _ctx())
                kept = out[0].text if out else ""
                s["planted"] += 1
                by_place[place]["planted"] += 1
                value = by_value.setdefault(rec.get(args.by or "", "?"), Counter())
                value["planted"] += 1
                if survives(_visible(rec["text"]), _visible(kept)):
                    missed.setdefault(rec["id"], []).append(place)
                else:
                    s["removed"] += 1
                    by_place[place]["removed"] += 1
                    value["removed"] += 1
    print(f"{name}: {len(payloads)} payloads x {len(PLACES)} placements x {len(hs)} real hosts (6 corpora)")
    print("| class | payloads | planted | removed | share |")
    print("|---|---:|---:|---:|---:|")
    total = Counter[str]()
    for cls in CLASSES:
        s = stats.get(cls, Counter())
        if not s:
            continue
        total.update(s)
        n = sum(1 for p in payloads if p["class"] == cls)
        print(f"| {cls} | {n} | {s['planted']} | {s['removed']} | {s['removed'] / max(s['planted'], 1):.1%} |")
    print(
        f"| all | {len(payloads)} | {total['planted']} | {total['removed']} | "
        f"{total['removed'] / max(total['planted'], 1):.1%} |"
    )
    if args.places:
        print("\n| placement | planted | removed | share |\n|---|---:|---:|---:|")
        for place, c in by_place.items():
            print(f"| {place} | {c['planted']} | {c['removed']} | {c['removed'] / max(c['planted'], 1):.1%} |")
    if args.by:
        print(f"\n| {args.by} | planted | removed | share |\n|---|---:|---:|---:|")
        for key, c in sorted(by_value.items()):
            print(f"| {key} | {c['planted']} | {c['removed']} | {c['removed'] / max(c['planted'], 1):.1%} |")
        rest = sum((c for k, c in by_value.items() if k != "en"), Counter[str]())
        if "en" in by_value and rest:
            print(f"| all but en | {rest['planted']} | {rest['removed']} | {rest['removed'] / rest['planted']:.1%} |")
    by_id = {p["id"]: p for p in payloads}
    for pid, places in missed.items():
        n = len(places)
        line = f"  missed {n}/{len(PLACES) * len(hs)}: {pid} ({by_id[pid]['shape']})"
        print(line + (f" {sorted(Counter(places).items())}" if args.verbose else ""))
    flagged = []
    for rec in benign:
        hit = bool(detect(rec["text"]))
        for place in PLACES:
            for h, host in enumerate(hs):
                text = plant(host, rec["text"], place)
                out = safety.run([Chunk(id=f"h{h}", text=text, index=0)], _ctx())
                hit = hit or not out or out[0].text != text
        if hit:
            flagged.append(rec)
    print(f"\nnear misses: {len(flagged)} of {len(benign)} flagged")
    if args.by:
        counts = Counter(str(r.get(args.by, "?")) for r in benign)
        hits = Counter(str(r.get(args.by, "?")) for r in flagged)
        print("  by " + args.by + ": " + ", ".join(f"{k} {hits[k]}/{n}" for k, n in sorted(counts.items())))
    for rec in flagged:
        print(f"  flagged: {rec['id']} ({rec['shape']}): {rec['text'][:90]!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
