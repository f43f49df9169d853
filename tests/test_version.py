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
    out = VersionFilter().run(versioned(), ctx)
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
