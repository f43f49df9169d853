import pytest

from ctxassembly import Admit, ConfigError
from tests.conftest import chunks, context, fates

pytestmark = pytest.mark.unit


def acl_chunks():
    return chunks(
        {"id": "pub", "text": "a", "meta": {"acl": ["everyone"]}},
        {"id": "hr", "text": "b", "meta": {"acl": ["hr"]}},
        {"id": "none", "text": "c"},
        {"id": "bad", "text": "d", "meta": {"acl": 42}},
        {"id": "empty", "text": "e", "meta": {"acl": []}},
        {"id": "str", "text": "f", "meta": {"acl": "hr"}},
    )


def test_acl_fails_closed():
    ctx = context()
    out = Admit(["everyone", "alice"]).run(acl_chunks(), ctx)
    assert [c.id for c in out] == ["pub"]
    assert set(fates(ctx).values()) == {"not_permitted"}
    whys = {d.id: d.detail["why"] for d in ctx.report.fates}
    assert "no ACL data" in whys["none"]
    assert "malformed" in whys["bad"]
    assert "malformed" in whys["empty"]


def test_string_acl_is_one_principal():
    out = Admit(["hr"]).run(acl_chunks(), context())
    assert [c.id for c in out] == ["hr", "str"]


@pytest.mark.parametrize("principals", [[], None])
def test_enforced_acl_with_no_principals_admits_nothing(principals):
    ctx = context()
    assert Admit(principals, enforce_acl=True).run(acl_chunks(), ctx) == []
    assert all("no principals" in d.detail["why"] for d in ctx.report.fates)


def test_acl_off_by_default():
    assert len(Admit().run(acl_chunks(), context())) == 6


def test_per_call_principals_win_even_when_empty():
    ctx = context(principals=frozenset())
    assert Admit(["everyone"]).run(acl_chunks(), ctx) == []


def test_permit_predicate_and_a_broken_one_denies():
    ctx = context()
    out = Admit(["x"], permit=lambda c, p: c.id == "pub").run(acl_chunks(), ctx)
    assert [c.id for c in out] == ["pub"]

    def broken(c, p):
        raise KeyError("boom")

    ctx = context()
    assert Admit(["x"], permit=broken).run(acl_chunks(), ctx) == []
    assert "raised KeyError" in next(iter(ctx.report.fates)).detail["why"]


@pytest.mark.parametrize(
    ("scope", "kept"),
    [
        ({"edition": "enterprise"}, ["e"]),
        ({"edition": {"enterprise", "community"}}, ["e", "c"]),
        ({"edition": lambda v: v.startswith("c")}, ["c"]),
        ({"version": "5.1"}, ["e"]),
    ],
)
def test_scope(scope, kept):
    cs = chunks(
        {"id": "e", "text": "a", "version": "5.1", "meta": {"edition": "enterprise"}},
        {"id": "c", "text": "b", "meta": {"edition": "community"}},
        {"id": "n", "text": "c"},
    )
    ctx = context()
    assert [c.id for c in Admit(scope=scope).run(cs, ctx)] == kept
    assert set(fates(ctx).values()) == {"out_of_scope"}


def test_missing_scope_field_is_recorded():
    ctx = context()
    Admit(scope={"locale": "en"}).run(chunks(("a", "x")), ctx)
    assert ctx.report.fate(0).detail == {"field": "locale", "why": "missing_scope_field"}


def test_empty_input():
    assert Admit(["x"]).run([], context()) == []


@pytest.mark.parametrize(
    ("kwargs", "match"), [({"principals": "alice"}, "collection of strings"), ({"scope": ["x"]}, "scope must be")]
)
def test_bad_config(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        Admit(**kwargs)
