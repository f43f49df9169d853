"""``benchmarks/adapters.py``'s option pipelines by name (``opt_<option>_<value>``) and
``benchmarks/loco_option.py``, which chooses one option's value leave one corpus out with
the bars beside."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest

from ctxassembly import ConfigError

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _bench(name: str) -> ModuleType:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return importlib.import_module(name)


def _row(pipeline: str, corpus: str, meta: str, answer: tuple[int, int], cut: tuple[int, int]) -> str:
    first, second = f"{answer[0]}% / 0% / {cut[0]}%", f"{answer[1]}% / 0% / {cut[1]}%"
    return f"| {pipeline} | {corpus} | {meta} | {first} | {second} (dup 1%) |"


@pytest.mark.unit
def test_an_option_pipeline_by_name_is_the_default_call_with_that_option() -> None:
    adapters = _bench("adapters")
    paragraph = "Paragraph {} says what the retry limit does, in more words than needed."
    paragraphs = "\n\n".join(paragraph.format(i) for i in range(17))
    rec = {
        "question": "What does the retry limit do?",
        "target_version": "2.0",
        "version_explicit": False,
        "candidates": [{"id": "a", "text": paragraphs}, {"id": "b", "text": "The retry limit is 5."}],
    }
    assert adapters.opt_top_share_0p3(rec, 1000) == adapters.model_free(rec, 1000)  # the default's value
    # the option reaches the stages: never cut, the first chunk does not fit 200 tokens whole
    assert adapters.opt_max_share_none(rec, 200) == adapters.never_cut(rec, 200) != adapters.model_free(rec, 200)
    assert adapters.opt_top_share_none.__doc__ == "The default pipeline with top_share=None (hybrid)."
    assert [adapters.option_value(v) for v in ("0p25", "250", "none", "true")] == [0.25, 250, None, True]
    assert adapters.dense_opt_top_share_none.__doc__.endswith("(dense-only).")
    with pytest.raises(ConfigError, match="colour"):  # a name the options do not know fails as a call would
        adapters.opt_colour_1(rec, 1000)


@pytest.mark.unit
def test_each_fold_chooses_a_value_on_the_other_corpora_and_the_bars_are_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # corpus x: 0.5 gains 10 points a cell at 1,000 tokens; corpus y: 0.5 loses 2 there and cuts
    rows = []
    cells = {
        ("model_free", "x"): ((80, 80), (0, 0)),
        ("model_free", "y"): ((80, 94), (0, 0)),
        ("opt_top_share_0p5", "x"): ((80, 90), (0, 0)),
        ("opt_top_share_0p5", "y"): ((80, 92), (0, 5)),
        ("never_cut", "x"): ((70, 85), (0, 0)),
        ("never_cut", "y"): ((70, 90), (0, 0)),
    }
    for (pipe, corpus), (answer, cut) in cells.items():
        for meta in ("full", "source", "none"):
            rows.append(_row(pipe, corpus, meta, answer, cut))
    path = tmp_path / "m.md"
    path.write_text("\n".join(rows) + "\n")
    sys.argv = ["loco_option.py", str(path), "--option", "top_share"]
    _bench("loco_option").main()
    out = capsys.readouterr().out
    # per setting: points over full + source at both budgets; failing cells: x @1k misses 90 and
    # is under never-cut (85) with the default, y @1k misses the 2% cut with 0.5
    assert "| 0.3 (default) | 668 / 0 | 334 / 0 | 0 | 2 | 2 |" in out
    assert "| 0.5 | 684 / 10 | 342 / 5 | 1 | 2 | 0 |" in out
    assert "| x | 340 / 0 | 350 / 0 |" not in out  # the per-corpus table is answers / cut per setting
    assert "| x | 320 / 0 | 340 / 0 |" in out
    # holding x out, y alone keeps the default; holding y out, x chooses 0.5
    assert "| x | 0.3 (default) | 320 / 0 | 320 / 0 |" in out
    assert "| y | 0.5 | 344 / 10 | 348 / 0 |" in out
    assert "held out: 664 / 10 (the default: 668 / 0); folds: 0.3 (default) 1, 0.5 1" in out
