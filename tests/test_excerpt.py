import pytest

from ctxassembly import ConfigError, Excerpt
from ctxassembly.stages.excerpt import AGREED, AGREED_SHARE, MIN_TOKENS
from ctxassembly.text.structure import structure
from tests.conftest import chunks, context

pytestmark = pytest.mark.unit

FILLER = "\n\n".join(f"Paragraph {i} talks about templates, forms and widgets at some length." * 3 for i in range(8))
TEXT = FILLER + "\n\nThe default retry limit is 5 attempts.\n\n* item one\n  continues here\n\n" + FILLER


def test_a_large_chunk_is_cut_to_a_window_around_its_matching_block_verbatim():
    ctx = context("What is the default retry limit?", budget=200)
    out = Excerpt(0.4).run(chunks(("a", TEXT)), ctx)
    text = out[0].text
    assert "The default retry limit is 5 attempts." in text
    # the cap is the floor (MIN_TOKENS, 250): the match's neighbours fill it, the one after it first
    assert ctx.count_tokens(text) <= MIN_TOKENS
    assert text.index("The default retry limit") < text.index("* item one")
    assert text.startswith("[…]")
    assert text.endswith("[…]")
    for part in text.split("\n\n"):
        assert part == "[…]" or part in TEXT
    assert ctx.ledger[out[0].index].cut.by == ("excerpt",)
    note = ctx.report.notes[0]
    assert note["event"] == "excerpted"
    assert note["tokens_after"] < note["tokens_before"]
    # what the cut removed, by its first words (at most five paragraphs named)
    assert len(note["removed"]) == 5
    assert all(p.startswith("Paragraph ") and p.endswith("forms and widgets …") for p in note["removed"])


# A reference entry whose value shares no word with the question: it sits beside the
# sentence that matches, so the window around the match keeps it.
RST_SETTINGS = "\n\n".join(
    f".. setting:: opt_{i}\n\n``opt_{i}``\n{'~' * (len(str(i)) + 8)}\n\nDefault: {i}.\n\n"
    + ("The timeout in seconds when waiting for a new worker process to start up." if i == 7 else _filler)
    for i, _filler in enumerate(["Controls the size of the prefetch buffer used by each consumer thread."] * 12)
)
MD_SETTINGS = "\n\n".join(
    f"### `opt_{i}`\n\n"
    + (
        "The timeout in seconds when waiting for a new worker process to start up."
        if i == 7
        else "Controls the size of the prefetch buffer used by each consumer thread."
    )
    + f"\n\nDefault: `{i}0`"
    for i in range(12)
)


@pytest.mark.parametrize(("text", "value"), [(RST_SETTINGS, "Default: 7."), (MD_SETTINGS, "Default: `70`")])
def test_the_window_around_a_match_keeps_a_value_no_question_word_names(text: str, value: str) -> None:
    ctx = context("What is the timeout when waiting for a new worker process to start up?", budget=800)
    out = Excerpt().run(chunks(("a", text)), ctx)
    assert ctx.count_tokens(text) > MIN_TOKENS  # cut: the chunk is over its share (250 tokens here)
    assert "waiting for a new worker process" in out[0].text
    assert value in out[0].text


def test_small_chunks_stay_whole():
    cs = chunks(("a", "short text"))
    assert Excerpt().run(cs, context(budget=1000)) == cs


def test_bad_share():
    with pytest.raises(ConfigError, match="max_share"):
        Excerpt(0)
    with pytest.raises(ConfigError, match="agreed_share"):
        Excerpt(agreed_share=1.5)


