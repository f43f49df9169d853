import pytest

from ctxassembly.text.structure import UNDERLINE, blocks, definitions, indent, is_mark, lines_with_offsets, structure

pytestmark = pytest.mark.unit

DIRECTIVE = (
    "Some prose about users.\n\n.. attribute:: username\n\n    Required. 150 characters or fewer.\n\n"
    ".. attribute:: email\n\n    Optional. An address.\n"
)


def test_blocks_keep_list_items_whole():
    assert "* item one\n  continues here" in blocks("Some prose.\n\n* item one\n  continues here\n\nMore prose.")


def test_a_code_fence_is_one_block_however_many_blank_lines_it_holds() -> None:
    text = (
        "## Install\n\nRun this:\n\n```console\n$ pip install x\n\n$ x --version\n```\n\n"
        "~~~\nmore = 1\n\nagain = 2\n~~~\n\nDone.\n\n```{versionadded} 1.3\n\n```\n\nAfter."
    )
    parts = [text[b.start : b.end] for b in structure(text)]
    assert parts == [
        "## Install",
        "Run this:",
        "```console\n$ pip install x\n\n$ x --version\n```",
        "~~~\nmore = 1\n\nagain = 2\n~~~",
        "Done.",
        "```{versionadded} 1.3\n\n```",
        "After.",
    ]
    assert not any(b.is_heading for b in structure(text)[1:])  # a closing fence is no title's underline
    assert blocks(text) == parts
    # a fence the chunk's end cuts off runs to the end of the text
    open_end = "Intro.\n\n```\ncode\n\nmore code"
    assert [open_end[b.start : b.end] for b in structure(open_end)] == ["Intro.", "```\ncode\n\nmore code"]


def test_a_rest_adornment_of_tildes_or_backticks_opens_no_fence() -> None:
    text = "Title\n~~~~~\n\nProse one.\n\n```\nOver\n```\n\nProse two.\n\nSub\n~~~\n\nProse three."
    parts = [text[b.start : b.end] for b in structure(text)]
    assert parts == ["Title\n~~~~~", "Prose one.", "```\nOver\n```", "Prose two.", "Sub\n~~~", "Prose three."]
    assert [b.is_heading for b in structure(text)] == [True, False, False, False, True, False]
    overline = "~~~~~\nTitle\n~~~~~\n\nProse."  # a reST title over and under a tilde line
    assert [(overline[b.start : b.end], b.is_heading) for b in structure(overline)] == [
        ("~~~~~\nTitle\n~~~~~", True),
        ("Prose.", False),
    ]


@pytest.mark.parametrize(
    "mark",
    [
        ".. versionadded:: 22.2\n   Experimental support, behind a flag.",  # reST
        "```{versionadded} 22.2\nExperimental support, behind a flag.\n```",  # MyST, backtick fence
        ":::{deprecated} 22.2\nUse the other store.\n:::",  # MyST, colon fence
    ],
)
def test_a_version_mark_under_a_heading_goes_with_it_in_either_syntax(mark: str) -> None:
    text = f"## Using system stores\n\n{mark}\n\nIt is possible to use the system store instead."
    tree = structure(text)
    assert [text[tree[j].start : tree[j].end] for j in tree[0].marks] == [mark]


def test_structure_owners_and_first_child() -> None:
    tree = structure(DIRECTIVE)
    texts = [DIRECTIVE[b.start : b.end] for b in tree]
    name = texts.index(".. attribute:: username")
    value = texts.index("    Required. 150 characters or fewer.")
    assert tree[value].owner == name
    assert tree[name].first_child == value
    md = structure("Title\n=====\n\nIntro.\n\nMore.")
    assert md[0].is_heading
    assert md[1].heading == 0
    assert md[2].heading == 0


def test_prose_and_tables_are_not_split() -> None:
    prose = "\n".join(f"Line {i} of one long wrapped paragraph about limits." for i in range(12))
    assert len(structure(prose)) == 1
    table = "\n".join(["+----+----+", *[f"| a{i} | b{i} |\n+----+----+" for i in range(6)]])
    assert len(structure(table)) == 1


PIPE_TABLE = "## Options\n\n| Option | Default | Description |\n|---|:---:|---|\n" + "\n".join(
    f"| `opt{i}` | `{i}0` | What option {i} controls, at some length, for every target. |" for i in range(10)
)


def test_a_long_pipe_table_is_read_by_row_under_its_header() -> None:
    tree = structure(PIPE_TABLE)
    texts = [PIPE_TABLE[b.start : b.end] for b in tree]
    assert texts[1] == "| Option | Default | Description |\n|---|:---:|---|"
    assert texts[2:] == PIPE_TABLE.split("\n")[4:]
    assert all(b.owner == 1 and b.heading == 0 for b in tree[2:])
    assert tree[1].first_child == 2
    one_row = "| a | b |\n|---|---|\n| 1 | 2 |"  # a table of one row stays one block
    assert len(structure(one_row)) == 1


