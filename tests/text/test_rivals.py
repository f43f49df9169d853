"""Rival entries: sibling definitions in one sentence template (ctxassembly.text.rivals),
and what the excerpt stage does with the loser, through the whole Assembler."""

import pytest

from ctxassembly import Assembler, Excerpt
from ctxassembly.stages.excerpt import block_scores
from ctxassembly.text.rivals import entry_blocks, losers
from ctxassembly.text.structure import structure
from tests.conftest import chunks, context, fates

pytestmark = pytest.mark.unit

# a reST reference page of an invented product: two options described in the same words
OPTIONS = """\
.. option:: Grid.page_size

    Set ``page_size`` to control how many rows appear on each paginated
    report page. By default, this is set to ``50``.

.. option:: Grid.export_limit

    Set ``export_limit`` to control how many rows can appear on an "Export
    all" report page. The grid offers the export only when the total row count
    is at most this setting. By default, this is set to ``500``.
"""

# two exceptions in one template, a label line before each body (no indentation)
ERRORS = """\
.. exception:: LockedError

Raised to refuse the removal of a record when using :attr:`store.LOCK`.
:exc:`LockedError` is a subclass of :exc:`StoreError`.

.. exception:: GuardedError

Raised to refuse the removal of a record when using :attr:`store.GUARD`.
:exc:`GuardedError` is a subclass of :exc:`StoreError`.
"""

# Markdown: one section per setting
MARKDOWN = """\
## cache_ttl

How long a cached page is kept before it is fetched again. The default value is 300 seconds.

## lock_ttl

How long a lock on a cached page is kept before it is released. The default value is 30 seconds.
"""


def _losers(texts: list[str], question: str) -> list[tuple[str, str]]:
    trees = [structure(t) for t in texts]
    flat = [t[b.start : b.end] for t, tree in zip(texts, trees, strict=True) for b in tree]
    out = losers(texts, trees, block_scores(flat, question), question)

    def first_line(address: tuple[int, int]) -> str:
        b = trees[address[0]][address[1]]
        return texts[address[0]][b.start : b.end].split("\n")[0].strip()

    return [(first_line(loser), first_line(winner)) for loser, winner in out.items()]


def test_the_sibling_that_matches_the_question_less_loses():
    out = _losers([OPTIONS], "How many rows does the grid show on each report page by default?")
    assert out == [
        (
            'Set ``export_limit`` to control how many rows can appear on an "Export',
            "Set ``page_size`` to control how many rows appear on each paginated",
        )
    ]


def test_the_sibling_the_question_names_wins_whatever_the_scores():
    out = _losers([ERRORS], "Which option refuses the removal of a record by raising GuardedError?")
    assert out == [
        (
            "Raised to refuse the removal of a record when using :attr:`store.LOCK`.",
            "Raised to refuse the removal of a record when using :attr:`store.GUARD`.",
        )
    ]


def test_markdown_sections_are_entries_too():
    out = _losers([MARKDOWN], "By default, how long is a cached page kept before it is fetched again?")
    assert [loser for loser, _ in out] == [
        "How long a lock on a cached page is kept before it is released. The default value is 30 seconds."
    ]


def test_two_versions_of_one_entry_are_no_rivals():
    # the same entry in two releases differs in its value and its directive's options:
    # the version stage's business, never a near miss to cut
    entry = (
        ".. option:: Grid.page_size\n    :since: {}\n\n    Set ``page_size`` to control how many rows appear"
        " on each paginated\n    report page. By default, this is set to ``{}``.\n"
    )
    old, new = entry.format("1.0", 20), entry.format("2.0", 50)
    assert _losers([old, new], "How many rows appear on each report page by default?") == []


def test_a_near_tie_decides_nothing():
    # neither the question's words nor a slot tell the two apart: both stay
    assert _losers([ERRORS], "What is raised to refuse the removal of a record?") == []


