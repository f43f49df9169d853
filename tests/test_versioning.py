"""Versions and document identity from where real loaders put them (issue 19).

Shapes as loaders write them: a web loader's ``source`` URL, a directory reader's
``file_path``/``file_name``, a title, and text with nothing but its own change notes.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxassembly import AbsentVersionWarning, ConfigError, VersionFilter, assemble, versioning
from ctxassembly.chunk import Chunk
from ctxassembly.render import parse
from ctxassembly.versioning import (
    canonical,
    ceilings_in,
    floors_in,
    mentions_in,
    resolve_all,
    same_version,
    subjects_in,
)
from tests.conftest import DEV_CORPORA, DevData, chunks, context, fates

pytestmark = pytest.mark.unit

HOST = "https://docs.example.org"


def pages(template: str, versions=("4.2", "5.1", "5.2"), docs=("ref/databases", "ref/settings")):
    """One candidate per (doc, version) with only a location, as a web loader gives it."""
    specs = []
    for doc in docs:
        for v in versions:
            specs.append(
                {"id": f"{v}:{doc}", "text": f"{doc} text in {v}", "meta": {"source": template.format(v=v, doc=doc)}}
            )
    return chunks(*specs)


@pytest.mark.parametrize(
    ("template", "spelling", "version"),
    [
        (HOST + "/en/{v}/{doc}/", "5.1", "5.1"),  # a docs site
        (HOST + "/en/{v}.x/{doc}.html", "5.1.x", "5.1"),  # a branch build
        (HOST + "/v{v}/{doc}", "v5.1", "5.1"),
        ("docs/guide-{v}-{doc}.md", "5.1", "5.1"),  # a version inside a file name
    ],
)
def test_version_from_a_url_or_path_segment(template, spelling, version):
    cs = pages(template)
    resolved, _ = resolve_all(cs)
    r = resolved[1]  # 5.1 of the first doc
    assert (r.version, r.source, r.key, r.spelling) == (version, "path", "source", spelling)
    # the identity drops the version segment: all versions of a page are one document
    assert resolved[0].document == resolved[1].document == resolved[2].document
    assert resolved[0].document != resolved[3].document


def test_url_only_metadata_target_from_question_and_latest_per_document():
    cs = pages(HOST + "/en/{v}/{doc}/")
    ctx = context("What changed in Django 4.2?")
    out = VersionFilter().run(cs, ctx)
    assert [c.id for c in out] == ["4.2:ref/databases", "4.2:ref/settings"]
    assert out[0].version == "4.2"
    assert ctx.ledger[out[0].index].version.source == "path"
    assert ctx.ledger[out[0].index].version.key == "source"
    target = next(n for n in ctx.report.notes if n["event"] == "target")
    assert (target["version"], target["how"], target["from"]) == ("4.2", "question", {"path": 6})
    # no version named: the latest per document, the others superseded by it
    ctx = context("How do I configure databases?")
    out = VersionFilter().run(cs, ctx)
    assert [c.id for c in out] == ["5.2:ref/databases", "5.2:ref/settings"]
    assert ctx.report.fate(0).detail == {
        "version": "4.2",
        "target": "5.2",
        "from": "path",
        "superseded_by": "5.2:ref/databases",
    }


def test_an_unknown_spelling_is_found_by_the_variant_axis():
    # "r42" is no shape the rules know; it varies between otherwise equal paths of two
    # documents, so it is the version axis, and the question's "4.2" maps onto it
    cs = pages("/srv/manual/r{v}/{doc}.txt", versions=("42", "51"), docs=("intro", "setup"))
    resolved, learnt = resolve_all(cs)
    assert [r.version for r in resolved] == ["r42", "r51", "r42", "r51"]
    assert resolved[0].document == resolved[1].document == "srv/manual/intro"
    assert learnt["axes"] == {"source": {"2": 2}}
    ctx = context("How do I set it up in release 4.2?")
    assert [c.id for c in VersionFilter().run(cs, ctx)] == ["42:intro", "42:setup"]
    assert ctx.ledger.call.target_version == "4.2"
    # one document alone proves nothing: a varying "chapter" segment is not a version
    single = pages("/book/ch{v}/{doc}.txt", versions=("3", "4"), docs=("intro",))
    assert [r.version for r in resolve_all(single)[0]] == [None, None]


@pytest.mark.parametrize(("question", "spelling"), [("2.0", "20"), ("2.0", "2.0.x"), ("2.0", "v2.0"), ("5.1", "r51")])
def test_question_versions_map_onto_spellings(question, spelling):
    assert same_version(spelling, question)
    assert not same_version("2.1", "2.0")
    assert not same_version("5.10", "51")
    assert canonical("V5.1.x") == "5.1"
    assert canonical("Stable") == "stable"


def test_first_version_segment_wins_over_a_versioned_page_name():
    # release notes of 5.1 inside the 5.2 docs: the docs version is 5.2
    cs = chunks(
        {"id": "a", "text": "notes", "meta": {"source": HOST + "/en/5.2/releases/5.1/"}},
        {"id": "b", "text": "notes", "meta": {"source": HOST + "/en/5.1/releases/5.1/"}},
        {"id": "c", "text": "notes", "meta": {"source": HOST + "/en/5.2/releases/5.0/"}},
    )
    assert [r.version for r in resolve_all(cs)[0]] == ["5.2", "5.1", "5.2"]


def test_file_path_wins_over_a_per_file_reader_id():
    # LlamaIndex's SimpleDirectoryReader: ref_doc_id (the chunk's doc_id) is a fresh id per
    # file, so two versions of one page have different ids; the path says they are one
    cs = chunks(
        {"id": "n1", "text": "x", "doc_id": "6f1c-uuid", "meta": {"file_path": "/data/docs/4.2/install.md"}},
        {"id": "n2", "text": "y", "doc_id": "9a2b-uuid", "meta": {"file_path": "/data/docs/5.1/install.md"}},
    )
    ctx = context("how to install")
    out = VersionFilter().run(cs, ctx)
    assert [c.id for c in out] == ["n2"]
    assert ctx.report.fate(0).reason == "superseded"


def test_a_version_key_that_holds_a_url_is_read_as_a_location():
    # MetadataKeys(version="source") in the LangChain adapter put the URL into the field
    cs = chunks({"id": "a", "text": "t", "version": HOST + "/en/5.1/ref/databases/"})
    r = resolve_all(cs)[0][0]
    assert (r.version, r.source) == ("5.1", "path")


def test_field_first_then_common_keys_and_full_metadata_unchanged():
    cs = chunks(
        {"id": "a", "text": "t", "version": "5.1", "doc_id": "releases/5.1"},
        {"id": "b", "text": "t", "meta": {"release": "4.2.3", "source": HOST + "/en/5.1/x/"}},
    )
    a, b = resolve_all(cs)[0]
    assert (a.version, a.source, a.document) == ("5.1", "field", "releases/5.1")  # a doc id stays whole
    assert (b.version, b.source, b.key) == ("4.2.3", "field", "release")


def test_title_version_when_nothing_else_has_one_and_the_title_varies():
    cs = chunks(
        {"id": "a", "text": "t", "title": "Widget 3.1 user guide"},
        {"id": "b", "text": "u", "title": "Widget 3.2 user guide"},
        {"id": "c", "text": "v", "title": "Python 3.12 support"},  # alone: another product's version
    )
    a, b, c = resolve_all(cs)[0]
    assert (a.version, a.source, a.document) == ("3.1", "title", "Widget  user guide")
    assert b.document == a.document
    assert c.version is None
    out = VersionFilter().run(cs, context("How do I start?"))
    assert [x.id for x in out] == ["b", "c"]


def test_aliases_are_versions_but_not_numbered_releases():
    cs = pages(HOST + "/{v}/{doc}/", versions=("5.1", "stable", "dev"), docs=("guide",))
    out = VersionFilter().run(cs, context("guide?"))
    assert [c.id for c in out] == ["stable:guide"]  # stable names the newest release, dev is unreleased


def test_text_change_notes_are_a_floor():
    assert floors_in(".. versionadded:: 5.1\n\nNew in version 5.2. Deprecated since 4.0") == ("5.1", "5.2", "4.0")
    assert floors_in(".. versionremoved:: 9.1\n\nAs of ``9.1``, it only captures that.") == ("9.1",)
    assert floors_in("Which version? It will be deprecated in 6.0.") == ()  # announced, not noted
    cs = chunks(
        ("old", "The limit is 3."),
        ("new", "The limit is 5.\n\n.. versionchanged:: 5.1\n\n    It was 3."),
    )
    ctx = context("What is the limit in 4.2?", target_version="4.2")
    out = VersionFilter().run(cs, ctx)
    assert [c.id for c in out] == ["old"]
    assert ctx.report.fate(1).detail == {"floor": "5.1", "from": "text", "target": "4.2"}
    # with no version named, a floor decides nothing: both stay, the newer labelled
    ctx = context("What is the limit?")
    out = VersionFilter().run(cs, ctx)
    assert [ctx.ledger[c.index].version.floor for c in out] == [None, "5.1"]


def test_a_copy_without_the_targets_own_note_is_another_versions():
    body = (
        "Connections are pooled by default and the pool size can be configured per alias in settings. "
        "Each worker keeps its own pool, so the total number of connections grows with the workers. "
        "Close idle connections with the maximum age option when the database limits them"
    )
    cs = chunks(
        ("with", f"{body}.\n\n.. versionchanged:: 5.1\n\n    The pool size is 10.\n\nMore text follows here."),
        ("without", f"{body}.\n\nMore text follows here, after the note."),
        ("short", f"{body}."),  # a chunk that ends before the note: not evidence
    )
    ctx = context(target_version="5.1")
    out = VersionFilter().run(cs, ctx)
    assert [c.id for c in out] == ["with", "short"]
    assert ctx.report.fate(1).detail["lacks_note"] == "5.1"


def test_a_future_change_is_a_ceiling_against_a_named_version():
    assert ceilings_in("This will be removed in Acme 6.0.", ["Acme"]) == ("6.0",)
    assert ceilings_in("It will run in 3 seconds. It will be dropped in Python 4.1.", ["Acme"]) == ()
    cs = chunks(("old", "The alias will be removed in Acme 6.0."), ("new", "The alias was removed."))
    ctx = context("Is the alias in Acme 6.1?", target_version="6.1")
    assert [c.id for c in VersionFilter().run(cs, ctx)] == ["new"]
    assert fates(ctx) == {0: "superseded"}


def test_a_version_nobody_matches_gets_a_note():
    cs = pages(HOST + "/en/{v}/{doc}/")
    ctx = context("Does 3.2 support it?")
    with pytest.warns(AbsentVersionWarning, match=r"the question names '3.2'.* \(present: 4.2, 5.1, 5.2\)"):
        VersionFilter().run(cs, ctx)
    note = next(n for n in ctx.report.notes if n["event"] == "unmatched_version")
    assert note["named"] == ["3.2"]
    assert note["present"] == ["4.2", "5.1", "5.2"]
    ctx = context("Does 3.2 support it?")
    VersionFilter().run(chunks(("a", "plain text")), ctx)  # no version anywhere: nothing to fall back from, no warning
    assert "no candidate carries a version" in ctx.report.notes[0]["why"]


def test_text_only_variants_stay_adjacent_and_labelled_as_a_conflict():
    # nothing says which copy is which version: both stay, side by side, each naming the other
    same = (
        "The age of session cookies, in seconds. It defaults to {n} and can be changed in the settings "
        "module of the project; browsers drop the cookie when it expires, and the server forgets the "
        "session data on the next cleanup run, which the management command performs on demand. "
        "Sessions stored in signed cookies cannot be invalidated by the server before they expire, "
        "so keep the age short when the cookie carries permissions or other sensitive state."
    )
    cands = [
        {"id": "a", "text": same.format(n=1209600), "score": 0.9},
        {"id": "x", "text": "Unrelated passage about templates and their loaders in a project.", "score": 0.8},
        {"id": "b", "text": same.format(n=86400), "score": 0.7},
    ]
    res = assemble("How long is the session cookie age?", cands, budget=500, order="relevance")
    ids = [c.id for c in res.chunks]
    assert ids.index("b") == ids.index("a") + 1
    by_id = {c.id: c for c in res.chunks}
    assert by_id["a"].meta["conflicts_with"] == ("b",)
    assert by_id["b"].meta["conflicts_with"] == ("a",)
    assert res.report.fate(2).kept
    # labelled where the model reads: both blocks say they conflict, the unrelated one not
    assert {c.id: c.meta["status"] for c in res.chunks} == {"a": "conflicting", "b": "conflicting", "x": "unversioned"}
    blocks = parse(res.text)
    shown = [(res.report.citations[b["id"]], b["status"]) for b in blocks]  # blocks show citation ids
    assert [s for s in shown if s[0] in "ab"] == [("a", "conflicting"), ("b", "conflicting")]
    assert res.report.tokens_after <= 500
    note = next(n for n in res.report.notes if n["event"] == "conflicting")
    assert note["chunks"] == [["a", "b"], ["b", "a"]]
    # in every order the pair stays side by side, labelled; with one of them cut, no label
    for order in ("bookend", "edges", "reading"):
        res = assemble("How long is the session cookie age?", cands, budget=500, order=order)
        ids = [c.id for c in res.chunks]
        assert abs(ids.index("a") - ids.index("b")) == 1
        assert 'status="conflicting"' in res.text
    res = assemble("How long is the session cookie age?", cands, budget=130, order="relevance")
    assert [c.id for c in res.chunks] == ["a"]
    assert res.chunks[0].meta["status"] == "unversioned"


def test_report_names_each_chunks_version_and_source():
    cs = pages(HOST + "/en/{v}/{doc}/", docs=("ref/databases",))
    res = assemble("databases in 5.1?", [c.to_dict() for c in cs], budget=500)
    resolved = next(n for n in res.report.notes if n["event"] == "resolved")
    assert resolved["chunks"][1] == [1, "5.1:ref/databases", "5.1", "path", "source"]
    assert res.chunks[0].meta["version_from"] == "path"


def test_bad_key_options():
    with pytest.raises(ConfigError, match="location_keys must be a metadata key"):
        VersionFilter(location_keys=[""])
    with pytest.raises(ConfigError, match="version_keys must be"):
        VersionFilter(version_keys=3)  # type: ignore[arg-type]
    assert VersionFilter(location_keys="link").location_keys == ("link",)


def test_a_version_the_text_names_after_the_questions_product_word_is_a_floor():
    assert mentions_in("Similarly to the deprecation in Acme 9.1, all fixtures ...", ["Acme"]) == ("9.1",)
    assert mentions_in("Acme 10.0 will drop it. Python 3.12 is fine.", ["Acme"]) == ()  # future; other word
    cs = chunks(("new", "As deprecated in Acme 9.1, the option is gone."), ("old", "The option is available."))
    ctx = context("Is the option in Acme 8.3?", target_version="8.3")
    assert [c.id for c in VersionFilter().run(cs, ctx)] == ["old"]
    assert ctx.report.fate(0).detail["floor"] == "9.1"


def test_text_only_and_no_version_named_the_newest_note_stands_for_current():
    body = (
        "A quick example of the configuration files supported by the tool follows. "
        "Each of them is searched in the root directory of the repository, in this order, "
        "and the first one found is used even when it is empty"
    )
    cs = chunks(
        ("new", f"{body}.\n\n.. versionadded:: 9.0\n\n``tool.toml`` files take precedence over other files.\n\nMore."),
        ("old", f"{body}.\n\n``tool.ini`` files take precedence over other files.\n\nMore."),
        ("other", "Strict mode.\n\n.. versionadded:: 9.0\n\nThe ``strict`` option turns on all checks."),
    )
    ctx = context("Which configuration file takes precedence?")
    assert [c.id for c in VersionFilter().run(cs, ctx)] == ["new", "other"]
    note = next(n for n in ctx.report.notes if n["event"] == "text_target")
    assert note["version"] == "9.0"
    # one text alone naming the newest version decides nothing (a planted note could)
    ctx = context("Which configuration file takes precedence?")
    assert [c.id for c in VersionFilter().run(cs[:2], ctx)] == ["new", "old"]


def test_a_page_named_by_a_version_is_about_that_version():
    # the 4.2 release notes inside the 5.2 docs still state 4.2's facts as facts
    cs = chunks(
        {"id": "notes42", "text": "PostgreSQL 12 and higher", "meta": {"file_path": "/m/en/5.2/releases/4.2.md"}},
        {"id": "ref52", "text": "PostgreSQL 14 and higher", "meta": {"file_path": "/m/en/5.2/ref/databases.md"}},
    )
    ctx = context(target_version="5.2")
    assert [c.id for c in VersionFilter().run(cs, ctx)] == ["ref52"]
    assert ctx.report.fate(0).detail == {"describes": "4.2", "target": "5.2"}
    # one docs version alone: release notes named by version are pages, not versions
    single = chunks(
        {"id": "a", "text": "x", "meta": {"source": HOST + "/releases/4.2/"}},
        {"id": "b", "text": "y", "meta": {"source": HOST + "/releases/5.0/"}},
    )
    assert [r.version for r in resolve_all(single)[0]] == [None, None]
    assert [c.id for c in VersionFilter().run(single, context("what changed?"))] == ["a", "b"]


def test_only_the_targets_product_word_makes_a_mention_count():
    # "Python 3.13" in a question about Acme 3.2 names another product's version
    cs = chunks(("a", "Acme runs on Python 3.13 and later."), ("b", "Acme runs on older Pythons."))
    ctx = context("Does Acme 3.2 support Python 3.13?", target_version="3.2")
    assert [c.id for c in VersionFilter().run(cs, ctx)] == ["a", "b"]


def test_a_copy_without_a_pending_change_note_is_another_versions():
    # the target's copy announces a change for a later version; a copy of the same
    # passage without that note (the change made, the note pruned) is another version's
    head = (
        "This attribute defines the protocol of the URLs in the map. If it is not set, the "
        "protocol of the request is used. Outside a request, the default is {p}."
    )
    note = "\n\n.. deprecated:: 4.0\n\n    The default protocol will change from http to https in Acme 5.0."
    tail = (
        "\n\n.. attribute:: limit\n\n    The maximum number of URLs included on each page of the map; "
        "its value should not exceed the default value of the protocol's upper limit."
    )
    cs = chunks(("old", head.format(p="http") + note + tail), ("new", head.format(p="https") + tail))
    ctx = context("In Acme 4.2, which protocol is the default?", target_version="4.2")
    assert [c.id for c in VersionFilter().run(cs, ctx)] == ["old"]
    assert ctx.report.fate(1).detail == {"lacks_note": "5.0", "copy_of": "old", "from": "text", "target": "4.2"}
    # once the target is the version the note announces, the note no longer holds
    ctx = context("In Acme 5.0, which protocol is the default?", target_version="5.0")
    assert [c.id for c in VersionFilter().run(cs, ctx)] == ["new"]


def test_a_text_about_another_release_describes_that_release():
    assert subjects_in("Upstream support ends. Acme 4.2 supports Foo 12 and higher.", ["Acme"]) == ("4.2",)
    assert subjects_in("Acme 4.2.1 fixes bugs. Acme 5.0 is an LTS.", ["acme"]) == ("4.2.1", "5.0")
    # a heading, the future, a range, another product: no statement about the release
    text = "Acme 5.0 release notes\n\nAcme 6.0 will drop it. Acme 4.0 and later. Python 3.12 supports it."
    assert subjects_in(text, ["Acme"]) == ()
    notes = "Dropped support for Foo 11.\n\nUpstream support ends. Acme 4.2 supports Foo 12 and higher."
    cs = chunks(("notes42", notes), ("ref", "Acme supports Foo 13 and higher."))
    ctx = context("Does Acme 5.1 support Foo 12?", target_version="5.1")
    assert [c.id for c in VersionFilter().run(cs, ctx)] == ["ref"]
    assert ctx.report.fate(0).detail == {"describes": "4.2", "from": "text", "target": "5.1"}
    # the question names that release: it is what the question is about
    ctx = context("Did Acme 4.2 support Foo 12?", target_version="4.2")
    assert [c.id for c in VersionFilter().run(cs, ctx)] == ["notes42", "ref"]


REQUIREMENTS = (
    "Acme supports the Foo database server {v} and higher, on every platform the server runs on; "
    "the driver is installed with the package manager and the connection options go into the "
    "settings module of the project, next to the name of the database and its user."
)


def test_a_text_about_the_target_tells_its_copy_of_a_passage_from_another_versions():
    witness = "Upstream support for Foo 10.3 ends in May. Acme 4.2 supports Foo 10.4 and higher."
    cs = chunks(
        ("newer", REQUIREMENTS.format(v="10.5")),
        ("target", REQUIREMENTS.format(v="10.4")),
        ("notes", witness),
    )
    ctx = context("Which Foo versions does Acme 4.2 support?", target_version="4.2")
    assert [c.id for c in VersionFilter().run(cs, ctx)] == ["target", "notes"]
    assert ctx.report.fate(0).detail == {"contradicts": "notes", "fact": "10.4", "from": "text", "target": "4.2"}
    # without the witness nothing tells the copies apart: both stay (a conflict pair)
    ctx = context("Which Foo versions does Acme 4.2 support?", target_version="4.2")
    assert [c.id for c in VersionFilter().run(cs[:2], ctx)] == ["newer", "target"]


def test_no_version_anywhere_the_copy_with_higher_requirements_is_the_newer():
    cs = chunks(("old", REQUIREMENTS.format(v="3.21.0")), ("new", REQUIREMENTS.format(v="3.31.0")))
    ctx = context("Which Foo versions does Acme support?")
    assert [c.id for c in VersionFilter().run(cs, ctx)] == ["new"]
    assert ctx.report.fate(0).detail == {"newer_copy": "new", "figure": "3.31.0", "from": "text"}
    # other figures than versions (a count, a limit) can go either way: both stay
    counts = chunks(("a", REQUIREMENTS.format(v="100")), ("b", REQUIREMENTS.format(v="200")))
    assert [c.id for c in VersionFilter().run(counts, context("Which?"))] == ["a", "b"]
    # a named version: which copy is which is not known from the numbers alone
    ctx = context("Which Foo versions does Acme 4.2 support?", target_version="4.2")
    assert [c.id for c in VersionFilter().run(cs, ctx)] == ["old", "new"]


def test_a_change_note_in_a_text_does_not_outrank_real_metadata():
    cs = pages(HOST + "/en/{v}/{doc}/", docs=("ref/databases",))
    planted = Chunk(id="planted", text="Databases.\n\n.. versionadded:: 9.9\n\n    Everything changed.", index=3)
    ctx = context("What changed for databases in 9.9?")
    with pytest.warns(AbsentVersionWarning, match="'9.9'"):
        out = VersionFilter().run([*cs, planted], ctx)
    # 9.9 matches no candidate's version: the latest per document stays, with the note
    assert [c.id for c in out] == ["5.2:ref/databases", "planted"]
    assert ctx.ledger.call.target_version is None
    assert any(n["event"] == "unmatched_version" for n in ctx.report.notes)
    # text only: the note is all there is, and it names the question's version
    ctx = context("What changed for databases in 9.9?")
    VersionFilter().run([planted], ctx)
    assert ctx.ledger.call.target_version == "9.9"


def test_the_variant_pair_finders_agree_with_every_pair_compared():
    import random

    from ctxassembly.text.lexical import jaccard
    from ctxassembly.versioning.evidence import pairs_with, variant_pairs

    rng = random.Random(7)
    base = [frozenset(rng.sample(range(5000), rng.randint(5, 60))) for _ in range(40)]
    sets = {}
    for j, s in enumerate(base):  # each set, and a variant of some with a few shingles swapped
        sets[2 * j] = s
        keep = sorted(s)[rng.randint(0, len(s) // 2) :]
        sets[2 * j + 1] = frozenset(keep) | frozenset(rng.sample(range(5000, 9000), rng.randint(0, 8)))
    for t in (0.5, 0.6, 0.8):
        every = sorted((a, b) for a in sets for b in sets if a < b and jaccard(sets[a], sets[b], t) >= t)
        assert every, t
        assert variant_pairs(sets, t) == every
        queries = sorted(rng.sample(sorted(sets), 10))
        assert pairs_with(sets, queries, t) == [p for p in every if p[0] in queries or p[1] in queries]


# mentions_in / subjects_in search a lower-cased ASCII text for a necessary condition
# first; what they find must be exactly what the patterns alone find
def _mentions_by_pattern(text: str, names: tuple[str, ...]) -> tuple[str, ...]:
    pattern = versioning._mention_pattern(tuple(sorted({n.casefold() for n in names})))
    if not pattern.search(text):
        return ()
    out = []
    for sentence in versioning._SENTENCE.split(text):
        if not versioning._FUTURE_WORDS.search(sentence):
            out.extend(m.group(1) for m in pattern.finditer(sentence))
    return tuple(dict.fromkeys(out))


def _subjects_by_pattern(text: str, names: tuple[str, ...]) -> tuple[str, ...]:
    pattern = versioning._subject_pattern(tuple(sorted({n.casefold() for n in names})))
    return tuple(dict.fromkeys(m.group(1) for m in pattern.finditer(text)))


_PIECES = ["Acme", "ACME", "acme5", " ", "\t", "\n", "\n\n", "5.1", "v4.2", "V3", ". ", "will", "is", "supports"]
_PIECES += ["x", ":", "!", " 6.0", "É", "Ａcme", "\u212a"]  # non-ASCII: the patterns alone decide


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=16).map("".join), st.sampled_from([("Acme",), ("acme", "x")]))
def test_mentions_and_subjects_are_the_patterns_alone(text: str, names: tuple[str, ...]) -> None:
    assert mentions_in(text, names) == _mentions_by_pattern(text, names)
    assert subjects_in(text, names) == _subjects_by_pattern(text, names)


def _old_release_headings(text: str) -> tuple[tuple[int, str, bool], ...]:
    """``release_headings`` as it was: every line of the text tested in turn."""
    from ctxassembly.versioning.headings import _MARKDOWN, _RELEASED, _UNDERLINE, _UNDERLINE_CHARS, heading_version

    if not any(ch.isdigit() for ch in text[:20000]):
        return ()
    lines = text.split("\n")
    starts, at = [], 0
    for line in lines:
        starts.append(at)
        at += len(line) + 1
    out = []
    for i, line in enumerate(lines):
        candidate, below = None, i + 1
        md = _MARKDOWN.match(line) if line.startswith("#") else None
        if md is not None:
            candidate = md.group(1)
        elif (
            i + 1 < len(lines)
            and lines[i + 1][:1] in _UNDERLINE_CHARS
            and line.strip()
            and _UNDERLINE.match(lines[i + 1])
            and len(lines[i + 1].rstrip()) >= len(line.strip())
        ):
            candidate, below = line, i + 2
        found = None if candidate is None else heading_version(candidate)
        if found is None:
            continue
        version, dated = found
        if not dated:
            following = [ln for ln in lines[below : below + 6] if ln.strip()][:2]
            dated = any(_RELEASED.match(ln) for ln in following)
        out.append((starts[i], version, dated))
    return tuple(out)


_HEADING_PIECES = [
    "\n",
    "\n\n",
    "#",
    "## ",
    "===",
    "-----",
    "~~~",
    "5.1",
    "v2.0.1",
    "Version ",
    "Acme ",
    " ",
    "x",
    " (2020-04-27)",
    "Released 2020-04-27",
    ":release-date: 2025-04-25",
    "\t",
    "²",
    "[8.2.0] - ",
]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(_HEADING_PIECES), max_size=20).map("".join))
def test_release_headings_are_the_line_by_line_tests(text: str) -> None:
    """The headings found by substring search are those every line's tests found."""
    assert versioning.headings.release_headings.__wrapped__(text) == _old_release_headings(text)


@pytest.mark.parametrize("name", DEV_CORPORA)
def test_release_headings_are_the_line_by_line_tests_on_the_dev_corpora(dev_data: DevData, name: str) -> None:
    for text in dict.fromkeys(c["text"] for c in dev_data.corpus(name)):
        assert versioning.headings.release_headings.__wrapped__(text) == _old_release_headings(text)
