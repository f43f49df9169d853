import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxassembly import ConfigError
from ctxassembly.chunk import Chunk
from ctxassembly.data import load_corpus
from ctxassembly.render import Renderer
from ctxassembly.tokens import count_joined, get_counter, tiktoken_encoding

pytestmark = pytest.mark.unit


def test_default_is_real_cl100k():
    count = get_counter()
    enc = tiktoken_encoding("cl100k_base")
    assert enc.name.startswith("cl100k_base")
    assert count("hello world") == 2
    assert count("<|endoftext|>") > 1  # special tokens in chunk text are plain text


def test_a_tiktoken_encoding_and_a_callable_are_accepted():
    assert get_counter(tiktoken_encoding())("hello world") == 2
    assert get_counter(len)("abc") == 3


def test_an_hf_tokenizer_counts_without_special_tokens(minilm_path):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(minilm_path)
    assert get_counter(tok)("hello world") == 2


@pytest.mark.parametrize("bad", [3.5, object()])
def test_bad_tokenizers_are_rejected(bad):
    with pytest.raises(ConfigError, match="tokenizer must be"):
        get_counter(bad)


def test_a_callable_returning_garbage_is_caught():
    with pytest.raises(ConfigError, match="non-negative int"):
        get_counter(lambda t: -1)("x")


def test_unknown_encoding_names_itself():
    with pytest.raises(ConfigError, match="'nope'"):
        get_counter("nope")


def test_letter_runs_never_exceed_the_cl100k_count():
    from ctxassembly.data import load_corpus
    from ctxassembly.tokens import letter_runs

    count = get_counter()
    odd = [
        "",
        "   ",
        "it's they'll we've I'M",
        "camelCaseWords and snake_case_words",
        "a1b2c3 x.y.z",
        "====\n----\n",
        "don'tstop",
        "Ünïcödé text",
        "MiXeD CaSe\tTabs\r\nCRLF",
        "'s'S'd'll'''",
    ]
    texts = [c["text"] for c in load_corpus()] + odd
    assert all(letter_runs(t) <= count(t) for t in texts)
    assert get_counter().lower_bound is letter_runs  # the default counter carries the bound
    assert get_counter(len).lower_bound is None  # a callable's tokens are unknown


_JOIN_PIECES = [
    "\n",
    "\n\n",
    " ",
    "  ",
    "\t",
    "\r\n",
    "a",
    "Word",
    "'s",
    "'ll",
    "12345",
    ".",
    ">",
    "<",
    "é",
    "日本",
    "\u2028",
    "\x0b",
    "!",
    "~",
    "-\n",
    "x\n",
    " \n",
    "</document>",
    '<document id="1">\n',
]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_JOIN_PIECES), max_size=12).map("".join), max_size=6))
def test_a_joined_text_is_counted_from_its_parts_as_a_whole(parts: list[str]) -> None:
    """cl100k cuts a text at every line start: the count from the parts is the count of the join."""
    count = get_counter()
    assert count.splits_at_lines
    assert count_joined(count, parts) == count.__wrapped__("".join(parts))


def test_a_rendered_context_is_counted_from_its_parts_as_a_whole() -> None:
    texts = [c["text"] for c in load_corpus()]
    count, renderer = get_counter(), Renderer("xml")
    for i in range(0, len(texts) - 6, 3):
        chunks = [Chunk(id=str(j), text=t, title="T", version="5.1") for j, t in enumerate(texts[i : i + 6])]
        parts = renderer.render_parts(chunks)
        assert "".join(parts) == renderer.render(chunks)
        assert count_joined(count, parts) == count.__wrapped__("".join(parts))


def test_another_tokenizer_counts_the_joined_text() -> None:
    count = get_counter(len)
    assert not count.splits_at_lines
    assert count_joined(count, ["ab\n", "cd"]) == 5
