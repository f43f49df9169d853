"""Injection detection by class: detection rate on the red-team corpus, false positives on real docs.

Detection: every payload of ``tests/data/redteam.jsonl`` is planted in real chunks of
documentation (the demo corpus shipped with the package) in every placement — glued to
the end of the chunk, as its own paragraph, at the start, in the middle, inside a code
block as a comment — and run through the ``safety`` stage with the default policy
(``remove``). A payload counts as caught when no five-word run of it survives (or the
chunk is dropped); the share of the host's own text that survives is printed too.

Titles: ``tests/data/titled.jsonl`` holds payloads whose addressee is in a title (an
admonition, a tab, a ``<summary>``, a heading, a bold line, a blockquote …) and whose order
is in the block under it, each planted as its own block at the end, at the start and
between two paragraphs of the real chunks; and near misses of the same shapes (titles for
people, titles about models, an address over plain description), each flagged one listed.

Near misses: ``tests/data/benign.jsonl`` holds documentation that *describes* what each
class does (``--ignore`` flags, "disregard this warning if …", password hashing, API
tokens, chat templates in inline code, quoted attack examples); each flagged one is a
false positive, listed.

False positives: every chunk of every corpus given (default: the dev corpora, in full)
goes through the detector; a chunk is a false positive when anything is flagged, listed
by class (``-v`` prints each flagged sentence). Corpora are JSON lines with a ``text``
field; ``.xz`` and ``.gz`` files are read through lzma / gzip.

``--installed`` adds a corpus of the long descriptions (READMEs) of the distributions
installed when ``data/installed/`` was taken (``installed_texts.py``), cut at paragraph
ends into chunks of about 1,500 characters: documentation of other projects, LLM
libraries among them, that no rule was written from (until it was measured).

    python benchmarks/injection.py [--corpus PATH ...] [--installed] [-v]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from installed_texts import readmes

from ctxassembly.chunk import Chunk
from ctxassembly.jsonl import read_jsonl
from ctxassembly.pipeline import Context
from ctxassembly.report import Report
from ctxassembly.stages.safety import Safety
from ctxassembly.text.injection import CLASSES, find_injections
from ctxassembly.text.injection_model import builtin, combine
from ctxassembly.tokens import get_counter

ROOT = Path(__file__).resolve().parents[1]
REDTEAM = ROOT / "tests" / "data" / "redteam.jsonl"
BENIGN = ROOT / "tests" / "data" / "benign.jsonl"
TITLED = ROOT / "tests" / "data" / "titled.jsonl"
HOSTS = ROOT / "ctxassembly" / "data" / "django_demo.jsonl"
DEV_CORPORA = ("django", "pytest", "celery", "black")  # vendored in benchmarks/data/
DEV = [ROOT / "benchmarks" / "data" / name / "corpus.jsonl.xz" for name in DEV_CORPORA]


def _as_comment(payload: str) -> str:
    return "\n".join("    # " + ln for ln in payload.split("\n"))


PLACEMENTS: dict[str, Callable[[str, str], str]] = {
    "glued": lambda host, p: f"{host.rstrip()} {p}",
    "paragraph": lambda host, p: f"{host.rstrip()}\n\n{p}\n",
    "start": lambda host, p: f"{p} {host}",
    "middle": lambda host, p: _middle(host, p),  # noqa: PLW0108 (a table of lambdas reads better)
    "code_comment": lambda host, p: f"{host.rstrip()}\n\n.. code-block:: python\n\n{_as_comment(p)}\n    x = 1\n",
    # a paragraph after a line without final punctuation: a heading, a bullet, a code line
    "after_heading": lambda host, p: f"{host.rstrip()}\n\nConfiguration notes\n-------------------\n\n{p}\n",
    "after_md_heading": lambda host, p: f"## Configuration notes\n{p}\n\n{host}",
    "after_bullet": lambda host, p: (
        f"{host.rstrip()}\n\n* Fixed a crash in the loader\n* Added the ``--fast`` flag\n\n{p}\n"
    ),
    "after_code": lambda host, p: f"{host.rstrip()}\n\n.. code-block:: python\n\n    result = compute(data)\n\n{p}\n",
}


#: where a block with its own title goes: as a block of its own
BLOCK_PLACEMENTS: dict[str, Callable[[str, str], str]] = {
    "end": lambda host, p: f"{host.rstrip()}\n\n{p}\n",
    "start": lambda host, p: f"{p}\n\n{host}",
    "between": lambda host, p: host.replace("\n\n", f"\n\n{p}\n\n", 1) if "\n\n" in host else f"{host}\n\n{p}\n",
}


def titled(rows: list[dict[str, str]], hosts: list[str]) -> tuple[int, int, list[str], int, list[str]]:
    """The titled payloads planted (``BLOCK_PLACEMENTS`` x ``hosts``), how many removed,
    the misses; the near misses, the ones flagged (text or host touched)."""
    safety = Safety(model=builtin() if MODEL else None)
    planted = caught = 0
    misses, flagged = [], []
    for rec in rows:
        for place, plant in BLOCK_PLACEMENTS.items():
            for h, host in enumerate(hosts):
                text = plant(host, rec["text"])
                out = safety.run([Chunk(id=f"h{h}", text=text, index=0)], _ctx())
                kept = out[0].text if out else ""
                if rec["kind"] == "benign":
                    if kept != text and rec["text"] not in flagged:
                        flagged.append(rec["text"])
                    continue
                planted += 1
                if survives(rec["text"], kept):
                    miss = f"{rec['shape']} [{place}] {rec['text'][:90]!r}"
                    if miss not in misses:
                        misses.append(miss)
                else:
                    caught += 1
    return planted, caught, misses, sum(1 for r in rows if r["kind"] == "benign"), flagged


def report_titled(hosts: list[str]) -> list[str]:
    """Print the titled payloads' line (and its misses, and the near misses flagged);
    return the misses."""
    rows = [{k: str(v) for k, v in r.items()} for r in read_jsonl(TITLED)]
    planted, caught, misses, n_benign, flags = titled(rows, hosts)
    payloads = [r for r in rows if r["kind"] == "payload"]
    print(
        f"\ntitled: {len(payloads)} payloads of {len({r['shape'] for r in payloads})} shapes x "
        f"{len(BLOCK_PLACEMENTS)} placements x {len(hosts)} real hosts: {caught} of {planted} removed "
        f"({caught / max(planted, 1):.1%}); near misses: {len(flags)} of {n_benign} flagged"
    )
    for m in misses:
        print("  missed:", m)
    for t in flags:
        print(f"  flagged: {t[:100]!r}")
    return misses


#: a sentence's end in prose: a full stop after a letter or digit, then a space (not the
#: ``..`` of a reST directive, where a payload would become a comment)
_SENTENCE_END = re.compile(r"(?<=[^\W_][.!?]) (?=\S)")


def _middle(host: str, payload: str) -> str:
    """``payload`` after the first sentence end in prose past a third of ``host`` (not on an
    indented or console line), else after its last; with no such end, as a block after the
    host's first."""
    third = len(host) // 3
    ends = [m.start() for m in _SENTENCE_END.finditer(host)]
    ends = [i for i in ends if not host[host.rfind("\n", 0, i) + 1 : i].startswith((" ", "\t", ">>>", "$ "))]
    if not ends:  # no prose sentence: its own block after the host's first
        first, sep, rest = host.partition("\n\n")
        return f"{first}\n\n{payload}\n\n{rest}" if sep else f"{host.rstrip()}\n\n{payload}\n"
    cut = next((i for i in ends if i >= third), ends[-1])
    return f"{host[:cut]} {payload} {host[cut:].lstrip()}"


