"""Shared helpers for the core tests: chunks with input indices and a stage context."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from ctxassembly.chunk import Chunk
from ctxassembly.report import Report
from ctxassembly.stages.base import Context
from ctxassembly.tokens import get_counter


def chunk(cid: str, text: str = "", index: int | None = None, **kw: Any) -> Chunk:
    return Chunk(id=cid, text=text or f"text of {cid}", index=index if index is not None else 0, **kw)


def chunks(*specs: tuple[str, str] | dict[str, Any]) -> list[Chunk]:
    """Indexed chunks from (id, text) pairs or dicts of Chunk fields."""
    out = []
    for i, spec in enumerate(specs):
        if isinstance(spec, tuple):
            out.append(Chunk(id=spec[0], text=spec[1], index=i))
        else:
            out.append(Chunk(index=i, **spec))
    return out


def context(question: str = "q", budget: int = 1000, **kw: Any) -> Context:
    return Context(
        question=question,
        budget=budget,
        report=Report(question=question, budget=budget),
        count_tokens=get_counter(),
        **kw,
    )


def fates(ctx: Context) -> dict[int, str]:
    """Input index -> reason, for the chunks a stage dropped."""
    return {i: d.reason for i, d in ctx.report._fates.items()}


@pytest.fixture(scope="session")
def bench_dir() -> Path:
    """The shared benchmark folder: $CTXASSEMBLY_BENCH, else ../shared/bench beside the checkout."""
    path = Path(os.environ.get("CTXASSEMBLY_BENCH", Path(__file__).resolve().parents[2] / "shared" / "bench"))
    if not (path / "data" / "django" / "questions.jsonl").exists():
        pytest.fail(f"benchmark data not found at {path}; set CTXASSEMBLY_BENCH to the shared/bench folder")
    return path


@pytest.fixture
def ctx() -> Context:
    return context()
