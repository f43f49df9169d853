"""Probe, dilution curve and histogram bookkeeping, with a rule-based reader.

The reader here is a real callable reader (the shape every model is wrapped into), not a
stand-in for a model: it reads only the first and the last document of its prompt, so
the expected curves are known exactly. The same experiments run with the real SmolLM2
reader in test_smollm2.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.eval import (
    Question,
    citation_histogram,
    dilution_curve,
    gold_and_distractors,
    make_fact,
    planted_fact_probe,
    spread,
)
from ctxassembly.render import parse

pytestmark = pytest.mark.unit

PNG = b"\x89PNG\r\n\x1a\n"


def edge_reader(prompt: str) -> str:
    """Reads the first and the last document only; cites them."""
    context = re.search(r"<documents>\n(.*)\n</documents>", prompt, re.DOTALL)
    assert context is not None
    docs = parse(context.group(1))
    seen = [docs[0], docs[-1]] if docs else []
    return " ".join(d["text"] for d in seen) + " " + " ".join(f"[{d['id']}]" for d in seen)


FILLER = [Chunk(id=f"f{i}", text=f"Filler paragraph number {i} about templates and forms.") for i in range(12)]


def test_spread() -> None:
    assert spread(10, None) == list(range(10))
    assert spread(10, 5) == [0, 2, 4, 7, 9]
    assert spread(10, 2) == [0, 9]
    assert spread(3, 10) == [0, 1, 2]
    assert spread(1, 3) == [0]
    assert spread(5, [4, 0, 0]) == [0, 4]


@pytest.mark.parametrize(
    ("positions", "match"),
    [
        ([5], r"positions must be ints in 0\.\.4"),
        (0, "positions must be a positive int"),
        (True, "positions must be an int or a sequence of ints, got True"),
    ],
)
def test_spread_errors(positions: object, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        spread(5, positions)  # type: ignore[arg-type]


def test_make_fact_is_seeded_and_unmistakable() -> None:
    import random

    a, b = make_fact(random.Random(1)), make_fact(random.Random(1))
    assert a == b
    assert a.answer in a.sentence
    assert a.answer not in a.question
    assert len(a.answer) == 4


@pytest.mark.parametrize("placement", ["document", "sentence"])
def test_probe_finds_the_edges(placement: str, tmp_path: Path) -> None:
    result = planted_fact_probe(edge_reader, FILLER, n_docs=5, trials=2, placement=placement)  # type: ignore[arg-type]
    assert result.accuracy == {0: 1.0, 1: 0.0, 2: 0.0, 3: 0.0, 4: 1.0}
    assert result.overall == 0.4
    assert len(result.rows) == 10
    assert "position" in result.table()
    assert result.to_dict()["accuracy"] == {"0": 1.0, "1": 0.0, "2": 0.0, "3": 0.0, "4": 1.0}
    assert Path(result.plot(str(tmp_path / "p.png"))).read_bytes()[:8] == PNG


def test_probe_does_not_touch_the_callers_chunks() -> None:
    pool = [c.to_dict() for c in FILLER]
    before = [dict(c) for c in pool]
    planted_fact_probe(edge_reader, pool, n_docs=4, positions=2, trials=1, placement="sentence", max_chars=20)
    assert pool == before


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_docs": 0}, "n_docs must be a positive int, got 0"),
        ({"trials": 0}, "trials must be a positive int, got 0"),
        ({"placement": "inline"}, "placement must be 'document' or 'sentence', got 'inline'"),
        ({"n_docs": 40}, "need at least 39 filler chunks for n_docs=40, got 12"),
        ({"max_chars": -1}, "max_chars must be a positive int, got -1"),
    ],
)
def test_probe_errors(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        planted_fact_probe(edge_reader, FILLER, **kwargs)  # type: ignore[arg-type]


def _question(n_distractors: int = 20) -> Question:
    cands = [{"id": f"d{i}", "text": f"Distractor {i} about settings.", "version": "5.1"} for i in range(n_distractors)]
    cands.insert(3, {"id": "gold", "text": "The default renderer uses div.html.", "version": "5.1"})
    # another version's copy holds the answer too: never a distractor
    cands.insert(1, {"id": "old", "text": "The default renderer uses div.html (new).", "version": "4.2"})
    cands.insert(6, {"id": "gold", "text": "The default renderer uses div.html.", "version": "5.1"})  # same hit twice
    return Question(question="Which template?", qid="t1", gold=("gold",), answer=("div.html",), candidates=tuple(cands))


def test_gold_and_distractors() -> None:
    gold, rest = gold_and_distractors(_question())
    assert gold is not None
    assert gold.id == "gold"
    assert [c.id for c in rest][:3] == ["d0", "d1", "d2"]
    assert {"gold", "old"}.isdisjoint(c.id for c in rest)
    assert len(rest) == 20


def test_gold_without_labels_is_the_first_answer_bearing_candidate() -> None:
    q = _question()
    gold, _ = gold_and_distractors(Question(question=q.question, answer=q.answer, candidates=q.candidates))
    assert gold is not None
    assert gold.id == "old"


def test_dilution_separates_size_and_position(tmp_path: Path) -> None:
    lost = Question(question="q", qid="none", answer=("absent",), candidates=({"id": "x", "text": "nothing"},))
    result = dilution_curve(edge_reader, [_question(), lost], sizes=(0, 4, 16))
    assert result.accuracy == {"first": {0: 1.0, 4: 1.0, 16: 1.0}, "middle": {0: 1.0, 4: 0.0, 16: 0.0}}
    assert result.skipped == {"none": "no candidate holds every answer string"}
    middle16 = next(r for r in result.rows if r.size == 16 and r.placement == "middle")
    assert (middle16.position, middle16.n_docs) == (8, 17)
    assert "+16 distractors" in result.table()
    assert Path(result.plot(str(tmp_path / "d.png"))).read_bytes()[:8] == PNG


def test_dilution_with_few_distractors_records_the_real_size() -> None:
    result = dilution_curve(edge_reader, [_question(n_distractors=2)], sizes=(16,), placements=("last",))
    assert result.rows[0].n_docs == 3
    assert result.accuracy == {"last": {16: 1.0}}


def test_dilution_all_skipped_gives_no_numbers() -> None:
    lost = Question(question="q", qid="none", answer=("absent",))
    result = dilution_curve(edge_reader, [lost], sizes=(0,))
    assert result.accuracy == {"first": {0: None}, "middle": {0: None}}
    assert "n/a" in result.table()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"sizes": (-1,)}, r"sizes must be non-negative ints, got \[-1\]"),
        ({"placements": ("centre",)}, r"placements must be among \('first', 'middle', 'last'\), got \['centre'\]"),
    ],
)
def test_dilution_errors(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        dilution_curve(edge_reader, [_question()], **kwargs)  # type: ignore[arg-type]


def test_dilution_needs_questions_with_answers() -> None:
    with pytest.raises(ConfigError, match="questions is empty"):
        dilution_curve(edge_reader, [])
    with pytest.raises(ConfigError, match="question 'u': field 'answer' is empty"):
        dilution_curve(edge_reader, [Question(question="q", qid="u")])


def test_histogram_counts_cited_and_used_positions(tmp_path: Path) -> None:
    q = _question(n_distractors=6)

    gold, rest = gold_and_distractors(q)
    assert gold is not None
    docs = [gold, *rest[:3]]
    short = Question(question="q2", qid="t2", answer=("nowhere",), candidates=q.candidates)
    result = citation_histogram(edge_reader, [q, short], build=lambda x: docs[: 4 if x.qid == "t1" else 2])
    assert result.present == [2, 2, 1, 1]
    assert result.cited == [2, 1, 0, 1]
    assert result.used == [1, 0, 0, 0]  # t1 answered from position 0; t2's answer is in no document
    assert result.cite_rate == [1.0, 0.5, 0.0, 1.0]
    assert result.uncited == 0
    assert result.rows[0].answer_positions == (0,)
    assert "cite rate" in result.table()
    assert Path(result.plot(str(tmp_path / "h.png"))).read_bytes()[:8] == PNG


def test_histogram_with_the_assembler() -> None:
    result = citation_histogram(edge_reader, [_question()], budget=300)
    n = result.rows[0].n_docs
    assert n >= 1
    assert result.present == [1] * n
    assert result.cited[0] == 1
    assert result.cited[-1] == 1


def test_histogram_needs_questions() -> None:
    with pytest.raises(ConfigError, match="questions is empty"):
        citation_histogram(edge_reader, [])