def test_where_the_rankings_agree_on_the_head_a_chunk_keeps_the_larger_share() -> None:
    text = "\n\n".join(f"Paragraph {i} says what the retry limit does, in more words than needed." for i in range(20))
    ctx = context("What does the retry limit do?", budget=1000)
    assert 250 < ctx.count_tokens(text) <= 350  # over the 0.25 share, within the agreed 0.35
    assert ctx.count_tokens(Excerpt().run(chunks(("a", text)), ctx)[0].text) <= 250
    ctx = context("What does the retry limit do?", budget=1000)
    ctx.ledger.update_call(head_agreement=AGREED)
    assert Excerpt().run(chunks(("a", text)), ctx)[0].text == text
    assert ctx.report.notes == [
        {"stage": "excerpt", "event": "agreed_share", "share": AGREED_SHARE, "head_agreement": AGREED, "tokens": 350}
    ]
    ctx = context("What does the retry limit do?", budget=1000)
    ctx.ledger.update_call(head_agreement=AGREED)
    assert Excerpt(agreed_share=None).run(chunks(("a", text)), ctx)[0].text != text  # the option off
    ctx = context("What does the retry limit do?", budget=500)
    ctx.ledger.update_call(head_agreement=AGREED)
    Excerpt().run(chunks(("a", text)), ctx)
    assert not any(n["event"] == "agreed_share" for n in ctx.report.notes)  # the floor (250) is more than 35%
    # where the floor sets the cap (25% of 800 is 200, the floor 250), agreeing does not raise it to 280
    ctx = context("What does the retry limit do?", budget=800)
    ctx.ledger.update_call(head_agreement=AGREED)
    assert ctx.count_tokens(Excerpt().run(chunks(("a", text)), ctx)[0].text) <= MIN_TOKENS
    assert not any(n["event"] == "agreed_share" for n in ctx.report.notes)


def _pad(n: int) -> str:
    return "\n\n".join(f"Unrelated paragraph {i} about templates, widgets and forms in detail." * 2 for i in range(n))


# Synthetic samples of each format: the matched name must come with its value.
RST_DIRECTIVE = (
    _pad(6)
    + "\n\n.. attribute:: username\n\n    Required. 150 characters or fewer.\n\n"
    + ".. attribute:: email\n\n    Optional. An address.\n\n"
    + _pad(6)
)
RST_DEFLIST = _pad(6) + "\n\nusername\n\n    Required. 150 characters or fewer.\n\n" + _pad(6)
MD_ITEM = _pad(6) + "\n\n- `username`:\n\n  Required. 150 characters or fewer.\n\n" + _pad(6)
MD_HEADING_TABLE = (
    _pad(6)
    + "\n\n## Limits\n\n| field | limit |\n|---|---|\n| username | 150 characters |\n| email | 254 characters |\n\n"
    + _pad(6)
)
HTML = _pad(6) + "\n\n<dl>\n<dt>username</dt>\n<dd>Required. 150 characters or fewer.</dd>\n</dl>\n\n" + _pad(6)
CODE = _pad(6) + "\n\nSet the username limit like this:\n\n    USERNAME_MAX = 150\n\n" + _pad(6)
# a setting named by its heading, its value the one-line block right under it
RST_HEADING = (
    _pad(6)
    + "\n\n``username``\n------------\n\nDefault: ``150``\n\n"
    + "Accounts, forms and widgets check names against it when a user signs up or renames an account.\n\n"
    + _pad(6)
)
MD_HEADING = _pad(6) + "\n\n### username\n\nDefault: `150` characters\n\n" + _pad(6)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (RST_DIRECTIVE, "Required. 150 characters or fewer."),
        (RST_DEFLIST, "Required. 150 characters or fewer."),
        (MD_ITEM, "Required. 150 characters or fewer."),
        (MD_HEADING_TABLE, "| username | 150 characters |"),
        (HTML, "<dd>Required. 150 characters or fewer.</dd>"),
        (CODE, "USERNAME_MAX = 150"),
        (RST_HEADING, "Default: ``150``"),
        (MD_HEADING, "Default: `150` characters"),
    ],
    ids=["rst-directive", "rst-deflist", "md-item", "md-table", "html-dl", "code-block", "rst-heading", "md-heading"],
)
def test_a_matched_name_keeps_its_value(text: str, value: str) -> None:
    ctx = context("How long can a username be?", budget=400)
    out = Excerpt(0.25, min_tokens=60).run(chunks(("a", text)), ctx)
    assert ctx.ledger[out[0].index].cut.by == ("excerpt",)
    assert value in out[0].text
    assert ctx.count_tokens(out[0].text) <= 100 + 10


