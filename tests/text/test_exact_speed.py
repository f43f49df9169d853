"""The exact shortcuts of the first-sight call: each gives what the plain code it replaced gives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxassembly.text import lexical

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
