import json
import math
import pickle
from pathlib import Path

import pytest

from ctxassembly import Chunk, ChunkError
from ctxassembly.chunk import FrozenMeta

pytestmark = pytest.mark.unit

CORPUS_LINE = {
    "id": "5.1:ref/databases#4",
    "version": "5.1",
    "release": "5.1.15",
    "doc_id": "ref/databases",
    "title": "Databases",
    "section": "Databases > General notes",
    "start": 10,
    "end": 50,
    "tokens": 9,
    "text": "Django supports PostgreSQL 13 and higher.",
}


def test_from_dict_reads_the_corpus_fields_and_keeps_the_rest_in_meta():
    c = Chunk.from_dict(CORPUS_LINE, index=3)
    assert (c.id, c.version, c.doc_id, c.start, c.end, c.index) == (
        "5.1:ref/databases#4",
        "5.1",
        "ref/databases",
        10,
        50,
        3,
    )
    assert c.meta["release"] == "5.1.15"
    assert c.meta["tokens"] == 9
    assert c.score is None


def test_the_bundled_corpus_loads_line_by_line():
    path = Path(__file__).parents[1] / "ctxassembly" / "data" / "django_demo.jsonl"
    rows = [Chunk.from_dict(json.loads(line), i) for i, line in enumerate(path.read_text().splitlines())]
    assert len(rows) == 423
    assert {r.version for r in rows} == {"4.2", "5.1", "5.2"}


@pytest.mark.parametrize(
    ("data", "field", "where"),
    [
        ({"id": "a"}, "text", "'a'"),
        ({"id": "a", "text": None}, "text", "'a'"),
        ({"id": "a", "text": 5}, "text", "'a'"),
        ({"id": "a", "text": b"x"}, "text", "'a'"),
        ({"text": "x"}, "id", "<unknown>"),
        ({"id": ["x"], "text": "x"}, "id", "<unknown>"),
        ({"id": "a", "text": "x", "score": "high"}, "score", "'a'"),
        ({"id": "a", "text": "x", "score": math.nan}, "score", "'a'"),
        ({"id": "a", "text": "x", "score": math.inf}, "score", "'a'"),
        ({"id": "a", "text": "x", "title": {"en": "T"}}, "title", "'a'"),
        ({"id": "a", "text": "x", "start": -1}, "start", "'a'"),
        ({"id": "a", "text": "x", "start": 5, "end": 2}, "end", "'a'"),
        ({"id": "a", "text": "x", "meta": [1]}, "meta", "'a'"),
        ({"id": "a", "text": "x", "meta": {1: "x"}}, "meta", "'a'"),
    ],
)
def test_bad_fields_name_the_field_and_the_chunk(data, field, where):
    with pytest.raises(ChunkError, match=f"chunk {where}: field '{field}'") as e:
        Chunk.from_dict(data)
    assert e.value.field == field


def test_a_missing_id_names_the_index_or_gets_one():
    with pytest.raises(ChunkError, match="chunk at index 7: field 'text'"):
        Chunk.from_dict({"title": "t"}, index=7)
    assert Chunk.from_dict({"text": "x"}, index=7).id == "#7"


def test_numeric_version_becomes_a_string():
    assert Chunk.from_dict({"id": "a", "text": "x", "version": 5.1}).version == "5.1"


def test_chunks_are_immutable_and_meta_is_read_only():
    c = Chunk.from_dict({"id": "a", "text": "x", "acl": ["u1"]})
    with pytest.raises(AttributeError):
        c.text = "y"  # type: ignore[misc]
    with pytest.raises(TypeError):
        c.meta["acl"] = []  # type: ignore[index]
    d = c.with_meta(status="current")
    assert d.meta["status"] == "current"
    assert "status" not in c.meta


def test_chunks_pickle_and_round_trip_through_dict():
    c = Chunk.from_dict(CORPUS_LINE, index=0)
    assert pickle.loads(pickle.dumps(c)) == c
    assert Chunk.from_dict(c.to_dict() | {"meta": dict(c.meta)}, index=0) == c
    assert isinstance(c.meta, FrozenMeta)


