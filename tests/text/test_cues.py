import pytest

from ctxassembly.text.cues import carries_condition, dependencies
from ctxassembly.text.segments import segment

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("It is not supported.", True),
        ("Only for admins.", True),
        ("Up to 5 MB.", True),
        ("Added in 5.1.", True),
        ("On 2024-01-31.", True),
        ("Templates render widgets.", False),
    ],
)
def test_carries_condition(text, expected):
    assert carries_condition(text) is expected


def _units(text):
    units = segment(text)
    return units, [text[u.start : u.end] for u in units]


def test_dependencies_bring_heading_directive_and_lead_in():
    text = "Setup\n=====\n\nDo this:\n\n* Install it.\n\n.. note::\n\n    Templates render widgets.\n"
    units, texts = _units(text)
    item = texts.index("* Install it.")
    assert {texts[x] for x in dependencies(text, units, item)} == {"Setup\n=====", "Do this:"}
    inner = texts.index("Templates render widgets.")
    assert {texts[x] for x in dependencies(text, units, inner)} == {"Setup\n=====", ".. note::"}


def test_dependencies_bring_a_neighbour_that_states_a_condition_or_is_referred_to():
    text = "Templates render widgets. It is not supported on Windows. Forms hold fields. This is new."
    units, texts = _units(text)
    first, third = texts.index("Templates render widgets."), texts.index("Forms hold fields.")
    condition = texts.index("It is not supported on Windows.")
    assert condition in dependencies(text, units, first)  # the next sentence states a condition
    assert texts.index("This is new.") in dependencies(text, units, third)  # the next one refers back
    assert dependencies(text, units, first, neighbours=False) == []
