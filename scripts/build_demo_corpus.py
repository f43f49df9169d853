"""Build the demo corpus bundled in ctxassembly/data from the benchmark's Django corpus.

The demo needs a small, real, versioned corpus: a handful of Django documents in all
three versions (4.2, 5.1, 5.2), with the release notes that make versions conflict.
Run from the repository root, next to the shared benchmark folder:

    python scripts/build_demo_corpus.py ../shared/bench/data/django/corpus.jsonl
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

DOCS = (
    "ref/databases",
    "topics/auth/passwords",
    "ref/contrib/sitemaps",
    "ref/forms/renderers",
    "faq/install",
    "releases/4.2",
    "releases/5.1",
    "releases/5.2",
)
FIELDS = ("id", "version", "release", "doc_id", "title", "section", "start", "end", "text")


def main(source: str, target: str = "ctxassembly/data/django_demo.jsonl") -> None:
    rows = []
    with open(source, encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            if d["doc_id"] in DOCS:
                rows.append({k: d[k] for k in FIELDS})
    Path(target).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"{len(rows)} chunks from {len(DOCS)} documents -> {target}")


if __name__ == "__main__":
    main(*sys.argv[1:])