SETTINGS = "".join(
    f".. setting:: {name}\n\n``{name}``\n{'-' * (len(name) + 4)}\n\nDefault: ``{value}``\n\n{about}\n\n"
    for name, value, about in (
        ("CACHE_ALIAS", "'default'", "If you use cache-based storage, this selects the cache to use for it."),
        ("CACHE_AGE", "86400`` (1 day, in seconds", "The age of cached pages, in seconds."),
        ("CACHE_DOMAIN", "None", "The domain to use for cache cookies. Set this to a string such as the site's."),
    )
)


def test_fit_never_keeps_a_named_heading_without_its_one_line_value() -> None:
    # select's fill cuts the chunk to what is left of the budget: whatever the room, the
    # heading that names the setting comes with the line that gives its value
    ctx = context("What is the default value of CACHE_AGE?", budget=1000)
    c = chunks(("a", "Cache\n=====\n\nSettings for the cache.\n\n" + SETTINGS))[0]
    for limit in range(60, 100, 2):
        cut = Excerpt(fit_min=20).fit(c, limit, ctx)
        if cut is not None and "``CACHE_AGE``\n" in cut.text:
            assert "Default: ``86400``" in cut.text, limit


def test_fit_cuts_to_the_limit_or_declines() -> None:
    ctx = context("How long can a username be?", budget=1000)
    c = chunks(("a", RST_DIRECTIVE))[0]
    cut = Excerpt().fit(c, 80, ctx)
    assert cut is not None
    assert "Required. 150 characters or fewer." in cut.text
    assert ctx.count_tokens(cut.text) <= 80 + 10
    assert Excerpt().fit(c, 20, ctx) is None  # below fit_min: not worth a fragment
    assert Excerpt().fit(chunks(("b", _pad(8)))[0], 80, context("retry limit?")) is None  # nothing matches


LIST_SECTION = (
    "### Per-item options\n\n"
    "The options which can be applied to individual items in a list file are:\n\n"
    "- `--weight-limit` (for the checking mode)\n- `--colour-scheme` (for the output)\n\n"
    "## Referring to other list files\n\n"
    "If you wish, you can refer to other list files in a list file, like this:\n\n"
    "```\n-r more_items.txt\n```\n\n"
    "## Using environment variables in list files\n\n"
    "A list file may use environment variables; each is expanded when the file is read, "
    "before any other option is applied to the items it lists.\n"
)


def test_a_room_below_fit_min_gets_no_fragment_that_would_cut_the_answer_out() -> None:
    # In 75 tokens the fill kept the lead-in ("The options ... are:") and the other headings
    # that share the question's words, not the list it leads into: the gold chunk kept,
    # its answer cut. Below FIT_MIN the chunk is left out instead, and another may fill.
    from ctxassembly.stages.excerpt import FIT_MIN

    ctx = context("Which options can be applied to an individual item in a list file?", budget=500)
    c = chunks(("a", LIST_SECTION))[0]
    old = Excerpt(fit_min=60).fit(c, 75, ctx)
    assert old is not None
    assert "are:" in old.text
    assert "--weight-limit" not in old.text
    assert FIT_MIN > 75
    assert Excerpt().fit(c, 75, ctx) is None
    kept = Excerpt().fit(c, FIT_MIN, ctx)
    assert kept is not None
    assert "--weight-limit" in kept.text


HELP = (
    "Reporting:\n"
    + "".join(f"      --opt{i}=N             Option number {i} does things.\n" for i in range(12))
    + "      --durations-min=N     Minimal duration in seconds for inclusion in slowest\n"
    + "                            list. Default: 0.005.\n"
    + "".join(f"      --more{i}              More option {i} text here.\n" for i in range(12))
)


def test_a_help_listing_is_cut_by_option_each_with_its_description() -> None:
    tree = structure(HELP)
    assert len(tree) > 10  # one block per option line, not one block for the listing
    ctx = context("What is the minimal duration for --durations-min?", budget=400)
    out = Excerpt(0.25, min_tokens=60).run(chunks(("a", _pad(4) + "\n\n" + HELP)), ctx)
    assert "--durations-min=N     Minimal duration in seconds for inclusion in slowest\n" in out[0].text
    assert "list. Default: 0.005." in out[0].text


