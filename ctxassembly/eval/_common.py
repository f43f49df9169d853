"""Shared by the reader experiments: chunk coercion, truncation, prompt layout, tables."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.kinds import Format
from ctxassembly.render import Renderer, prompt

BRIEF = "Answer the question using only the documents above. Answer in a few words."
CITE = (
    "Answer the question using only the documents above. After the answer, cite the id of "
    "each document you used in square brackets, e.g. [id]."
)


def to_chunk_list(items: Iterable[Chunk | Mapping[str, Any]], name: str) -> list[Chunk]:
    """Chunks from chunks or chunk dicts (never the caller's objects changed).

    :raises ConfigError: an item that is neither.
    """
    if isinstance(items, (str, bytes, Mapping)):
        raise ConfigError(f"{name} must be a list of chunks, got a single {type(items).__name__}")
    out = []
    for i, item in enumerate(items):
        if isinstance(item, Chunk):
            out.append(item)
        elif isinstance(item, Mapping):
            out.append(Chunk.from_dict(item, index=i))
        else:
            raise ConfigError(f"{name} item {i}: expected a Chunk or a mapping, got {type(item).__name__}")
    return out


def cut(chunk: Chunk, max_chars: int | None) -> Chunk:
    """``chunk`` with its text cut to ``max_chars`` at a word boundary (a copy)."""
    if max_chars is None or len(chunk.text) <= max_chars:
        return chunk
    head = chunk.text[:max_chars]
    space = head.rfind(" ")
    return replace(chunk, text=(head[:space] if space > max_chars // 2 else head).rstrip())


def check_positive(name: str, value: object, *, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{name} must be a positive int, got {value!r}")


def layout(chunks: Sequence[Chunk], question: str, *, fmt: Format, instructions: str) -> str:
    """The prompt a reader sees: documents, instructions, question last."""
    return prompt(Renderer(fmt).render(chunks), question, instructions)


def table(rows: Sequence[Sequence[object]]) -> str:
    """Rows of cells as aligned plain text; the first row is the header."""
    cells = [["n/a" if c is None else str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(cells[0]))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
