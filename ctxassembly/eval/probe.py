"""Planted-fact probe: your own lost-in-the-middle curve.

A synthetic, unmistakable fact ("The access code of the Vorlak vault is 4817.") is put
at each position of a context made of real chunks, the reader is asked for it, and the
answers are scored by containment. The filler of one trial is the same at every
position, so the curve moves with the position alone. Run it with your model, your chunk
size and your layout (format, instructions): a published curve is a hypothesis about
your system, this is a measurement of it (Liu et al., "Lost in the Middle", 2023,
https://arxiv.org/abs/2307.03172).

Usage::

    from ctxassembly.eval import SmolLM2Reader, planted_fact_probe
    result = planted_fact_probe(SmolLM2Reader(), n_docs=10, positions=5, trials=3)
    print(result.table()); result.plot("probe.png")
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.eval._common import BRIEF, check_positive, cut, layout, to_chunk_list
from ctxassembly.eval.results import ProbeResult, ProbeTrial
from ctxassembly.eval.scoring import contains_answer
from ctxassembly.kinds import Format
from ctxassembly.llm.readers import as_reader

__all__ = ["Placement", "PlantedFact", "make_fact", "parse_placement", "planted_fact_probe", "spread"]

Placement = Literal["document", "sentence"]

_NAMES = (
    "Vorlak",
    "Quenby",
    "Tazmir",
    "Orvell",
    "Brisca",
    "Kelvane",
    "Mordix",
    "Ulvana",
    "Zephrin",
    "Dravos",
    "Pellora",
    "Yskander",
    "Ferrow",
    "Gilvane",
    "Hastrel",
    "Ixora",
)
_THINGS = ("vault", "archive", "greenhouse", "observatory", "lighthouse", "workshop")


@dataclass(frozen=True)
class PlantedFact:
    """A fact the reader cannot know from anywhere but the context."""

    sentence: str
    question: str
    answer: str


def make_fact(rng: random.Random) -> PlantedFact:
    """A fresh fact: a made-up name, a place and a four-digit code."""
    name, thing, code = rng.choice(_NAMES), rng.choice(_THINGS), str(rng.randint(1000, 9999))
    return PlantedFact(
        sentence=f"The access code of the {name} {thing} is {code}.",
        question=f"What is the access code of the {name} {thing}?",
        answer=code,
    )


def spread(n_docs: int, positions: int | Sequence[int] | None) -> list[int]:
    """The positions to probe: all of ``0..n_docs-1`` (``None``), ``k`` evenly spread
    ones from first to last (an int), or the given ones.

    :raises ConfigError: a position outside the context, or k < 1.
    """
    if positions is None:
        return list(range(n_docs))
    if isinstance(positions, bool):
        raise ConfigError(f"positions must be an int or a sequence of ints, got {positions!r}")
    if isinstance(positions, int):
        check_positive("positions", positions)
        if positions == 1 or n_docs == 1:
            return [0]
        k = min(positions, n_docs)
        return sorted({round(i * (n_docs - 1) / (k - 1)) for i in range(k)})
    out = sorted(set(positions))
    bad = [p for p in out if isinstance(p, bool) or not isinstance(p, int) or not 0 <= p < n_docs]
    if bad:
        raise ConfigError(f"positions must be ints in 0..{n_docs - 1} (n_docs={n_docs}), got {bad}")
    return out


def parse_placement(value: object) -> Placement:
    """``value`` as a :data:`Placement`.

    :raises ConfigError: anything but ``"document"`` or ``"sentence"``.
    """
    if value == "document":
        return "document"
    if value == "sentence":
        return "sentence"
    raise ConfigError(f"placement must be 'document' or 'sentence', got {value!r}")


def _plant(chunk: Chunk, fact: PlantedFact, placement: Placement, trial: int) -> Chunk:
    if placement == "document":
        return Chunk(id=f"note-{trial + 1}", text=fact.sentence, title="Site notes")
    # inside a real chunk: after its first paragraph (or sentence), so it reads as part of it
    text = chunk.text
    cut_at = text.find("\n\n")
    if cut_at < 0:
        cut_at = text.find(". ") + 1
    if cut_at <= 0:
        return replace(chunk, text=f"{text} {fact.sentence}")
    return replace(chunk, text=f"{text[:cut_at]} {fact.sentence}{text[cut_at:]}")


def planted_fact_probe(
    reader: object,
    chunks: Iterable[Chunk | Mapping[str, Any]] | None = None,
    *,
    n_docs: int = 10,
    positions: int | Sequence[int] | None = None,
    trials: int = 3,
    placement: Placement = "document",
    fmt: Format = "xml",
    instructions: str | None = None,
    max_chars: int | None = None,
    seed: int = 0,
    scorer: Callable[[str, Sequence[str]], bool | None] = contains_answer,
) -> ProbeResult:
    """Ask ``reader`` for a planted fact at each position of an ``n_docs``-document context.

    :param reader: a callable ``prompt -> str``, a LangChain model or LlamaIndex LLM.
    :param chunks: the real chunks the filler is drawn from (default: the bundled Django
        demo corpus); use your own corpus to measure your own layout.
    :param n_docs: documents in each context, the planted one included.
    :param positions: ``None`` (every position), a count spread evenly, or a list.
    :param trials: contexts per position (a different fact and filler each).
    :param placement: ``document`` (the fact is a document of its own) or ``sentence``
        (the fact is written into the real chunk at that position).
    :param max_chars: cut each filler chunk to this many characters (shorter contexts).
    :raises ConfigError: a bad option, or fewer filler chunks than a context needs.
    """
    check_positive("n_docs", n_docs)
    check_positive("trials", trials)
    check_positive("max_chars", max_chars, allow_none=True)
    placement = parse_placement(placement)
    ask = as_reader(reader)
    where = spread(n_docs, positions)
    if chunks is None:
        from ctxassembly.data import load_corpus

        chunks = load_corpus()
    pool = to_chunk_list(chunks, "chunks")
    need = n_docs - 1 if placement == "document" else n_docs
    if len(pool) < need:
        raise ConfigError(f"chunks: need at least {need} filler chunks for n_docs={n_docs}, got {len(pool)}")
    rng = random.Random(seed)
    prompt_text = BRIEF if instructions is None else instructions
    rows = []
    for t in range(trials):
        fact = make_fact(rng)
        filler = [cut(c, max_chars) for c in rng.sample(pool, need)]
        for p in where:
            if placement == "document":
                docs = [*filler[:p], _plant(filler[0], fact, placement, t), *filler[p:]]
            else:
                docs = [*filler[:p], _plant(filler[p], fact, placement, t), *filler[p + 1 :]]
            response = ask(layout(docs, fact.question, fmt=fmt, instructions=prompt_text))
            rows.append(ProbeTrial(t, p, n_docs, fact.answer, response, bool(scorer(response, [fact.answer]))))
    accuracy = {p: round(sum(r.correct for r in rows if r.position == p) / trials, 4) for p in where}
    return ProbeResult(n_docs=n_docs, trials=trials, placement=placement, accuracy=accuracy, rows=rows)
