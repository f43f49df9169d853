import pytest

from ctxassembly import Arrange, ConfigError
from ctxassembly.stages.arrange import order_indices
from tests.conftest import chunks, context

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("order", "n", "expected"),
    [
        ("relevance", 5, [0, 1, 2, 3, 4]),
        ("bookend", 1, [0]),
        ("bookend", 2, [0, 1]),
        ("bookend", 4, [0, 2, 3, 1]),
        ("bookend", 5, [0, 2, 3, 4, 1]),
        ("edges", 6, [0, 2, 4, 5, 3, 1]),
        ("edges", 0, []),
    ],
)
def test_orders(order, n, expected):
    assert order_indices(n, order) == expected


@pytest.mark.parametrize("n", [2, 3, 4, 7, 10])
def test_bookend_puts_the_best_first_and_the_second_last_for_any_n(n):
    cs = chunks(*[(f"c{i}", f"t{i}") for i in range(n)])
    out = Arrange("bookend").run(cs, context())
    assert out[0].id == "c0"
    assert out[-1].id == "c1"
    assert sorted(c.id for c in out) == sorted(c.id for c in cs)


def test_reading_groups_documents_in_offset_order():
    cs = chunks(
        {"id": "d2", "text": "b", "doc_id": "x", "start": 50},
        {"id": "e1", "text": "c", "doc_id": "y", "start": 0},
        {"id": "d1", "text": "a", "doc_id": "x", "start": 10},
    )
    assert [c.id for c in Arrange("reading").run(cs, context())] == ["d1", "d2", "e1"]


def test_conflicts_stay_adjacent():
    cs = chunks(("a", "1"), ("b", "2"), ("c", "3"), ("d", "4"))
    ctx = context()
    ctx.ledger.update(0, conflicts_with=("d",))
    ctx.ledger.update(3, conflicts_with=("a",))
    out = [c.id for c in Arrange("bookend").run(cs, ctx)]
    assert out.index("d") == out.index("a") + 1


def test_bad_order():
    with pytest.raises(ConfigError, match="order must be one of"):
        Arrange("random")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="order_indices takes"):
        order_indices(3, "reading")