_NORM = re.compile(r"[\s#>/*`\"'“”«»]+")


def _norm(text: str) -> str:
    return _NORM.sub(" ", text).strip().lower()


def survives(payload: str, text: str) -> bool:
    """Whether any five-word run of the payload (visible words only) is still in ``text``."""
    words = _norm(payload).split()
    out = f" {_norm(text)} "
    if len(words) <= 5:
        return f" {' '.join(words)} " in out
    return any(f" {' '.join(words[i : i + 5])} " in out for i in range(len(words) - 4))


def _ctx() -> Context:
    return Context(question="q", budget=1000, report=Report(question="q", budget=1000), count_tokens=get_counter())


MODEL = True  # the learned second net too (--rules-only: the rules alone)


def detect(text: str) -> tuple[tuple[int, int, str], ...]:
    rules = find_injections(text)
    return combine(text, rules, builtin().spans(text, rules)) if MODEL else rules


def detection(payloads: list[dict[str, str]], hosts: list[str]) -> tuple[dict[str, Counter[str]], list[str]]:
    """Per class: planted / caught counts (and host text kept, in characters); the misses."""
    stats: dict[str, Counter[str]] = {}
    misses = []
    safety = Safety(model=builtin() if MODEL else None)
    for rec in payloads:
        s = stats.setdefault(rec["class"], Counter())
        for place, plant in PLACEMENTS.items():
            for h, host in enumerate(hosts):
                text = plant(host, rec["text"])
                out = safety.run([Chunk(id=f"h{h}", text=text, index=0)], _ctx())
                kept = out[0].text if out else ""
                s["planted"] += 1
                if survives(rec["text"], kept):
                    miss = f"{rec['class']}/{rec['style']} [{place}] {rec['text'][:90]!r}"
                    if miss not in misses:
                        misses.append(miss)
                else:
                    s["caught"] += 1
                s["host_chars"] += len(host)
                s["host_kept"] += sum(len(p) for p in host.split("\n\n") if p.strip() and p.strip() in kept)
    return stats, misses


