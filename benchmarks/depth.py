"""The depth on long lists: 400 candidates per question, read to the depth or read whole.

The benchmark's records hold the retriever's 40 best; a store asked for 400 hands over
those and 360 more further down. Here the 360 are the corpus chunks the question's BM25
ranks next (every version), scored below the 40th, so the default call
(``depth=16``: about sixteen budgets of text by retriever score, at least 100 chunks,
are read) and ``depth=None`` (every candidate is read) see one list. Each cell counts
the calls whose context holds an answer string / a wrong-version string, over every dev
corpus x metadata mode (the benchmark's ``strip_metadata``) x budget.

    python benchmarks/depth.py [--n 400] [--corpus django ...] [--publish]
"""

from __future__ import annotations

import argparse
import ast
import sys
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's ctxassembly, whatever is installed

from _tables import DATA, bench_folder, load_corpus, load_records, machine, publish, strip_metadata  # noqa: E402

from ctxassembly import assemble  # noqa: E402
from ctxassembly.text.lexical import Lexical  # noqa: E402

MODES = ("full", "source", "none")
BUDGETS = (500, 1000)


def strings(value: Any) -> list[str]:
    """A record's answer / wrong list (stored as a list or as its repr)."""
    parsed = ast.literal_eval(value) if isinstance(value, str) else value
    return list(parsed or [])


def longer(record: dict[str, Any], corpus: list[dict[str, Any]], lexical: Lexical, n: int) -> list[dict[str, Any]]:
    """The record's candidates and the corpus chunks BM25 ranks next, ``n`` in all."""
    given = record["candidates"]
    ids = {c["id"] for c in given}
    low = min((c.get("score") or 0.0) for c in given)
    scores = lexical.scores(record["question"])
    extra: list[dict[str, Any]] = []
    for i in sorted(range(len(corpus)), key=lambda i: -scores[i]):
        if len(given) + len(extra) >= n:
            break
        if corpus[i]["id"] in ids:
            continue
        chunk = {k: v for k, v in corpus[i].items() if k not in ("release", "tokens")}
        chunk["score"] = round(low - 0.0001 * (len(extra) + 1), 6)
        extra.append(chunk)
    return given + extra


def run(corpora: list[str], n: int) -> dict[tuple[str, str, int, str], list[int]]:
    strip = strip_metadata(bench_folder())
    out: dict[tuple[str, str, int, str], list[int]] = {}
    for name in corpora:
        folder = DATA / name
        corpus = load_corpus(folder)
        lexical = Lexical([c["text"] for c in corpus])
        for record in load_records(folder / "questions.jsonl.gz"):
            long = dict(record, candidates=longer(record, corpus, lexical, n))
            answers, wrong = strings(record["answer"]), strings(record.get("wrong"))
            explicit = str(record.get("version_explicit")) == "True"
            target = record["target_version"] if explicit else None
            for mode in MODES:
                rec = strip(long, mode, name)
                for budget in BUDGETS:
                    for label, options in (("depth", {}), ("whole", {"depth": None})):
                        res = assemble(
                            rec["question"], rec["candidates"], budget=budget, target_version=target, **options
                        )
                        cell = out.setdefault((name, mode, budget, label), [0, 0, 0])
                        cell[0] += any(s in res.text for s in answers)
                        cell[1] += any(s in res.text for s in wrong)
                        cell[2] += 1
        print(f"{name}: done", file=sys.stderr, flush=True)
    return out


def table(out: dict[tuple[str, str, int, str], list[int]], n: int) -> str:
    lines = [
        f"{n} candidates per question; {machine()}. Answer / wrong-version string in the context, calls of 40.",
        "",
        "| corpus | meta | budget | read to the depth (default) | every candidate read (`depth=None`) |",
        "|---|---|---:|---:|---:|",
    ]
    for (name, mode, budget, label), (a, w, _) in sorted(out.items()):
        if label == "depth":
            a2, w2, _ = out[(name, mode, budget, "whole")]
            lines.append(f"| {name} | {mode} | {budget} | {a} / {w} | {a2} / {w2} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--corpus", action="append")
    ap.add_argument("--publish", action="store_true")
    a = ap.parse_args()
    warnings.simplefilter("ignore")  # an absent version named by a question warns on every call
    text = table(run(a.corpus or ["django", "pytest", "celery", "black"], a.n), a.n)
    print(text)
    if a.publish:
        publish("depth", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
