import pytest

from ctxassembly.text.sentences import sentences

pytestmark = pytest.mark.unit


def test_sentences_ignore_line_wraps():
    para = "Django supports PostgreSQL\n13 and higher. It does not support 12."
    assert [para[a:b] for a, b in sentences(para)] == [
        "Django supports PostgreSQL\n13 and higher.",
        "It does not support 12.",
    ]


def test_a_paragraph_without_a_sentence_end_is_one_sentence():
    para = "  a heading-like line without a full stop\n"
    assert sentences(para) == ((2, len(para.rstrip())),)
    assert sentences("   \n") == ()
