"""The vendored dev corpora are whole: every folder the tests and benchmarks enumerate, and every
other corpus folder vendored in ``benchmarks/data/`` (one built to look at unseen docs, that
no default is chosen on), has its questions, its chunks, its README and its source, and every
question's gold ids are chunks of its corpus in the question's target version."""

from __future__ import annotations

import json

import pytest

from tests.conftest import DEV_CORPORA, VENDORED, DevData

pytestmark = pytest.mark.unit

# the dev corpora, then any other vendored corpus folder (a source.json marks one), then the
# corpora kept held out (``heldout/``: scored at first sight, nothing chosen on them)
CORPORA = (
    DEV_CORPORA
    + tuple(sorted(p.name for p in VENDORED.iterdir() if (p / "source.json").exists() and p.name not in DEV_CORPORA))
    + tuple(sorted(f"heldout/{p.name}" for p in (VENDORED / "heldout").iterdir() if (p / "source.json").exists()))
)


@pytest.mark.parametrize("name", CORPORA)
def test_a_dev_corpus_is_vendored_whole(dev_data: DevData, name: str) -> None:
    records = dev_data.records(name)
    chunks = {c["id"]: c for c in dev_data.corpus(name)}
    source = json.loads(dev_data.path(name, "source.json").read_text(encoding="utf-8"))
    assert dev_data.path(name, "README.md").stat().st_size > 0
    assert len(records) == 40
    assert {c["version"] for c in chunks.values()} == set(source["versions"])
    for rec in records:
        assert rec["target_version"] in source["versions"], rec["qid"]
        assert len(rec["candidates"]) == 40, rec["qid"]
        for gold in rec["gold"]:
            assert chunks[gold]["version"] == rec["target_version"], (rec["qid"], gold)
            assert all(a in chunks[gold]["text"] for a in rec["answer"]), (rec["qid"], gold)


# a dev question may name a version no candidate has (black: "Python 3.9"): the version
# stage warns (AbsentVersionWarning) and answers for the latest, which is not this test's subject
@pytest.mark.filterwarnings("ignore::ctxassembly.AbsentVersionWarning")
@pytest.mark.parametrize("name", CORPORA)
def test_the_never_cut_control_keeps_every_chunk_whole(dev_data: DevData, name: str) -> None:
    """``max_share=None`` is the control the excerpt is measured against (benchmarks/adapters.py
    ``never_cut``): on real candidates no excerpt stage runs and no kept chunk carries an
    omission mark."""
    from ctxassembly import assemble

    for rec in dev_data.records(name)[:8]:
        control = assemble(rec["question"], rec["candidates"], budget=500, max_share=None)
        assert control.chunks, rec["qid"]
        assert "excerpt" not in control.report.to_dict()["stage_counts"], rec["qid"]
        assert not any("[…]" in kept.text for kept in control.chunks), rec["qid"]