# A changelog entry: a long list item (prose, not a name) and its indented continuation.
CHANGELOG = (
    "Removals\n--------\n\n"
    "- #101: The ``indirect``, ``ids`` and ``scope`` arguments of ``parametrize()`` are now keyword-only; "
    "passing them by position raises a ``TypeError`` that names the argument, and the type annotations "
    "have always declared them so.\n\n"
    "  Passing them positionally was a common source of confusing errors, e.g. a tuple of values landed in "
    "``indirect`` and failed with an unrelated message much later; such mistakes now fail at once, at the "
    "call, with an understandable error that names the argument and the position it was given in.\n\n"
    "- #102: Something else entirely was removed from the command line options of the runner.\n"
)


def test_a_long_item_is_kept_without_its_continuation_when_both_do_not_fit() -> None:
    ctx = context("Can the indirect, ids and scope arguments of parametrize still be passed positionally?")
    c = chunks(("a", CHANGELOG))[0]
    item = ctx.count_tokens(CHANGELOG.split("\n\n")[1])
    cut = Excerpt(fit_min=20).fit(c, item + 25, ctx)  # room for the item, not for item and continuation
    assert cut is not None
    assert "are now keyword-only" in cut.text  # the item that answers, not its continuation alone


def test_fit_declines_a_fragment_without_the_best_matching_block() -> None:
    ctx = context("Which Python versions does release 5.2 support?")
    table = "\n".join(f"{v}            3.10, 3.11, 3.12, 3.13 (added in {v}.8)" for v in ("4.2", "5.0", "5.1", "5.2"))
    text = (
        "What Python version can I use?\n==============================\n\n"
        f"============== ===============\nRelease        Python versions\n============== ===============\n{table}\n"
        "============== ===============\n\n"
        "You can find the latest supported micro version for each series on the download page.\n"
    )
    c = chunks(("a", text))[0]
    # 80 tokens hold the heading and the last paragraph, not the table that answers
    assert Excerpt().fit(c, 80, ctx) is None
    with_table = Excerpt().fit(c, 160, ctx)
    assert with_table is not None
    assert "3.13 (added in 5.2.8)" in with_table.text


# A code example under its directive line; the prose after it is what the page says.
CODE_EXAMPLE = (
    ".. code-block:: python\n\n"
    "    # contents of test_app.py, a simple test for our API retrieval\n"
    "    # import requests for the purposes of monkeypatching\n"
    "    import requests\n\n"
    "    # our app.py that includes the get_json() function\n"
    "    # this is the previous code block example\n"
    "    import app\n\n"
    "    def test_get_json(monkeypatch):\n"
    "        # apply the monkeypatch for requests.get to mock_get\n"
    '        monkeypatch.setattr(requests, "get", mock_get)\n'
    '        result = app.get_json("https://fakeurl")\n'
    '        assert result["mock_key"] == "mock_response"\n\n'
    "``monkeypatch`` applies the mock for ``requests.get`` with our ``mock_get`` function.\n"
    "The ``mock_get`` function returns an instance of the ``MockResponse`` class, which\n"
    "has a ``json()`` method defined to return a known testing dictionary and does not\n"
    "require any outside API connection.\n"
)


def test_fit_declines_a_fragment_matched_only_in_a_markup_line() -> None:
    # "python" matches the code block's language, not anything the page says about Python
    ctx = context("Which Python versions does the tool require?")
    c = chunks(("a", CODE_EXAMPLE))[0]
    # room for the directive line and some of its code, not for the prose that matches
    # ("require"): the code alone is not a fragment about the question
    for limit in (60, 100, 150):
        assert Excerpt(fit_min=20).fit(c, limit, ctx) is None
    # where only the markup line matches, it is the name the chunk is about (and kept)
    cut = Excerpt(fit_min=20).fit(c, 60, context("Is it Python?"))
    assert cut is not None
    assert cut.text.startswith(".. code-block:: python")


# A setting with its values listed, then the same example in two syntaxes (tabs).
SETTING = (
    ".. confval:: console_output_style\n"
    '   :type: ``"classic" | "progress" | "count" | "times" | "progress-even-when-capture-no"``\n'
    '   :default: ``"progress"``\n\n'
    "   Sets the console output style while running tests:\n\n"
    "   * ``classic``: classic pytest output.\n"
    "   * ``progress``: like classic pytest output, but with a progress indicator.\n"
    "   * ``progress-even-when-capture-no``: allows the use of the progress indicator even when ``capture=no``.\n"
    "   * ``count``: like progress, but shows progress as the number of tests completed instead of a percent.\n"
    "   * ``times``: show tests duration.\n\n"
    "   You can fallback to ``classic`` if you prefer or\n"
    "   the new mode is causing unexpected problems:\n\n"
    "   .. tab:: toml\n\n"
    "       .. code-block:: toml\n\n"
    "            [pytest]\n"
    '            console_output_style = "classic"\n\n'
    "   .. tab:: ini\n\n"
    "       .. code-block:: ini\n\n"
    "            [pytest]\n"
    "            console_output_style = classic\n"
)


