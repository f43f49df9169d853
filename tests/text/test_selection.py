import numpy as np
import pytest

from ctxassembly.text.segments import segment
from ctxassembly.text.selection import choose_units, in_context, with_gaps, write_units

pytestmark = pytest.mark.unit


def test_in_context_adds_half_the_heading_and_directive_scores():
    text = "Title\n=====\n\n.. attribute:: username\n\n    Required. 150 characters or fewer.\n"
    units = segment(text)
    kinds_ = [u.kind for u in units]
    assert kinds_[:2] == ["heading", "directive"]
    scores = np.zeros(2 * len(units))
    scores[1] = 1.0  # the directive of the first chunk matches; the second chunk matches nothing
    got = in_context(scores, [units, units])
    inner = [j for j, u in enumerate(units) if u.parent == 1]
    assert inner
    assert all(got[j] == 0.5 for j in inner)
    assert not got[len(units) :].any()


def _count(text: str) -> int:
    return len(text.split())


def test_choose_units_keeps_the_best_unit_with_its_heading_within_the_cap():
    text = "Limits\n======\n\nForms hold fields. The key is at most 250 characters. Widgets render HTML.\n"
    units = segment(text)
    texts = [text[u.start : u.end] for u in units]
    scores = np.array([1.0 if "250" in t else 0.0 for t in texts])
    kept = choose_units(text, units, scores, 14, _count)  # 3 + 8 tokens and 2 per unit
    assert kept is not None
    assert [texts[j] for j in kept] == ["Limits\n======", "The key is at most 250 characters."]
    assert choose_units(text, units, scores, 1000, _count) == kept  # a unit that matches nothing is not added
    assert choose_units(text, units, np.ones(len(units)), 1000, _count) is None  # all of it: leave it whole
    assert choose_units(text, units, scores, 12, _count) is None  # the unit with its heading does not fit


def test_write_units_joins_contiguous_units_and_marks_the_cuts():
    text = "One. Two. Three.\n\nFour."
    units = segment(text)
    out, spans = write_units(text, units, [0, 1, 3], "[…]")
    assert out == "One. Two.\n\n[…]\n\nFour."
    assert spans == ((0, 9), (18, 23))


def test_with_gaps_marks_text_left_out_before_between_and_after():
    text = "a b c d e"
    assert with_gaps(text, [(2, 3), (6, 7)], "~") == "~\n\nb\n\n~\n\nd\n\n~"
    assert with_gaps(text, [(0, 9)], "~") == "a b c d e"