def test_evolve_is_dataclasses_replace_for_every_field():
    from dataclasses import fields, replace

    c = Chunk.from_dict({**CORPUS_LINE, "score": 0.5, "date": "2024-01-01", "extra": 1}, index=3)
    values = {
        "id": "x", "text": "t", "score": 1.0, "doc_id": "d", "title": "T", "section": "S",
        "version": "9", "date": "2025", "start": 1, "end": 2, "meta": FrozenMeta({"k": 1}), "index": 7,
    }  # fmt: skip
    assert set(values) == {f.name for f in fields(Chunk)}  # a new field must be added here
    for name, value in values.items():
        assert c.evolve(**{name: value}) == replace(c, **{name: value})
    assert c.evolve(title="T", index=7) == replace(c, title="T", index=7)
    assert c.evolve() == c
    assert c.evolve() is not c
    with pytest.raises(TypeError, match=r"Chunk has no field\(s\) \['colour'\]"):
        c.evolve(colour="red")


def test_from_dict_shares_one_empty_metadata_and_copies_any_other():
    a, b = (Chunk.from_dict({"id": i, "text": "t"}, index=0) for i in ("a", "b"))
    assert a.meta is b.meta
    assert len(a.meta) == 0
    given = {"acl": ["u"]}
    c = Chunk.from_dict({"id": "c", "text": "t", "meta": given, "tenant": "x"}, index=0)
    assert dict(c.meta) == {"acl": ["u"], "tenant": "x"}
    assert c.meta._data is not given


def test_frozen_meta_lookups_are_the_mappings():
    meta = FrozenMeta({"k": 1, "none": None})
    assert "k" in meta
    assert "none" in meta
    assert "x" not in meta
    assert meta.get("k") == 1
    assert meta.get("none", 5) is None  # a stored None is a value, not a miss
    assert meta.get("x") is None
    assert meta.get("x", 5) == 5
    with pytest.raises(TypeError):
        _ = [] in meta  # an unhashable key fails as it does on a dict


def test_the_fast_builds_set_every_field_as_the_constructor_does():
    # from_dict and evolve set a Chunk's slots directly, the ledger a Facts' and the report
    # a bulk Decision's: each must equal what the dataclass's own constructor builds
    import pickle
    from dataclasses import FrozenInstanceError, fields

    from ctxassembly.kinds import Reason
    from ctxassembly.ledger import _EMPTY, Call, Facts, _replaced, _replaced_call
    from ctxassembly.report import Decision, _decision

    meta = FrozenMeta({"k": 1})
    values = {f.name: f"v_{f.name}" for f in fields(Chunk)} | {"score": 0.5, "start": 1, "end": 2, "index": 3}
    whole = Chunk(**{**values, "meta": meta})
    data = {**{k: v for k, v in values.items() if k not in ("index", "meta")}, "k": 1}
    built = Chunk.from_dict(data, index=3)
    assert built == whole
    assert type(built) is Chunk  # a Chunk, no twin of one
    assert hash(built) == hash(whole)
    with pytest.raises(FrozenInstanceError):
        built.id = "x"  # type: ignore[misc]  # frozen, like any Chunk
    assert pickle.loads(pickle.dumps(built)) == whole
    other = Chunk("x", "y", meta=FrozenMeta({"j": 2}), index=9)
    assert other.evolve(**{**values, "meta": meta}) == whole
    assert type(whole.evolve()) is Chunk
    facts = {f.name: object() for f in fields(Facts)}
    assert _replaced(_EMPTY, facts) == Facts(**facts)
    assert _replaced(Facts(**facts), {}) == Facts(**facts)
    assert type(_replaced(_EMPTY, facts)) is Facts
    call = {f.name: object() for f in fields(Call)}
    assert _replaced_call(Call(), call) == Call(**call)
    assert _replaced_call(Call(**call), {}) == Call(**call)
    assert type(_replaced_call(Call(), {})) is Call
    with pytest.raises(TypeError, match="nope"):
        _replaced_call(Call(), {"nope": 1})
    from ctxassembly.versioning import Resolved, _resolved

    resolved = {f.name: object() for f in fields(Resolved)}
    assert _resolved(**resolved) == Resolved(**resolved)
    assert _resolved() == Resolved()
    assert type(_resolved()) is Resolved
    from ctxassembly.text.structure import Block, _block

    block = {f.name: object() for f in fields(Block)}
    assert _block(**block) == Block(**block)
    assert type(_block(**block)) is Block
    plain = Block(1, 9, 0, False, None, 0, 2, (3,), None, 4)
    assert hash(_block(1, 9, 0, False, None, 0, 2, (3,), None, 4)) == hash(plain)
    assert pickle.loads(pickle.dumps(_block(1, 9, 0, False, None, 0, 2, (3,), None, 4))) == plain
    assert _decision(4, "a", "depth", Reason.BEYOND_HORIZON, {"rank": 1}) == Decision(
        4, "a", "depth", Reason.BEYOND_HORIZON, {"rank": 1}
    )