def test_fit_keeps_one_of_two_examples_that_repeat_the_same_words() -> None:
    ctx = context("Which console_output_style value shows how long each test took?")
    c = chunks(("a", SETTING))[0]
    # 130 tokens hold the setting, its lead-in and both examples, or one example and the
    # paragraph that says when to use it: the second example says nothing new
    cut = Excerpt().fit(c, 130, ctx)
    assert cut is not None
    assert cut.text.count("console_output_style = ") == 1
    assert "You can fallback to ``classic``" in cut.text
    # with room for the values, they come before any example
    cut = Excerpt().fit(c, 150, ctx)
    assert cut is not None
    assert "* ``times``: show tests duration." in cut.text


LONG_HEAD = "| Option | Default | Description |\n|---|---|---|"
FEW_HEAD = "Option | Default | Description\n--- | --- | ---"
LONG_ROWS = "\n".join(
    f"| `opt{i}` | `{i}0` | What option {i} controls, at some length, for every target we build. |" for i in range(14)
)
# no outer pipes, few rows: one blank-line block of eight lines or less
FEW_ROWS = "\n".join(
    f"`opt{i}` | `{i}0` | What option {i} controls, at some length, for every target we build "
    "and every platform we ship, with the caveats each of them brings along, the defaults it "
    "overrides, the files it reads and the warnings it prints when a value is out of range."
    for i in range(5)
)


@pytest.mark.parametrize(
    ("header", "rows", "question", "row"),
    [
        (LONG_HEAD, LONG_ROWS, "What is the default of opt11?", "| `opt11` | `110` |"),
        (FEW_HEAD, FEW_ROWS, "What controls the caveats of opt4?", "`opt4` | `40` |"),
    ],
    ids=["long-table", "few-long-rows-no-outer-pipes"],
)
def test_a_table_too_large_for_its_share_keeps_the_asked_row_under_its_header(
    header: str, rows: str, question: str, row: str
) -> None:
    text = f"## Options\n\n{header}\n{rows}\n"
    ctx = context(question, budget=600)
    out = Excerpt().run(chunks(("a", text)), ctx)
    assert ctx.count_tokens(text) > 200  # over its share: cut
    kept = out[0].text
    assert row in kept
    assert kept.startswith(f"## Options\n\n{header}")
    assert ctx.count_tokens(kept) <= 200 + 10


def test_a_cut_keeps_a_code_fence_whole_or_leaves_it_out() -> None:
    # blank lines inside a fence do not split it: half a fence kept alone (its matching
    # end without the opening line) would leave the rest of the context rendered as code
    setup = "\n".join(f"import module_{i}  # widgets and forms" for i in range(6))
    fence = f"```python\n{setup}\n\nsettings.retry_limit = 5  # the default retry limit\n```"
    text = FILLER + "\n\nSet it in code:\n\n" + fence + "\n\n" + FILLER
    ctx = context("What is the default retry limit?", budget=300)
    out = Excerpt(0.4).run(chunks(("a", text)), ctx)
    assert ctx.count_tokens(out[0].text) < ctx.count_tokens(text)  # cut
    assert fence in out[0].text
    assert sum(line.startswith("```") for line in out[0].text.splitlines()) == 2


# Tabs of one example in several shells: each tab label and its code-block line are markup
# alone, and the commands sit two levels under them.
TABS = (
    _pad(3)
    + "\n\nSet the variable in your shell before you start the worker:\n\n.. tabs::\n\n"
    + "".join(
        f"   .. tab:: {shell}\n\n      .. code-block:: text\n\n         {command}\n         $ worker start\n\n"
        for shell, command in (
            ("Bash", "$ export WORKER_QUEUE=high"),
            ("Fish", "$ set -x WORKER_QUEUE high"),
            ("PowerShell", "> $env:WORKER_QUEUE = 'high'"),
        )
    )
    + _pad(3)
)


