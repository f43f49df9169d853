import pytest

from ctxassembly import ConfigError
from ctxassembly.tokens import get_counter, tiktoken_encoding

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