def test_a_table_of_few_long_rows_is_read_by_row_too() -> None:
    # no outer pipes, three rows of prose: one blank-line block no share holds whole
    table = (
        "Option | Type | Default | Description\n------ | ---- | ------- | -----------\n"
        "`css_class` | string | `''` | Class name applied to the wrapper element of the code.\n"
        "`preserve_tabs` | bool | `False` | Experimental feature that preserves tabs in fenced code blocks.\n"
        "`relaxed_headers` | bool | `False` | Enable relaxed headers, more forgiving of invalid content."
    )
    tree = structure(table)
    assert [table[b.start : b.end] for b in tree[1:]] == table.split("\n")[2:]
    assert all(b.owner == 0 for b in tree[1:])


@pytest.mark.parametrize(
    ("line", "is_underline"),
    [("=====", True), ("---", True), ("~~~~  ", True), ("--", False), ("=-=-=", False), ("Title", False)],
)
def test_one_underline_pattern_reads_every_rest_heading_mark(line: str, is_underline: bool) -> None:
    assert bool(UNDERLINE.match(line)) is is_underline


def test_indent_counts_spaces_and_tabs_only() -> None:
    assert indent("    x") == 4
    assert indent("\t  x") == 3
    assert indent("x  ") == 0


def test_lines_with_offsets_point_at_each_line_start() -> None:
    text = "a\nbb\r\n\nccc"
    lines, offs = lines_with_offsets(text)
    assert lines == ["a\n", "bb\r\n", "\n", "ccc"]
    assert offs == [0, 2, 6, 7, 10]
    assert all(text[o:].startswith(ln) for o, ln in zip(offs, lines, strict=False))


# definitions(): the names a text defines, in every common doc format (synthetic samples)
@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Retry limit\n===========\n\nSome prose.", "Retry limit"),  # reST underline
        ("=====\nTitle\n=====\n\nbody", "Title"),  # reST overline (the title line itself)
        ("## max_retries\n\nHow often.", "max_retries"),  # Markdown heading
        (".. option:: --max-retries N\n\n   How often.", "--max-retries N"),  # directive argument
        (":param timeout: seconds to wait", "param timeout"),  # field list / role
        ("max_retries\n    How often to retry.", "max_retries"),  # definition-list term
        ("* ``fast``: skip the slow checks.", "``fast``"),  # item led by a literal name
        ("- **strict** - fail on warnings", "**strict**"),  # item led by a bold name
        ("| max_retries | 5 | how often |", "max_retries"),  # pipe table first cell
        ("Option | Default\n--- | ---\n`max_retries` | 5", "`max_retries`"),  # no outer pipes
        ("<dl><dt>max_retries</dt><dd>5</dd></dl>", "max_retries"),  # HTML definition list
        ("<h2>Retry limit</h2><p>5</p>", "Retry limit"),  # HTML heading
    ],
)
def test_definitions_finds_the_defined_name(text: str, name: str) -> None:
    assert name in definitions(text).splitlines()


def test_definitions_ignores_prose_and_code_lines() -> None:
    text = "The limit is five.\nIt applies to every call.\n\n    def retry():\n        pass\n"
    assert definitions(text) == ""
    # a pipe in prose, or a shell pipeline, is no table without its rule line
    assert definitions("Pipe it | grep x to filter the output.\nls | wc -l") == ""


@pytest.mark.parametrize(
    ("block", "mark"),
    [
        (".. code-block:: python", True),
        ("   .. tab:: toml", True),
        (":since: 2.1", True),
        ("> **Note**", True),
        ("[!NOTE]", True),
        (".. confval:: console_output_style\n   :type: ``str``", False),  # a name with its fields
        ("``monkeypatch`` applies the mock.", False),
        ("Requires Python 3.9 or later.", False),
    ],
)
def test_is_mark_reads_one_line_of_markup_alone(block: str, mark: bool) -> None:
    assert is_mark(block) is mark


def test_a_closing_fence_under_a_short_code_line_is_no_title_underline() -> None:
    # "x = 1" over the closing ``` read as a reST title over its underline: a defined name
    text = "## Install\n\n```python\nimport x\nx = 1\n```\n\nThen run it.\n"
    assert definitions(text).splitlines() == ["Install"]
    # a reST title over a backtick or tilde adornment is still a title
    assert definitions("Usage\n~~~~~\n\nText.\n").splitlines() == ["Usage"]
    assert definitions("Usage\n`````\n\nText.\n").splitlines() == ["Usage"]


def test_unwrapped_joins_a_wrapped_sentence_position_for_position():
    from ctxassembly.text.structure import unwrapped

    text = (
        "    Models must answer that\n    Acme enforces a limit.\n    Next sentence.\n\n"
        "-   An item that goes\n    on past its bullet.\n"
        "1. First\n2. Second\n"
        "Title here\n==========\nBody text\n"
        "code(a,\n        b)\n"
    )
    one = unwrapped(text)
    assert len(one) == len(text)
    assert "must answer that     Acme enforces" in one  # a sentence wrapped at its indent
    assert "a limit.\n    Next" in one  # a sentence's end stays a line end
    assert "goes     on past" in one  # past the bullet
    assert "First\n2. Second" in one  # a numbered item is no wrap
    assert "here\n=====" in one  # nor is an underline
    assert "=\nBody" in one
    assert "(a,\n        b)" in one  # another column: code, not prose
    para = unwrapped(text, sentences=False)
    assert "a limit.     Next sentence." in para  # a paragraph: after a sentence's end too
    assert "=\nBody" in para  # an underline wraps nothing
    assert unwrapped("one line") == "one line"
