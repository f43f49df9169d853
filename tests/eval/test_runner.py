"""The A/B runner on a hand-built question set whose every number is known in advance
(RETRY and ROTATE in conftest.py), read by ``FirstDocReaderDouble`` (a test double of a
model reader, see conftest.py). The real SmolLM2 reader runs through the runner in
test_smollm2.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from ctxassembly.errors import ConfigError
from ctxassembly.eval.results import ABResult
from ctxassembly.eval.runner import dedup_only, load_pipeline, raw_topk, run_ab
from ctxassembly.render import Renderer
from ctxassembly.tokens import get_counter
from tests.eval.conftest import RETRY, ROTATE, THREE, THREE_COPY, FirstDocReaderDouble

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def result() -> ABResult:
    return run_ab([RETRY, ROTATE], budgets=[1000], reader=FirstDocReaderDouble(), reader_name="first-doc")


def test_raw_rows_by_hand(result: ABResult) -> None:
    retry = next(r for r in result.rows if r.pipeline == "raw" and r.qid == "retry")
    m = retry.metrics
    assert m.n_chunks == 4
    assert m.answer_kept is True
    assert m.wrong_exposed == ("three attempts",)
    assert m.duplicate_share == pytest.approx(1 / 4)  # a-copy repeats a
    assert m.off_version_share == pytest.approx(2 / 4)  # a and a-copy are 3.1
    assert m.context_recall == 1.0
    assert m.context_precision == pytest.approx(1 / 4)
    assert m.answer_position == 2
    assert m.answer_zone == "inner"  # 2/3 is not strictly inside the middle third
    assert retry.answer == THREE["text"]
    assert retry.correct is False  # the reader read the first document: the 3.1 value
    assert retry.latency_ms is not None
    assert retry.error is None


def test_dedup_rows_by_hand(result: ABResult) -> None:
    m = next(r for r in result.rows if r.pipeline == "dedup" and r.qid == "retry").metrics
    assert m.n_chunks == 3
    assert m.duplicate_share == 0.0
    assert m.off_version_share == pytest.approx(1 / 3)
    assert m.answer_position == 1
    assert m.answer_zone == "middle"


def test_assembler_rows_hold_properties(result: ABResult) -> None:
    # the stages are being tuned elsewhere: assert what any correct assembly does here
    m = next(r for r in result.rows if r.pipeline == "assembler" and r.qid == "retry").metrics
    assert m.answer_kept is True
    assert m.wrong_exposed == ()  # the 3.1 chunks are off-version for an explicit 3.2
    assert m.off_version_share == 0.0
    assert m.tokens <= 1000


def test_summary_by_hand(result: ABResult) -> None:
    assert result.pipelines == ("raw", "dedup", "assembler")
    assert len(result.rows) == 3 * 2
    raw = result.cell("raw", 1000)
    assert raw["n"] == 2
    assert raw["answer_kept"] == 1.0
    assert raw["wrong_exposure"] == 1.0  # over the one question that has wrong strings
    assert raw["accuracy"] == 0.5  # retry: wrong first document; rotate: the answer is first
    assert raw["duplicate_share"] == pytest.approx((1 / 4 + 0) / 2)
    assert raw["errors"] == 0
    assert raw["latency_ms_median"] is not None
    assert result.cell("assembler", 1000)["wrong_exposure"] == 0.0
    with pytest.raises(KeyError, match="no summary for pipeline 'raw' at budget 5"):
        result.cell("raw", 5)


def test_every_pipeline_gets_the_same_prompt_layout() -> None:
    reader = FirstDocReaderDouble()
    run_ab([ROTATE], pipelines=["raw", "dedup"], reader=reader)
    assert len(reader.prompts) == 2
    assert reader.prompts[0] == reader.prompts[1]  # no duplicates in ROTATE: same context, same prompt
    assert reader.prompts[0].endswith("Question: How often do logs rotate?")


def test_pipelines_are_called_fairly() -> None:
    seen: list[dict[str, Any]] = []

    def spy(question: str, candidates: list[dict[str, Any]], budget: int, target_version: str | None) -> list[Any]:
        seen.append({"question": question, "budget": budget, "version": target_version, "n": len(candidates)})
        candidates[0]["text"] = "mutated"  # must not reach the question's own candidates
        return candidates[:1]

    result = run_ab([RETRY, ROTATE], budgets=[700], pipelines={"spy": spy})
    assert [s["version"] for s in seen] == ["3.2", None]  # only the question that names its version
    assert [s["budget"] for s in seen] == [700, 700]
    assert RETRY.candidates[0]["text"] == THREE["text"]
    assert result.rows[0].metrics.n_chunks == 1
    assert result.reader is None
    assert result.rows[0].answer is None
    assert result.rows[0].correct is None


def test_a_string_context_gets_the_text_metrics_only() -> None:
    def joined(question: str, candidates: list[dict[str, Any]], budget: int, target_version: str | None) -> str:
        return "\n\n".join(c["text"] for c in candidates)

    row = run_ab([RETRY], pipelines={"joined": joined}).rows[0]
    assert row.metrics.answer_kept is True
    assert row.metrics.wrong_exposed == ("three attempts",)
    assert row.metrics.n_chunks is None
    assert row.metrics.duplicate_share is None


def test_a_crash_is_a_recorded_failure_of_that_question() -> None:
    def broken(question: str, candidates: list[dict[str, Any]], budget: int, target_version: str | None) -> list[Any]:
        raise RuntimeError("index offline")

    result = run_ab([RETRY], pipelines={"broken": broken})
    assert result.rows[0].error == "RuntimeError: index offline"
    assert result.rows[0].metrics.answer_kept is False
    assert result.cell("broken", 1000)["errors"] == 1


def test_a_bad_return_is_a_recorded_failure() -> None:
    def bad(question: str, candidates: list[dict[str, Any]], budget: int, target_version: str | None) -> int:
        return 3

    row = run_ab([RETRY], pipelines={"bad": bad}).rows[0]
    assert row.error is not None
    assert "returned int; expected a list of chunks" in row.error


def test_raw_truncates_at_the_first_chunk_that_does_not_fit() -> None:
    count = get_counter(None)
    render = Renderer("xml").render
    from ctxassembly.chunk import Chunk

    two = count(render([Chunk.from_dict(THREE, 0), Chunk.from_dict(THREE_COPY, 1)]))
    cands = [dict(c) for c in RETRY.candidates]
    assert [c.id for c in raw_topk("q", cands, two, None)] == ["a", "a-copy"]
    assert [c.id for c in dedup_only("q", cands, two, None)] == ["a", "b"]
    assert raw_topk("q", cands, 1, None) == []


def test_unknown_pipeline_names_it() -> None:
    with pytest.raises(ConfigError, match=r"unknown pipeline 'nosuch': expected one of raw, dedup, assembler"):
        load_pipeline("nosuch")
    with pytest.raises(ConfigError, match=r"pipeline 'textwrap:nope': module 'textwrap' has no attribute 'nope'"):
        load_pipeline("textwrap:nope")
    with pytest.raises(ConfigError, match=r"pipeline 'textwrap:__doc__': str is not callable"):
        load_pipeline("textwrap:__doc__")


def test_pipeline_from_a_file_with_a_label(tmp_path: Any) -> None:
    path = tmp_path / "mine.py"
    path.write_text("def first(question, candidates, budget, target_version):\n    return candidates[:1]\n")
    name, fn = load_pipeline(f"{path}:first=top1")
    assert name == "top1"
    assert fn("q", [{"id": "x", "text": "t"}], 10, None) == [{"id": "x", "text": "t"}]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"budgets": [0]}, r"budgets must be positive ints \(tokens\), got \[0\]"),
        ({"budgets": []}, r"budgets must be positive ints \(tokens\), got \[\]"),
        ({"engine": "spark"}, "engine must be one of 'local', 'ray', got 'spark'"),
        ({"pipelines": "raw"}, "pipelines must be a list of names or a mapping, got the string 'raw'"),
        ({"pipelines": ["raw", "raw"]}, "pipeline 'raw' given twice"),
        ({"pipelines": {"x": 3}}, "pipeline 'x': expected a callable or a spec string, got int"),
        ({"pipelines": []}, "no pipelines to run"),
    ],
)
def test_bad_options(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        run_ab([RETRY], **kwargs)


def test_no_questions() -> None:
    with pytest.raises(ConfigError, match="questions is empty"):
        run_ab([])
