"""The exact shortcuts of the first-sight call: each gives what the plain code it replaced gives."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxassembly.text import lexical, selection

_MARKUP_TEXTS = [
    "",
    "plain words only",
    "Set :setting:`DEBUG` to true.",
    ".. note::\n   A note.\n\nSee :ref:`x` and :py:class:`y.Z`.",
    "a.. b :: :x:`y` ..  c:: d",
    ".. versionchanged:: 5.1\n:role:`a`:role2:`b`",
]


def test_without_markup_cached_equals_the_regex() -> None:
    for text in _MARKUP_TEXTS:
        first, again = lexical.without_markup(text), lexical.without_markup(text)
        assert first == again == lexical._MARKUP.sub(" ", text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list(".: `abc_\n\t-+")), max_size=40))
def test_without_markup_cached_property(text: str) -> None:
    assert lexical.without_markup(text) == lexical._MARKUP.sub(" ", text)
    assert lexical.without_markup(text) == lexical._MARKUP.sub(" ", text)


def _classes_plain(texts: list[str]) -> list[int]:
    seen: dict[str, int] = {}
    return [seen.setdefault(lexical.normalize(t), len(seen)) for t in texts]


def test_text_classes_repeats_take_the_first_copys_class() -> None:
    texts = ["A b", "c", "A b", "a  B", "c", "A\tb", "d", "a  B", "Ａ b", "A b"]
    assert lexical.text_classes(texts) == _classes_plain(texts)


_CLASS_TEXTS = ["A b", "a b", "a  b", "ab", "A\nb", "x", "X ", "Ａb", "é", "É", "e\u0301"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_CLASS_TEXTS), max_size=12))
def test_text_classes_property(texts: list[str]) -> None:
    assert lexical.text_classes(texts) == _classes_plain(texts)


def _counts(fill: Callable[..., None], texts: list[str], terms: list[str]) -> tuple[list[list[float]], list[float]]:
    counts, lengths = np.zeros((len(terms), len(texts))), np.zeros(len(texts))
    fill(texts, terms, counts, lengths, np.arange(len(texts)))
    return counts.tolist(), lengths.tolist()


_WORDS = ["pypy", "pypy3", "py", "base", "path", "base_path", "restrict_base_path", "x", "a1", "sha256", "sha"]


def test_count_few_bag_equals_the_scans() -> None:
    texts = ["pypy pypy3 Base path base_path sha sha256 py x", "PyPy3.8+ base base base path", "nothing here"]
    terms = ["pypy", "base", "path", "sha", "py", "base_path", "x"]
    assert _counts(lexical._count_few, texts, terms) == _counts(lexical._count_ascii, texts, terms)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from([*_WORDS, "-", ".", "PYPY", "Base"]), max_size=15).map(" ".join), min_size=1),
    st.lists(st.sampled_from(["pypy", "py", "base", "path", "base_path", "sha", "x", "a1"]), min_size=1, unique=True),
)
def test_count_few_property(texts: list[str], terms: list[str]) -> None:
    assert _counts(lexical._count_few, texts, terms) == _counts(lexical._count_ascii, texts, terms)


def _removed_plain(text: str, cut: str, words: int = 8, most: int = 5) -> list[str]:
    out = []
    for raw in selection._PARAGRAPH.split(text):
        para = raw.strip()
        if para and para not in cut:
            head = para.split()
            out.append(" ".join(head[:words]) + (" …" if len(head) > words else ""))
            if len(out) == most:
                break
    return out


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(["a", "bb", "c\td", " ", "\n", "e f g h"]), max_size=14).map(" ".join)).map(
        "\n\n".join
    ),
    st.integers(min_value=1, max_value=10),
)
def test_removed_passages_first_words_only(text: str, words: int) -> None:
    assert selection.removed_passages(text, "", words=words) == _removed_plain(text, "", words=words)


def _shingles_plain(text: str, k: int = 5) -> frozenset[int]:
    w = lexical.words(lexical.normalize(text))
    if len(w) < k:
        return frozenset([lexical._stable(w)]) if w else frozenset()
    return frozenset(lexical._stable(w[i : i + k]) for i in range(len(w) - k + 1))


def test_shingles_over_bytes_equal_the_str_words() -> None:
    for text in ["", "one", "a b c d", "a b c d e f g", "Straße ÄÖ ﬁne x y z", "x_y-z.w 3.14 ÉCOLE école", "ß" * 3]:
        for k in (1, 3, 5):
            lexical.shingles.cache_clear()
            assert lexical.shingles(text, k) == _shingles_plain(text, k)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("aBc _-.\n9ßÉéﬁ\u0301İ")), max_size=60), st.integers(1, 6))
def test_shingles_property(text: str, k: int) -> None:
    assert lexical.shingles(text, k) == _shingles_plain(text, k)
