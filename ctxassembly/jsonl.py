"""JSON Lines files, plain or compressed: gzip (``.gz``) and xz (``.xz``) by their suffix.

The benchmark data the project ships is compressed (``benchmarks/data/``); every command
that reads questions or chunks reads it directly, with no unpacking step.
"""

from __future__ import annotations

import gzip
import json
import lzma
from collections.abc import Iterator
from os import PathLike
from pathlib import Path
from typing import IO, Any

__all__ = ["open_text", "read_jsonl"]


def open_text(path: str | PathLike[str]) -> IO[str]:
    """``path`` opened for reading UTF-8 text, decompressed when it ends in ``.gz`` or ``.xz``."""
    suffix = Path(path).suffix.lower()
    if suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    if suffix == ".xz":
        return lzma.open(path, "rt", encoding="utf-8")
    return Path(path).open(encoding="utf-8")


def read_jsonl(path: str | PathLike[str]) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSON Lines file, one a line; blank lines are skipped.

    :raises ValueError: a line that is not JSON (``json.JSONDecodeError``), with its line number.
    """
    with open_text(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError as e:
                raise json.JSONDecodeError(f"{path}:{n}: {e.msg}", e.doc, e.pos) from None
