import pytest

from ctxassembly import ConfigError, Dedup
from ctxassembly.kinds import Status
from ctxassembly.ledger import Verdict
from ctxassembly.text.lexical import differs_in_substance
from tests.conftest import chunks, context, fates

pytestmark = pytest.mark.unit

PARA = (
    "The cache backend stores entries for a while and evicts the oldest ones when it is full, "
    "which keeps memory bounded for long running processes that serve many requests each day"
)


def test_exact_duplicates_after_normalisation_keep_the_first_and_its_provenance():
    cs = chunks(("a", "Hello  World"), ("b", "hello world"), ("c", "ＨＥＬＬＯ world"), ("d", "other"))
    ctx = context()
    out = Dedup().run(cs, ctx)
    assert [c.id for c in out] == ["a", "d"]
    assert ctx.ledger[out[0].index].duplicates == ("b", "c")
    assert fates(ctx) == {1: "duplicate", 2: "duplicate"}
    assert ctx.report.fate(1).detail == {"duplicate_of": "a", "kind": "exact", "kept_because": "higher_ranked"}


def test_near_duplicates_go():
    cs = chunks(("a", PARA + "."), ("b", PARA + " as well."))
    ctx = context()
    assert [c.id for c in Dedup().run(cs, ctx)] == ["a"]
    assert ctx.report.fate(1).detail["kind"] == "near"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("The retry limit is 3 attempts", "The retry limit is 5 attempts"),
        ("The timeout is 30 s", "The timeout is 30 ms"),
        ("This setting is supported", "This setting is not supported"),
        ("Released on 2024-01-02", "Released on 2024-02-02"),
        ("Requires version 5.1", "Requires version 5.2"),
    ],
)
def test_a_difference_in_substance_makes_a_conflict_not_a_duplicate(a, b):
    assert differs_in_substance(a, b)
    cs = chunks(("x", f"{PARA}. {a}."), ("y", f"{PARA}. {b}."))
    ctx = context()
    out = Dedup().run(cs, ctx)
    assert [c.id for c in out] == ["x", "y"]
    assert ctx.ledger[out[0].index].conflicts_with == ("y",)
    assert ctx.ledger[out[1].index].conflicts_with == ("x",)
    assert fates(ctx) == {}


def test_threshold_none_is_exact_only():
    cs = chunks(("a", PARA + "."), ("b", PARA + " as well."))
    assert len(Dedup(near_threshold=None).run(cs, context())) == 2


def test_lsh_path_finds_the_same_pairs_as_exact_comparison():
    # 150 distinct paragraphs, each present twice with a different last word (Jaccard ~0.9)
    base = [" ".join(f"t{i}w{j}" for j in range(60)) for i in range(150)]
    texts = [f"{b} end{k}" for k in range(2) for b in base]
    cs = chunks(*[(f"c{i}", t) for i, t in enumerate(texts)])
    small, large = Dedup(lsh_from=10_000), Dedup(lsh_from=100)
    a = [c.id for c in small.run(cs, context())]
    b = [c.id for c in large.run(cs, context())]
    assert a == b
    assert len(a) == 150


def test_idempotent_and_empty():
    cs = chunks(("a", "x"), ("b", "x"), ("c", "y"))
    once = Dedup().run(cs, context())
    assert Dedup().run(once, context()) == once
    assert Dedup().run([], context()) == []


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"near_threshold": 0}, r"in \(0, 1\]"), ({"near_threshold": 1.5}, r"in \(0, 1\]"), ({"shingle": 0}, "shingle")],
)
def test_bad_config(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        Dedup(**kwargs)


def test_with_labelled_versions_the_current_copy_survives():
    cs = chunks(("old", "same words"), ("cur", "same words"))
    ctx = context()
    ctx.ledger.update(0, version=Verdict(Status.OTHER_VERSION))
    ctx.ledger.update(1, version=Verdict(Status.CURRENT))
    out = Dedup().run(cs, ctx)
    assert [c.id for c in out] == ["cur"]
    assert ctx.report.fate(0).detail["duplicate_of"] == "cur"
    near = chunks(("old", PARA + "."), ("cur", PARA + " as well."))
    ctx = context()
    ctx.ledger.update(0, version=Verdict(Status.SUPERSEDED))
    assert [c.id for c in Dedup().run(near, ctx)] == ["cur"]


def test_the_copy_that_serves_the_question_is_kept_and_the_report_says_why():
    # same text under two sections: the one whose section matches the question stays
    cs = chunks(
        {"id": "upgrading", "text": "The limit is 5.", "section": "Release notes > Upgrading"},
        {"id": "ref", "text": "The limit is 5.", "section": "Reference > Retry limit"},
    )
    ctx = context("What is the retry limit?")
    assert [c.id for c in Dedup().run(cs, ctx)] == ["ref"]
    assert ctx.report.fate(0).detail["kept_because"] == "section_matches_question"
    assert ctx.report.fate(0).detail["duplicate_of"] == "ref"
    # the copy of the target version beats a higher-ranked copy of another version
    vs = chunks(
        {"id": "old", "text": "The limit is 5.", "version": "3.1"},
        {"id": "new", "text": "The limit is 5.", "version": "3.2"},
    )
    ctx = context("What is the retry limit?", target_version="3.2")
    assert [c.id for c in Dedup().run(vs, ctx)] == ["new"]
    assert ctx.report.fate(0).detail["kept_because"] == "target_version"


def test_copies_that_differ_only_in_markup_are_near_duplicates():
    # one docs version marks a name up as a reST role, the next as literal text: the same
    # passage, which word shingles must not tell apart by the role's name
    old = (
        "The new :setting:`CSRF_COOKIE_MASKED` transitional setting allows specifying whether "
        "to mask the CSRF cookie. Set :setting:`CSRF_COOKIE_MASKED` to ``True`` during the "
        "transition, in order to allow compatibility with the older versions. Once the "
        "transition is complete you can stop overriding :setting:`CSRF_COOKIE_MASKED`."
    )
    new = old.replace(":setting:`CSRF_COOKIE_MASKED`", "``CSRF_COOKIE_MASKED``")
    ctx = context()
    out = Dedup().run(chunks(("new", new), ("old", old)), ctx)
    assert [c.id for c in out] == ["new"]
    assert fates(ctx) == {1: "duplicate"}