def test_a_directive_line_is_never_kept_without_the_body_it_introduces() -> None:
    ctx = context("How do I set the worker queue variable in the fish shell?", budget=400)
    out = Excerpt(0.25, min_tokens=60).run(chunks(("a", TABS)), ctx)
    text = out[0].text
    assert ctx.ledger[out[0].index].cut.by == ("excerpt",)
    assert "$ set -x WORKER_QUEUE high" in text  # the matched tab keeps its command
    lines = [ln.strip() for ln in text.split("\n") if ln.strip()]
    for i, line in enumerate(lines):  # no directive line stands right before a gap or at the end
        if line.startswith(".. ") and "::" in line:
            assert i + 1 < len(lines), text
            assert lines[i + 1] != "[…]", text


# A section whose one paragraph is larger than a chunk's share: the heading alone fits it.
EXTENSIONS = "## Extensions\n\n" + "\n".join(
    f"The extension number {i} adds syntax for tables, footnotes and admonitions to the parser." for i in range(40)
)


def test_a_cut_that_would_keep_headings_and_gaps_alone_leaves_the_chunk_whole() -> None:
    ctx = context("Which extensions add tables?", budget=400)
    assert ctx.count_tokens(EXTENSIONS) > 100  # its one passage is larger than the share
    both = chunks(("a", EXTENSIONS), ("b", "Tables come from the tables extension."))
    out = Excerpt(0.25, min_tokens=60).run(both, ctx)
    # not "## Extensions\n\n[…]", a fragment that shows nothing: whole, as when nothing fits
    assert [c.text for c in out] == [EXTENSIONS, "Tables come from the tables extension."]
    assert ctx.ledger[out[0].index].cut is None
    assert not ctx.report.fates


def test_fit_never_returns_a_fragment_of_headings_markup_and_gaps() -> None:
    # only the title matches the question, and what is under it is larger than the room
    body = "\n".join(f"Line {i} of a long description of what each call does in detail." for i in range(30))
    text = f"===================\nOperation Reference\n===================\n\n{body}\n\n{body}"
    ctx = context("Where is the operation reference?")
    c = chunks(("a", text))[0]
    for limit in (20, 40, 80):
        assert Excerpt(fit_min=10).fit(c, limit, ctx) is None  # not the title over a gap
    frame = "## Extensions\n\n[…]\n\n.. note::\n\n[…]\n\n}\n```"  # an earlier cut: nothing but its frame
    assert Excerpt(fit_min=10).fit(chunks(("b", frame))[0], 40, context("Which extensions add tables?")) is None


def test_the_first_chunk_of_the_ranking_stays_whole_within_a_share_of_its_own() -> None:
    from ctxassembly.stages.excerpt import TOP_SHARE

    text = "\n\n".join(f"Paragraph {i} says what the retry limit does, in more words than needed." for i in range(17))
    ctx = context("What does the retry limit do?", budget=1000)
    size = ctx.count_tokens(text)
    assert 250 < size <= TOP_SHARE * 1000  # over the 0.25 share, within the first chunk's
    out = Excerpt().run(chunks(("a", text), ("b", text.replace("Paragraph", "Section"))), ctx)
    assert out[0].text == text  # the first stays whole
    assert ctx.count_tokens(out[1].text) <= 250  # the second is cut to the share
    assert {"stage": "excerpt", "event": "top_share", "id": "a", "index": 0, "share": TOP_SHARE, "tokens": size} in (
        ctx.report.notes
    )
    ctx = context("What does the retry limit do?", budget=1000)
    assert Excerpt(top_share=None).run(chunks(("a", text)), ctx)[0].text != text  # the option off
    # larger than its share, the first chunk is cut to the cap like any other
    longer = text + "\n\n" + text.replace("Paragraph", "Part")
    ctx = context("What does the retry limit do?", budget=1000)
    assert ctx.count_tokens(Excerpt().run(chunks(("a", longer)), ctx)[0].text) <= 250
    with pytest.raises(ConfigError, match="top_share"):
        Excerpt(top_share=0)
