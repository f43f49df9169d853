"""Arrange stage: put the strongest evidence where models read best, at the edges.

Models use the start and the end of a long context more reliably than its middle
(Liu et al., "Lost in the Middle", https://arxiv.org/abs/2307.03172). Orders, for chunks
ranked 1..n:

* ``relevance``: 1, 2, 3, ..., n.
* ``bookend`` (default): 1, 3, 4, ..., n, 2: the best first and the second best last,
  for any n. (LangChain's and LlamaIndex's LongContextReorder put the best *last* when
  n is even and first when odd.)
* ``edges``: 1, 3, 5, ..., 6, 4, 2: the ranks fold inwards, the weakest in the middle.
* ``reading``: grouped by document (documents by their best chunk), in offset order
  inside a document, so a long document reads as written.

Chunks that conflict (the ledger's ``conflicts_with``) stay adjacent, the better-ranked first.
Where nothing told their versions apart (both kept ``unversioned``: text only, and the
text's cues silent), each is shown as ``status="conflicting"`` (the renderer prints the
status), so the model sees two variants, not two facts; the report notes the pairs. A
chunk labelled by its version (``current``, ``superseded`` ...) keeps that label, and a
partner that did not make the context makes no conflict.
"""

from __future__ import annotations

from dataclasses import replace

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.kinds import ORDERS, Order, Status, one_of
from ctxassembly.ledger import Ledger
from ctxassembly.pipeline import Context, StageBase

__all__ = ["CONFLICTING", "ORDERS", "Arrange", "order_indices"]

#: the status of a kept chunk whose version is unknown and that conflicts with a kept chunk
CONFLICTING = Status.CONFLICTING
# only a chunk shown as unversioned is relabelled: "conflicting" costs no more tokens than
# "unversioned" (cl100k: 2 against 3), so the label never pushes the context over budget
_RELABEL = frozenset({Status.UNVERSIONED})


def order_indices(n: int, order: str) -> list[int]:
    """Positions of ranks 0..n-1 for ``relevance``, ``bookend`` and ``edges``."""
    ranks = list(range(n))
    if order not in ORDERS or order == "reading":
        raise ConfigError(f"order_indices takes 'relevance', 'bookend' or 'edges', got {order!r}")
    if order == "relevance" or n < 3:
        return ranks
    if order == "bookend":
        return [0, *ranks[2:], 1]
    return ranks[0::2] + ranks[1::2][::-1]


class Arrange(StageBase):
    """Order the selected chunks.

    :raises ConfigError: an unknown order.
    """

    name = "arrange"
    shrinks = True
    reads = frozenset({"conflicts_with", "version"})
    writes = frozenset({"version"})

    def __init__(self, order: Order = "bookend") -> None:
        one_of("order", order, ORDERS)
        self.order = order

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        chunks = _label_conflicts(chunks, ctx)
        units = _units(chunks, ctx.ledger)
        if self.order == "reading":
            best: dict[str, int] = {}
            for rank, unit in enumerate(units):
                best.setdefault(unit[0].doc_id or unit[0].id, rank)
            units = sorted(
                units,
                key=lambda u: (best[u[0].doc_id or u[0].id], u[0].start if u[0].start is not None else -1),
            )
        else:
            units = [units[i] for i in order_indices(len(units), self.order)]
        return [c for unit in units for c in unit]


def _units(chunks: list[Chunk], ledger: Ledger) -> list[list[Chunk]]:
    """Ranked chunks grouped so that a chunk's conflicts follow it directly."""
    by_id = {c.id: c for c in chunks}
    placed: set[int] = set()
    units = []
    for c in chunks:
        if id(c) in placed:
            continue
        unit = [c]
        placed.add(id(c))
        for other_id in ledger[c.index].conflicts_with:
            other = by_id.get(other_id)
            if other is not None and id(other) not in placed:
                unit.append(other)
                placed.add(id(other))
        units.append(unit)
    return units


def _label_conflicts(chunks: list[Chunk], ctx: Context) -> list[Chunk]:
    """Relabel ``unversioned`` chunks that conflict with another kept chunk ``conflicting``."""
    kept = {c.id for c in chunks}
    ledger = ctx.ledger
    pairs = []
    for c in chunks:
        facts = ledger[c.index]
        partners = [x for x in facts.conflicts_with if x in kept and x != c.id]
        if partners and facts.version is not None and facts.version.status in _RELABEL:
            ledger.update(c.index, version=replace(facts.version, status=CONFLICTING))
            pairs.append([c.id, *partners])
    if pairs:
        why = "variants that no version tells apart, kept side by side"
        ctx.report.note("arrange", "conflicting", chunks=pairs, why=why)
    return chunks
