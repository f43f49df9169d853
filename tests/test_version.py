import pytest

from ctxassembly import ConfigError, VersionFilter
from ctxassembly.stages.version import matches, resolve_target, subject_version, version_key, versions_in
from tests.conftest import chunk, chunks, context, fates

pytestmark = pytest.mark.unit


def versioned():
    return chunks(
        {"id": "a42", "text": "retry limit 3", "doc_id": "guide", "version": "4.2"},
        {"id": "a51", "text": "retry limit 4", "doc_id": "guide", "version": "5.1"},
        {"id": "a52", "text": "retry limit 5", "doc_id": "guide", "version": "5.2"},
        {"id": "old", "text": "legacy only", "doc_id": "legacy", "version": "4.2"},
        {"id": "nov", "text": "no version", "doc_id": "misc"},
    )


def test_caller_target_wins():
    ctx = context(target_version="5.1")
    out = VersionFilter().run(versioned(), ctx)
    assert [c.id for c in out] == ["a51", "nov"]
    assert fates(ctx) == {0: "superseded", 2: "other_version", 3: "superseded"}
    assert ctx.report.fate(0).detail["superseded_by"] == "a51"
    assert ctx.ledger[out[1].index].status == "unversioned"


@pytest.mark.parametrize(
    ("question", "target"),
    [
        ("What is the limit in Django 5.1?", "5.1"),
        ("limit in v4.2", "4.2"),
        ("Enterprise 4.2 retries?", "4.2"),
        ("Python 3.12 on 5.2?", "5.2"),
    ],
)
def test_target_from_the_question(question, target):
    ctx = context(question)
    VersionFilter().run(versioned(), ctx)
    assert ctx.ledger.call.target_version == target


def test_current_is_latest_per_document_family():
    ctx = context("what is the retry limit?")
    out = VersionFilter(latest="document").run(versioned(), ctx)
    assert [c.id for c in out] == ["a52", "old", "nov"]
    assert ctx.report.notes[0]["how"] == "current"


def test_label_policy_keeps_other_versions_labelled_in_place():
    ctx = context(target_version="5.2")
    out = VersionFilter("label").run(versioned(), ctx)
    assert [(c.id, ctx.ledger[c.index].status) for c in out] == [
        ("a42", "superseded"),
        ("a51", "superseded"),
        ("a52", "current"),
        ("old", "superseded"),
        ("nov", "unversioned"),
    ]
    assert dict(ctx.ledger[out[0].index].version.labels)["superseded_by"] == "a52"
    assert ctx.report.fates == []


def test_release_notes_of_another_version_are_other_version():
    cs = chunks(
        {
            "id": "n40",
            "text": "limit raised",
            "version": "5.2",
            "title": "Django 4.0 release notes",
            "doc_id": "releases/4.0",
        },
        {
            "id": "n52",
            "text": "limit raised",
            "version": "5.2",
            "title": "Django 5.2 release notes",
            "doc_id": "releases/5.2",
        },
        {
            "id": "n521",
            "text": "fix",
            "version": "5.2",
            "title": "Django 5.2.1 release notes",
            "doc_id": "releases/5.2.1",
        },
    )
    ctx = context(target_version="5.2")
    assert [c.id for c in VersionFilter().run(cs, ctx)] == ["n52", "n521"]
    assert ctx.report.fate(0).detail["describes"] == "4.0"
    ctx = context("What changed in 4.0?", target_version="5.2")
    assert len(VersionFilter().run(cs, ctx)) == 3  # the question names 4.0: its notes are on topic
    assert len(VersionFilter(subject_versions=False).run(cs, context(target_version="5.2"))) == 3


def test_subject_version_from_section_heading():
    c = chunk("x", title="Python compatibility", section="What's new in Django 1.6 > Minor features")
    assert subject_version(c) == "1.6"
    assert subject_version(chunk("y", title="Databases")) is None


def test_version_ordering_and_matching():
    assert sorted(["5.10", "5.2", "5.9.1"], key=version_key) == ["5.2", "5.9.1", "5.10"]
    assert version_key("2024.03-lts") < version_key("1.0")  # non-PEP 440 sorts before PEP 440
    assert sorted(["r10", "r9"], key=version_key) == ["r9", "r10"]  # natural fallback
    assert matches("5.1.3", "5.1")
    assert matches("v5.1", "5.1")
    assert not matches("5.10", "5.1")
    assert versions_in("Django 5.1 on Python 3.12.1") == ["5.1", "3.12.1"]
    assert resolve_target("Python 3.12 and Django 5.1", ["4.2", "5.1"]) == "5.1"


def test_empty_input_and_bad_policy():
    assert VersionFilter().run([], context()) == []
    with pytest.raises(ConfigError, match="version_policy must be one of"):
        VersionFilter("keep")  # type: ignore[arg-type]


