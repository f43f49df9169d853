"""ctxassembly.batch: the in-process loop and the Ray Data engine give the same results."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from ctxassembly import assemble
from ctxassembly.assembler import Assembled
from ctxassembly.batch import ENGINES, assemble_many, parse_engine
from ctxassembly.errors import ConfigError, MissingExtraError
from ctxassembly.eval.metrics import evaluate_many
from ctxassembly.eval.questions import Question

# Ray Data's own modules emit deprecation notices on import under newer pandas/pyarrow
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.*")


def fingerprint(a: Assembled) -> tuple[Any, ...]:
    """Everything an assembly returns except its timings (wall time differs run to run)."""
    report = a.report.to_dict()
    report.pop("timings_ms")
    return [c.to_dict() for c in a.chunks], a.text, report, a.report.tokens_before, a.question


def items(questions: list[Question]) -> list[dict[str, Any]]:
    return [{"question": q.question, "candidates": q.candidates, "target_version": q.asked_version} for q in questions]


# ------------------------------------------------------------------ unit: no Ray needed
@pytest.mark.unit
@pytest.mark.parametrize("engine", ["spark", "", None, "Ray"])
def test_unknown_engine_lists_the_engines(engine: object) -> None:
    with pytest.raises(ConfigError, match=r"engine must be one of 'local', 'ray', got"):
        parse_engine(engine)


@pytest.mark.unit
def test_engines_are_local_and_ray() -> None:
    assert ENGINES == ("local", "ray")


@pytest.mark.unit
@pytest.mark.parametrize(
    ("kw", "message"), [({"budget": 0}, "budget"), ({"budget": 10, "batch_size": 0}, "batch_size")]
)
def test_bad_budget_or_batch_size(kw: dict[str, int], message: str) -> None:
    with pytest.raises(ConfigError, match=rf"{message} must be a positive int, got 0"):
        assemble_many([], **kw)  # type: ignore[arg-type]


@pytest.mark.unit
@pytest.mark.parametrize(
    ("item", "message"),
    [
        ("what?", r"item 0: expected a mapping or a Question, got str"),
        ({"candidates": []}, r"item 0: field 'question': expected a string, got None"),
        ({"question": "q", "candidates": "text"}, r"item 0: field 'candidates': expected a list of chunks, got str"),
        ({"question": "q", "candidates": [], "target_version": 5.1}, r"field 'target_version': expected a string"),
    ],
)
def test_bad_item_is_named(item: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        assemble_many([item], budget=100)


@pytest.mark.unit
def test_version_reaches_the_pipeline_only_when_the_question_names_it() -> None:
    """A fair call: a labelled record whose version is not explicit passes no version."""
    cands = [
        {"id": "old", "text": "The limit is 100.", "version": "4.2"},
        {"id": "new", "text": "The limit is 200.", "version": "5.2"},
    ]
    told = {"question": "limit?", "candidates": cands, "target_version": "4.2", "version_explicit": True}
    untold = {**told, "version_explicit": False}
    plain = {"question": "limit?", "candidates": cands, "target_version": "4.2"}  # a user's own item
    got = assemble_many([told, untold, plain], budget=200)
    assert [c.id for c in got[0].chunks] == ["old"]
    assert got[0].report.target_version == got[2].report.target_version == "4.2"
    assert [c.id for c in got[1].chunks] == ["new"]  # not told: the pipeline picks the current version
    q = Question(question="limit?", candidates=cands, target_version="4.2", version_explicit=False)
    assert [c.id for c in assemble_many([q], budget=200)[0].chunks] == ["new"]


@pytest.mark.unit
def test_candidates_that_are_not_a_list_fail_before_ray_starts() -> None:
    bad = [{"question": "q", "candidates": {"id": "a", "text": "fine"}}]
    with pytest.raises(ConfigError, match=r"item 0: field 'candidates': expected a list of chunks, got dict"):
        assemble_many(bad, budget=100, engine="ray")


@pytest.mark.unit
def test_a_bad_chunk_is_a_decision_in_a_batch_too() -> None:
    bad = [{"question": "q", "candidates": [{"id": "a", "text": "fine"}, {"id": "b"}]}]
    (result,) = assemble_many(bad, budget=100, engine="local")
    assert [c.id for c in result.chunks] == ["a"]
    assert result.report.fate(1).reason == "invalid"
    assert "chunk 'b': field 'text': missing" in result.report.fate(1).detail["error"]


@pytest.mark.unit
def test_ray_missing_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    # a None entry in sys.modules makes `import ray` raise ImportError: Ray "not installed"
    monkeypatch.setitem(sys.modules, "ray", None)
    monkeypatch.setitem(sys.modules, "ray.data", None)
    with pytest.raises(MissingExtraError, match=r"pip install 'ctxassembly\[ray\]'"):
        assemble_many([{"question": "q", "candidates": [{"id": "a", "text": "t"}]}], budget=100, engine="ray")


@pytest.mark.unit
def test_local_engine_equals_one_call_at_a_time(dev_questions: list[Question]) -> None:
    qs = dev_questions[:8]
    got = assemble_many(qs, budget=800)
    want = [assemble(q.question, q.candidates, budget=800, target_version=q.asked_version) for q in qs]
    assert [fingerprint(a) for a in got] == [fingerprint(a) for a in want]
    assert assemble_many([], budget=800, engine="ray") == []  # nothing to ship: Ray is not started


@pytest.mark.unit
def test_options_reach_every_item(dev_questions: list[Question]) -> None:
    got = assemble_many(dev_questions[:3], budget=800, order="relevance", format="plain")
    for q, a in zip(dev_questions[:3], got, strict=True):
        want = assemble(
            q.question, q.candidates, budget=800, target_version=q.asked_version, order="relevance", format="plain"
        )
        assert fingerprint(a) == fingerprint(want)
        assert not a.text.startswith("<")


# ------------------------------------------------------------------ integration: a local Ray, 2 CPUs
@pytest.mark.integration
@pytest.mark.slow
def test_ray_equals_in_process_on_the_40_dev_questions(local_ray: Any, dev_questions: list[Question]) -> None:
    assert len(dev_questions) == 40
    local = assemble_many(items(dev_questions), budget=1000)
    remote = assemble_many(items(dev_questions), budget=1000, engine="ray", batch_size=8)
    assert [fingerprint(a) for a in remote] == [fingerprint(a) for a in local]
    assert sum(len(a.chunks) for a in remote) > 40  # real contexts, not empty ones


@pytest.mark.integration
@pytest.mark.slow
def test_evaluation_runner_on_ray_equals_in_process(local_ray: Any, dev_questions: list[Question]) -> None:
    qs = dev_questions[:12]
    local = evaluate_many(qs, budget=1000)
    remote = evaluate_many(qs, budget=1000, engine="ray", batch_size=4, concurrency=2)
    assert remote.to_dict() == local.to_dict()
    assert local.answer_kept is not None
    assert local.answer_kept > 0.5


# ------------------------------------------------------------------ the CLI: ctxassembly eval --engine
@pytest.mark.unit
def test_cli_rejects_an_unknown_engine() -> None:
    from typer.testing import CliRunner

    from ctxassembly.cli import app

    result = CliRunner().invoke(app, ["eval", "--engine", "spark", "--limit", "1"])
    assert result.exit_code == 2
    assert "engine must be one of 'local', 'ray', got 'spark'" in result.output


@pytest.mark.integration
@pytest.mark.slow
def test_cli_engine_ray_prints_the_same_metrics(local_ray: Any, dev_data: Any, tmp_path: Any) -> None:
    import json

    from typer.testing import CliRunner

    from ctxassembly.cli import app

    path = str(dev_data.path("django"))
    args = ["eval", path, "--budget", "1000", "--limit", "6", "--pipeline", "assembler"]
    local = CliRunner().invoke(app, [*args, "--engine", "local", "--json", str(tmp_path / "local.json")])
    remote = CliRunner().invoke(app, [*args, "--engine", "ray", "--json", str(tmp_path / "ray.json")])
    assert local.exit_code == 0, local.output
    assert remote.exit_code == 0, remote.output
    assert "answer kept" in local.output

    def timeless(name: str) -> Any:
        data = json.loads((tmp_path / name).read_text())
        for row in [*data["summary"], *data["rows"]]:  # wall times differ; Ray has no per-question latency
            row.pop("latency_ms", None)
            row.pop("latency_ms_median", None)
        return data

    assert timeless("ray.json") == timeless("local.json")