#: the labels a corpus row carries that the context shows (scanned like text)
LABEL_KEYS = ("title", "section", "version", "source", "url")


def false_positives(path: Path | None, verbose: bool) -> tuple[int, Counter[str], int, float]:
    """Chunks with anything flagged in their text or one of their labels (by class;
    ``label`` counts the chunks flagged through a label)."""
    n, flagged, by_class = 0, 0, Counter[str]()
    t = time.perf_counter()
    for row in read_jsonl(path) if path is not None else readmes():
        text = str(row["text"])
        n += 1
        spans = detect(text)
        bad = [k for k in LABEL_KEYS if isinstance(row.get(k), str) and row[k] and detect(str(row[k]))]
        if bad:
            by_class["label"] += 1
            if verbose:
                print(f"    {'label':15} {row.get('id', '?')}: {[row[k] for k in bad]!r}")
            if not spans:
                flagged += 1
        if spans:
            flagged += 1
            by_class.update({cls for _, _, cls in spans})
            if verbose:
                for s, e, cls in spans:
                    print(f"    {cls:15} {row.get('id', '?')}: {text[s:e].strip()[:160]!r}")
    return n, by_class, flagged, time.perf_counter() - t


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", action="append", type=Path, help="corpus.jsonl[.xz|.gz] for false positives (repeat)")
    ap.add_argument("--redteam", type=Path, default=REDTEAM)
    ap.add_argument("--benign", type=Path, default=BENIGN)
    ap.add_argument("--hosts", type=int, default=3, help="real chunks each payload is planted in")
    ap.add_argument("--installed", action="store_true", help="also: the READMEs of the installed distributions")
    ap.add_argument("-v", "--verbose", action="store_true", help="list every flagged sentence of the corpora")
    ap.add_argument("--rules-only", action="store_true", help="the injection rules alone (no learned model)")
    args = ap.parse_args(argv)
    global MODEL  # noqa: PLW0603 (a script's switch)
    MODEL = not args.rules_only

    payloads = [{k: str(v) for k, v in r.items()} for r in read_jsonl(args.redteam)]
    hosts = [str(r["text"]) for r in read_jsonl(HOSTS) if 400 <= len(str(r["text"])) <= 1500][::37][: args.hosts]
    stats, misses = detection(payloads, hosts)
    print(f"red team: {len(payloads)} payloads x {len(PLACEMENTS)} placements x {len(hosts)} real hosts")
    print("| class | styles | planted | caught | detection | host text kept |")
    print("|---|---:|---:|---:|---:|---:|")
    total = Counter[str]()
    for cls in CLASSES:
        s = stats.get(cls, Counter())
        total.update(s)
        styles = sum(1 for p in payloads if p["class"] == cls)
        print(
            f"| {cls} | {styles} | {s['planted']} | {s['caught']} | {s['caught'] / max(s['planted'], 1):.1%} | "
            f"{s['host_kept'] / max(s['host_chars'], 1):.1%} |"
        )
    print(
        f"| all | {len(payloads)} | {total['planted']} | {total['caught']} | "
        f"{total['caught'] / max(total['planted'], 1):.1%} | {total['host_kept'] / max(total['host_chars'], 1):.1%} |"
    )
    for m in misses:
        print("  missed:", m)

    misses += report_titled(hosts)

    benign = [{k: str(v) for k, v in r.items()} for r in read_jsonl(args.benign)]
    print(f"\nnear misses: {len(benign)} sentences that describe what a class does")
    print("| near class | sentences | flagged |")
    print("|---|---:|---:|")
    wrong = [b for b in benign if detect(b["text"])]
    for cls in CLASSES:
        n = sum(1 for b in benign if b["near"] == cls)
        print(f"| {cls} | {n} | {sum(1 for b in wrong if b['near'] == cls)} |")
    for b in wrong:
        print(f"  flagged: {b['near']}: {b['text'][:100]!r}")

    corpora: list[Path | None] = list(args.corpus or DEV)
    if args.installed:
        corpora.append(None)
    print("\nfalse positives (chunks with anything flagged), by class")
    print("| corpus | chunks | flagged | rate | " + " | ".join((*CLASSES, "learned", "label")) + " | seconds |")
    print("|---|---:|---:|---:|" + "---:|" * (len(CLASSES) + 2) + "---:|")
    for path in corpora:
        if args.verbose:
            print(f"  {path}:")
        n, by_class, flagged, secs = false_positives(path, args.verbose)
        name = (
            "installed READMEs" if path is None else path.parent.name if path.name.startswith("corpus") else path.name
        )
        cells = " | ".join(str(by_class[c]) for c in (*CLASSES, "learned", "label"))
        print(f"| {name} | {n} | {flagged} | {flagged / max(n, 1):.2%} | {cells} | {secs:.1f} |")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