def test_undotted_versions_and_versioned_doc_ids():
    cs = chunks(
        {"id": "p24", "text": "London limit $250/night", "doc_id": "policy-2024", "version": "2024"},
        {"id": "p23", "text": "London limit $220/night", "doc_id": "policy-2023", "version": "2023"},
    )
    ctx = context("Under the 2024 policy, what is the London limit?")
    assert [c.id for c in VersionFilter().run(cs, ctx)] == ["p24"]
    assert ctx.ledger.call.target_version == "2024"


def sited(*pages):
    """Chunks whose version is a segment of their URL: ``(id, url, text)``."""
    return chunks(*({"id": i, "text": t, "meta": {"source": url}} for i, url, t in pages))


def test_a_page_missing_from_its_docs_newest_release_is_superseded():
    # "intro" moved in 5.7: its 5.3 copy is no page of the current docs
    pages = sited(
        ("g53", "https://docs.example.org/5.3/guide.html", "retry limit 3"),
        ("g57", "https://docs.example.org/5.7/guide.html", "retry limit 5"),
        ("i53", "https://docs.example.org/5.3/intro.html", "requires broker 4.5"),
        ("n57", "https://docs.example.org/5.7/start/intro.html", "requires broker 6.4"),
    )
    ctx = context("what is the retry limit?")
    out = VersionFilter().run(pages, ctx)
    assert [c.id for c in out] == ["g57", "n57"]
    assert ctx.report.fate(2).reason == "superseded"
    assert ctx.report.fate(2).detail["absent_from"] == "5.7"
    assert "absent_from" not in ctx.report.fate(0).detail  # a plain older copy
    # the per-document rule keeps it: the newest version of that page present
    ctx = context("what is the retry limit?")
    assert [c.id for c in VersionFilter(latest="document").run(pages, ctx)] == ["g57", "i53", "n57"]


def test_each_site_has_its_own_newest_release():
    # two products' docs in one store: product a's 1.x pages are current at 1.4
    pages = sited(
        ("a1", "https://kb.example.org/a/1.4/setup.html", "port 80"),
        ("a0", "https://kb.example.org/a/1.2/setup.html", "port 70"),
        ("b2", "https://kb.example.org/b/2.0/setup.html", "port 90"),
        ("b1", "https://kb.example.org/b/1.9/setup.html", "port 91"),
        ("a9", "https://kb.example.org/a/1.2/faq.html", "no answer"),
    )
    ctx = context("which port?")
    out = VersionFilter().run(pages, ctx)
    assert [c.id for c in out] == ["a1", "b2"]
    assert ctx.report.fate(4).detail["absent_from"] == "1.4"


def test_with_a_version_field_alone_the_pages_tell_the_release_line():
    # no location, but "guide" has copies at 4.2 and at 5.2: the docs went on past 4.2, and
    # "legacy", whose newest copy is 4.2, is missing from 5.2 (moved or removed)
    ctx = context("what is the retry limit?")
    assert [c.id for c in VersionFilter().run(versioned(), ctx)] == ["a52", "nov"]
    assert ctx.report.fate(3).reason == "superseded"
    assert ctx.report.fate(3).detail["absent_from"] == "5.2"
    # two products in one store, no page in both: nothing says they are one set of docs
    two = chunks(
        {"id": "x3", "text": "chains run in order", "doc_id": "chains", "version": "0.3"},
        {"id": "x2", "text": "chains ran in order", "doc_id": "chains", "version": "0.2"},
        {"id": "y1", "text": "graphs run in steps", "doc_id": "graphs", "version": "0.1"},
    )
    ctx = context("how do they run?")
    assert [c.id for c in VersionFilter().run(two, ctx)] == ["x3", "y1"]


def test_bad_latest_scope_is_named():
    with pytest.raises(ConfigError, match=r"latest must be one of .*got 'page'"):
        VersionFilter(latest="page")


def test_a_page_under_an_alias_is_not_lifted_to_a_numbered_release():
    # "latest/" may be newer than every numbered release: its pages stay
    pages = sited(
        ("l", "https://docs.example.org/latest/new.html", "brand new"),
        ("g5", "https://docs.example.org/5.7/guide.html", "retry limit 5"),
        ("g3", "https://docs.example.org/5.3/guide.html", "retry limit 3"),
    )
    ctx = context("what is new?")
    assert [c.id for c in VersionFilter().run(pages, ctx)] == ["l", "g5"]


def test_an_archive_year_is_no_release_of_one_set_of_docs():
    # years vary like versions here, yet a 2023-only post is not missing from 2024's docs
    pages = sited(
        ("r3", "https://example.org/news/2023/report.html", "report 2023"),
        ("r4", "https://example.org/news/2024/report.html", "report 2024"),
        ("s3", "https://example.org/news/2023/summary.html", "summary 2023"),
        ("s4", "https://example.org/news/2024/summary.html", "summary 2024"),
        ("p3", "https://example.org/news/2023/launch.html", "a post"),
    )
    ctx = context("what happened?")
    assert [c.id for c in VersionFilter().run(pages, ctx)] == ["r4", "s4", "p3"]
