import asyncio
import copy
import datetime
import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxassembly import Assembler, Chunk, ChunkError, ConfigError, assemble
from ctxassembly.assembler import to_chunks
from ctxassembly.chunk import LABEL_FIELDS
from ctxassembly.data import SAMPLE_QUESTIONS, retriever
from ctxassembly.report import Report
from ctxassembly.text.lexical import normalize
from ctxassembly.tokens import get_counter

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def records(dev_data):
    return dev_data.records("django")


def test_a_real_benchmark_record(records):
    rec = records[0]
    before = copy.deepcopy(rec["candidates"])
    result = assemble(rec["question"], rec["candidates"], budget=1000)
    assert rec["candidates"] == before  # inputs never mutated
    assert {c.version for c in result.chunks} == {"5.1"}
    assert len({normalize(c.text) for c in result.chunks}) == len(result.chunks)
    assert get_counter()(result.text) <= 1000 == result.report.budget
    assert result.report.tokens_after == get_counter()(result.text)
    assert len(result.report.decisions) == 40
    assert [d.position for d in result.report.kept] == list(range(len(result.chunks)))
    assert "870,000" in result.text
    assert result.report.tokens_before > 5 * result.report.tokens_after
    json.dumps(result.report.to_dict())
    assert "kept @0" in result.report.table()


def test_planted_injections_never_pass(records):
    for rec in (r for r in records if r["planted_injection"]):
        result = assemble(rec["question"], rec["candidates"], budget=2000)
        assert rec["injection_sentence"] not in result.text
        assert rec["injection_sentence"] not in result.prompt()


def test_every_option_changes_something_and_reports_it(records):
    rec = records[5]
    base = assemble(rec["question"], rec["candidates"], budget=1000)
    labelled = assemble(rec["question"], rec["candidates"], budget=3000, version_policy="label")
    assert any(c.meta["status"] != "current" for c in labelled.chunks)
    assert (
        assemble(rec["question"], rec["candidates"], budget=1000, order="relevance").chunks[0].id == base.chunks[0].id
    )
    ev = assemble(rec["question"], rec["candidates"], budget=1000, format="evidence")
    assert ev.text.startswith("[1] ")
    capped = assemble(rec["question"], rec["candidates"], budget=3000, max_per_doc=1)
    assert len({c.doc_id for c in capped.chunks}) == len(capped.chunks)
    reserved = assemble(rec["question"], rec["candidates"], budget=1000, reserve=600)
    assert reserved.report.tokens_after <= 400
    acl = assemble(rec["question"], rec["candidates"], budget=1000, principals=["alice"])
    assert acl.chunks == []
    assert acl.report.reasons == {"not_permitted": 40}


def test_custom_stage_list():
    from ctxassembly import Dedup, Select

    a = Assembler(stages=[Dedup(), Select()])
    out = a.run("q", [{"id": "a", "text": "x"}, {"id": "b", "text": "x"}], budget=50)
    assert [c.id for c in out.chunks] == ["a"]
    with pytest.raises(ConfigError, match="has no name and run"):
        Assembler(stages=[object()])  # type: ignore[list-item]


def test_demo_retriever_feeds_the_assembler():
    q, answer, wrong = SAMPLE_QUESTIONS[0]
    cands = retriever().retrieve(q)
    assert len(cands) == 40
    assert len({c["version"] for c in cands}) == 3
    result = assemble(q, cands, budget=1000)
    assert answer in result.text
    assert not any(w in result.text for w in wrong)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"budget": 0}, ConfigError, "budget must be a positive int"),
        ({"budget": 10.5}, ConfigError, "budget must be a positive int"),
        ({"budget": 100, "target_version": ""}, ConfigError, "target_version"),
        ({"budget": 100, "principals": "alice"}, ConfigError, "collection of strings"),
        ({"budget": 100, "colour": "red"}, ConfigError, "valid options: .*budget|valid options"),
        ({"budget": 100, "order": "random"}, ConfigError, "order must be one of"),
    ],
)
def test_bad_calls(kwargs, error, match):
    with pytest.raises(error, match=match):
        assemble("q", [{"id": "a", "text": "x"}], **kwargs)


@pytest.mark.parametrize(
    ("items", "match"),
    [
        ({"id": "a", "text": "x"}, "got a single dict"),
        ("text", "got a single str"),
        (7, "expected an iterable of chunks, got int"),
    ],
)
def test_candidates_that_are_not_a_sequence_are_a_wrong_call(items, match):
    with pytest.raises(ChunkError, match=match):
        assemble("q", items, budget=100)


