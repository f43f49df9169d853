"""Answer containment and citation parsing."""

from __future__ import annotations

import pytest

from ctxassembly.eval import contains_answer, normalize_answer, parse_citations

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("reply", "answers", "expected"),
    [
        ("The count is 870000.", ["870,000"], True),
        ("It is 870 000 iterations", ["870,000"], True),
        ("The code is **blue-42**.", ["BLUE-42"], True),
        ("Use ``div.html``", ["div.html"], True),
        ("Django 5.10 is out", ["5.1"], False),  # the decimal point stays
        ("51 items", ["5.1"], False),
        ("PostgreSQL 14 and higher", ["PostgreSQL 14 and higher"], True),
        ("PostgreSQL 140", ["PostgreSQL 14"], False),  # whole words only
        ("SHA256 and 870,000", ["870,000", "SHA256"], True),
        ("only 870,000", ["870,000", "SHA256"], False),
    ],
)
def test_contains_answer(reply: str, answers: list[str], expected: bool) -> None:
    assert contains_answer(reply, answers) is expected


def test_any_and_no_answers() -> None:
    assert contains_answer("only 870,000", ["870,000", "SHA256"], require="any") is True
    assert contains_answer("anything", []) is None
    assert contains_answer("anything", ["  "]) is None


def test_require_must_be_known() -> None:
    with pytest.raises(ValueError, match="require must be 'all' or 'any', got 'most'"):
        contains_answer("x", ["x"], require="most")


def test_normalize_answer() -> None:
    assert normalize_answer("  The “Code”:\n BLUE-42. ") == "the code blue 42"
    assert normalize_answer("1,000,000 and 5.2") == "1000000 and 5.2"


IDS = ["5.1:releases/5.1#4", "5.1:ref/settings#12", "doc-a"]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("It is 870,000 [5.1:releases/5.1#4].", ["5.1:releases/5.1#4"]),
        ("See [doc-a, 5.1:ref/settings#12].", ["doc-a", "5.1:ref/settings#12"]),
        ('As stated in id="doc-a" and [doc-a].', ["doc-a"]),
        ("(source: 5.1:ref/settings#12)", ["5.1:ref/settings#12"]),
        ("Per [E2] and [3].", ["5.1:ref/settings#12", "doc-a"]),  # evidence numbers are 1-based positions
        ("[DOC-A]", ["doc-a"]),
        ("Steps: [1] do this [sic] [unknown-id]", ["5.1:releases/5.1#4"]),
        ("No citation at all.", []),
        ("[9] is out of range", []),
    ],
)
def test_parse_citations_against_known_ids(reply: str, expected: list[str]) -> None:
    assert parse_citations(reply, IDS) == expected


def test_parse_citations_without_ids_returns_tokens_in_order() -> None:
    assert parse_citations("b first [b], then id='a' and (id: c)") == ["b", "a", "c"]
