"""The stage contract: settings in ``__init__``, one ``run(chunks, ctx)`` returning chunks."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ctxassembly.chunk import Chunk
from ctxassembly.report import Report

__all__ = ["Context", "Stage"]


@dataclass
class Context:
    """What every stage may read about the call, and the report it writes to."""

    question: str
    budget: int
    report: Report
    count_tokens: Callable[[str], int]
    target_version: str | None = None
    principals: frozenset[str] | None = None
    state: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Stage(Protocol):
    """A pipeline step. It never mutates its input: changed chunks are new objects.

    Every chunk it removes gets exactly one ``ctx.report.drop(...)`` call.
    """

    name: str

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]: ...
