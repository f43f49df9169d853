"""The dev questions with the metadata a web loader gives: a versioned URL and a title.

The URL is a generic one built here (no site of the corpus); the question's version goes
in only when the question names it (the fair call).
"""

import re

import pytest

from ctxassembly import assemble

pytestmark = pytest.mark.integration


def _ws(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def _as_web_loader(candidate: dict) -> dict:
    url = f"https://docs.example.org/en/{candidate['version']}/{candidate['doc_id']}/"
    return {"id": candidate["id"], "text": candidate["text"], "title": candidate["title"], "source": url}


# Django 40 -> 39 with the agreed share (a chunk kept more whole where the retriever and BM25
# agree on the head: one question's answer then sits in a chunk the budget no longer holds;
# the matrix's `source` mode loses the same question: benchmarks/README.md)
@pytest.mark.parametrize(("corpus", "answered", "exposed", "off_version"), [("django", 39, 0, 1), ("pytest", 36, 1, 0)])
def test_versions_from_the_url_alone(dev_data, corpus, answered, exposed, off_version):
    records = dev_data.records(corpus)
    hits = wrongs = off = 0
    for rec in records:
        target = rec["target_version"] if rec["version_explicit"] else None
        res = assemble(
            rec["question"], [_as_web_loader(c) for c in rec["candidates"]], budget=1000, target_version=target
        )
        text = _ws(res.text)
        hits += all(_ws(a) in text for a in rec["answer"])
        wrongs += any(_ws(w) in text for w in rec["wrong"])
        # another version's chunk is kept only as the latest of a page retrieved in no newer
        # version (latest per document): one Django question has such a page
        # a changelog section is labelled with its own release (version_key "heading")
        headed = [c for c in res.chunks if c.meta.get("version_key") == "heading"]
        assert all(c.meta["version_from"] == "text" and c.meta["status"] == "current" for c in headed)
        other = [c for c in res.chunks if c.version != rec["target_version"] and c not in headed]
        off += bool(other)
        assert all(c.meta["status"] == "current" for c in other)
        assert all(c.meta["version_from"] == "path" for c in res.chunks if c not in headed)
    assert hits >= answered
    assert wrongs <= exposed
    assert off <= off_version