def test_a_lead_in_every_entry_shares_is_no_template():
    # the sentences that match are the examples' lead-ins, which share no question word:
    # two ways to configure the tool, not two values of one setting (before, the slot of
    # the second lead-in held "sorter", a question word, and the profile section lost)
    guide = (
        "#### Profile\n\nSince version 5.0.0, the sorter supports profiles so that it agrees with common"
        " code styles. You can set the profile in any config file. Below, an example for `project.toml`:\n\n"
        '```toml\nprofile = "ours"\n```\n\n'
        "#### Custom settings\n\nWith a sorter older than 5.0.0, tweak the sorter settings by hand so that"
        " they agree with ours. Below, an example for `.sorter.cfg`:\n\n```\nmulti_line_output = 3\n```\n"
    )
    assert _losers([guide], "How do I configure the sorter so that it agrees with our code style?") == []


def test_code_is_no_template():
    code = "".join(
        f".. option:: {name}\n\n    >>> grid.page_size = {n} and the rows on each report page\n\n"
        for name, n in (("a", 50), ("b", 60))
    )
    assert _losers([code], "How many rows on each report page?") == []


def test_the_loser_leaves_with_its_name_and_everything_under_it():
    tree = structure(OPTIONS)
    body = next(j for j, b in enumerate(tree) if "export_limit`` to" in OPTIONS[b.start : b.end])
    gone = {OPTIONS[tree[j].start : tree[j].end].split("\n", maxsplit=1)[0] for j in entry_blocks(tree, body)}
    assert gone == {
        ".. option:: Grid.export_limit",
        '    Set ``export_limit`` to control how many rows can appear on an "Export',
    }


# two attributes in one template; the question asks for the second's exception
GUARDED = "Which option refuses the removal of a record by raising GuardedError?"
ENTRY = ".. attribute:: {}\n\n    Refuse the removal of a record by raising :exc:`{}`, a subclass of :exc:`StoreError`."


def test_excerpt_drops_a_chunk_that_is_only_a_rival_and_cuts_a_rival_out_of_another():
    guard = ENTRY.format("GUARD", "GuardedError") + "\n"
    lock = ENTRY.format("LOCK", "LockedError") + (
        "\n    Unlike :attr:`GUARD`, the removal goes ahead when the same operation removes the\n    owner too.\n"
    )
    ctx = context(GUARDED, budget=1000)
    out = Excerpt().run(chunks(("guard", guard), ("lock", lock), ("errors", ERRORS)), ctx)
    assert [c.id for c in out] == ["guard", "errors"]
    assert "LockedError" not in out[1].text
    assert "GuardedError" in out[1].text
    assert fates(ctx) == {1: "near_miss"}
    assert ctx.report.fate(1).detail == {"rival_of": "guard"}
    rivals = [n for n in ctx.report.notes if n["event"] == "rival"]
    assert [(n["id"], n["rival_of"]) for n in rivals] == [("lock", "guard"), ("errors", "errors")]
    assert [n["event"] for n in ctx.report.notes if n["id"] == "errors"] == ["rival", "rival_removed"]


def test_through_the_assembler_the_near_miss_value_is_not_shown():
    # the retriever's order puts the near miss first; the context shows one default, the
    # one asked for, and the report says where the other went
    other = "Grid reports\n============\n\nA report lists the rows of a grid, page by page.\n"
    res = Assembler().run(
        "How many rows does the grid show on each report page by default?",
        [{"id": "ref", "text": OPTIONS}, {"id": "intro", "text": other}],
        budget=500,
    )
    assert "``50``" in res.text
    assert "``500``" not in res.text
    assert any(n["event"] == "rival" and n["id"] == "ref" for n in res.report.notes)


def test_a_chunk_left_with_markup_alone_once_its_rival_leaves_is_a_near_miss():
    guard = ENTRY.format("GUARD", "GuardedError") + "\n"
    # a markup line that matches the question over the losing entry: once the entry leaves,
    # the chunk would show ".. index:: removal" over a gap
    lock = ".. index:: removal\n\n" + ENTRY.format("LOCK", "LockedError")
    ctx = context(GUARDED, budget=1000)
    out = Excerpt().run(chunks(("guard", guard), ("lock", lock)), ctx)
    assert [c.id for c in out] == ["guard"]
    assert fates(ctx) == {1: "near_miss"}
