"""``benchmarks/adapters.py``'s weight pipelines by name and ``benchmarks/loco_weights.py``,
which chooses the relevance weights leave one corpus out over two retrievers."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest

from ctxassembly.stages.relevance import DEFAULT_WEIGHTS

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _bench(name: str) -> ModuleType:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return importlib.import_module(name)


def _row(pipeline: str, corpus: str, meta: str, answer: int, cut1k: int) -> str:
    """A matrix row: ``answer`` at both budgets, no cut at 500, ``cut1k`` at 1,000."""
    return f"| {pipeline} | {corpus} | {meta} | {answer}% / 0% / 0% | {answer}% / 0% / {cut1k}% (dup 1%) |"


@pytest.mark.unit
def test_a_weight_pipeline_by_name_is_the_default_call_with_those_weights() -> None:
    adapters = _bench("adapters")
    default = "weights_o{order:g}l{lexical:g}d{define:g}ph{phrase:g}".format(**DEFAULT_WEIGHTS)
    rec = {
        "question": "How do I set the cache timeout?",
        "target_version": "2.0",
        "version_explicit": False,
        "candidates": [
            {"id": "a", "text": "The cache timeout is set with CACHE_TIMEOUT, in seconds."},
            {"id": "b", "text": "Logging is configured in the LOGGING setting."},
            {"id": "c", "text": "Set the timeout of the cache with the TIMEOUT key of CACHES."},
        ],
    }
    assert getattr(adapters, default)(rec, 200) == adapters.model_free(rec, 200)
    assert adapters.weights_o1l0d0(rec, 200)[0]["id"] == "a"  # the incoming order alone
    # a name without "ph": the weights before the phrase signal
    assert "'phrase': 0.0" in adapters.weights_o1l2d2.__doc__
    assert adapters.weights_o1l2p5d1.__doc__.startswith("The default pipeline with the relevance weights")
    with pytest.raises(AttributeError):
        adapters.weights_oxl1d1  # noqa: B018 - the name is the test


@pytest.mark.unit
def test_each_fold_chooses_on_the_other_corpora_over_both_retrievers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # two corpora; o2l3d1 wins on "x" with both retrievers, loses on "y" by less
    rows = []
    for prefix, bonus in (("", 0), ("dense_", -5)):
        for corpus, (base, other) in {"x": (70, 80), "y": (90, 88)}.items():
            for meta in ("full", "source", "none"):
                rows.append(_row(f"{prefix}weights_o1l2d2", corpus, meta, base + bonus, 0))
                rows.append(_row(f"{prefix}weights_o2l3d1", corpus, meta, other + bonus, 2))
    path = tmp_path / "m.md"
    path.write_text("\n".join(rows) + "\n")
    loco = _bench("loco_weights")
    runs = loco.read([path])
    assert set(runs["hybrid"]) == set(runs["dense"]) == {"o1l2d2", "o2l3d1"}
    assert runs["dense"]["o2l3d1"]["x", "none"] == [75, 0, 0, 75, 0, 2]
    sys.argv = ["loco_weights.py", str(path), "--default", "o1l2d2"]  # the two settings of this matrix
    loco.main()
    out = capsys.readouterr().out
    # holding x out, y alone chooses the default (it loses 2 points a cell with o2l3d1); holding y out, x chooses o2l3d1
    assert "| x | o1l2d2 | 280 | 280 | 260 | 260 |" in out
    assert "| y | o2l3d1 | 352 | 360 | 332 | 340 |" in out
    assert "held-out answers: hybrid 632 (default 640), dense 592 (default 600)" in out