@pytest.mark.parametrize(
    ("items", "index", "cid", "field", "match"),
    [
        ([{"id": "a", "text": None}, {"id": "ok", "text": "x"}], 0, "a", "text", "chunk 'a': field 'text'"),
        ([{"id": "ok", "text": "x"}, 3], 1, "#1", "<chunk>", "chunk at index 1"),
    ],
)
def test_one_bad_chunk_is_a_decision_and_the_call_goes_on(items, index, cid, field, match):
    result = assemble("q", items, budget=100)
    bad = result.report.fate(index)
    assert (bad.id, bad.stage, bad.reason, bad.detail["field"]) == (cid, "input", "invalid", field)
    assert re.search(match, bad.detail["error"])
    assert [c.id for c in result.chunks] == ["ok"]


def test_label_values_are_coerced_where_the_intent_is_clear():
    odd = {
        "id": 42,
        "text": "Retry limit is 5.",
        "doc_id": Path("docs/retry.md"),
        "title": 2024,
        "version": ["3.3"],
        "date": datetime.date(2024, 5, 1),
    }
    result = assemble("retry limit?", [odd], budget=200)
    (c,) = result.chunks
    assert (c.id, c.doc_id, c.title, c.version, c.date) == ("42", "docs/retry.md", "2024", "3.3", "2024-05-01")
    coerced = {n["field"]: n["got"] for n in result.report.notes if n["event"] == "coerced"}
    assert coerced == {"id": "int", "doc_id": "PosixPath", "title": "int", "version": "list", "date": "date"}
    assert odd["doc_id"] == Path("docs/retry.md")  # the caller's dict is untouched


class _Label(str):
    """A str subclass: carried as the string it is, and noted as coerced."""


_LABEL_VALUES = st.one_of(
    st.none(),
    st.text(min_size=1, max_size=6),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.builds(Path, st.sampled_from(["docs/a.md", "v2/b.txt"])),
    st.dates(),
    st.lists(st.text(min_size=1, max_size=4), min_size=1, max_size=2),
    st.builds(_Label, st.text(min_size=1, max_size=4)),
    st.just(b"bytes"),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.fixed_dictionaries(
            {"text": st.sampled_from(["Retry limit is 5.", "   "])},
            optional=dict.fromkeys(LABEL_FIELDS, _LABEL_VALUES) | {"tag": st.text(max_size=3)},
        ),
        max_size=4,
    )
)
def test_coerced_notes_are_those_of_a_pass_over_the_label_fields(items):
    """The notes ``to_chunks`` takes from the build are the ones a second pass over each
    built item's label fields gives (what it did before): a value there that is no plain str."""
    report = Report()
    built = {c.index for c in to_chunks(items, report)}
    expected = [
        ("coerced", i, name, type(item[name]).__name__)
        for i, item in enumerate(items)
        if i in built
        for name in LABEL_FIELDS
        if item.get(name) is not None and type(item[name]) is not str
    ]
    assert [(n["event"], n["index"], n["field"], n["got"]) for n in report.notes] == expected


def test_question_must_be_a_string():
    with pytest.raises(ConfigError, match="question must be a str"):
        assemble(None, [], budget=10)  # type: ignore[arg-type]


def test_empty_input_and_tiny_budget():
    assert assemble("q", [], budget=10).chunks == []
    tiny = assemble("q", [{"id": "a", "text": "some text"}], budget=3)
    assert tiny.chunks == []
    assert tiny.report.reasons == {"over_budget": 1}


def test_duplicate_ids_with_different_texts_are_both_candidates_and_noted():
    result = assemble("q", [{"id": "a", "text": "one"}, {"id": "a", "text": "two"}], budget=200)
    assert len(result.chunks) == 2
    assert [n["event"] for n in result.report.notes].count("id_conflict") == 1


def test_chunk_objects_are_accepted_and_not_changed():
    c = Chunk(id="a", text="x")
    result = assemble("q", [c], budget=100)
    assert result.chunks[0].index == 0
    assert c.index is None


def test_async_matches_sync(records):
    rec = records[3]
    a = Assembler()
    sync = a.run(rec["question"], rec["candidates"], budget=800)
    result = asyncio.run(a.arun(rec["question"], rec["candidates"], budget=800))
    assert [c.id for c in result.chunks] == [c.id for c in sync.chunks]
    assert result.text == sync.text
