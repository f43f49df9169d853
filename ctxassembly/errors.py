"""Errors raised by ctxassembly. Each one is also the builtin a caller would expect."""

from __future__ import annotations


class ChunkError(ValueError):
    """A candidate chunk is malformed: the message names the field and the chunk."""

    def __init__(self, message: str, *, field: str, chunk: str) -> None:
        super().__init__(f"chunk {chunk}: field {field!r}: {message}")
        self.field = field
        self.chunk = chunk


class ConfigError(ValueError):
    """An option of a stage or of the assembler is invalid."""


class MissingExtraError(ImportError):
    """An optional dependency is missing; the message names the extra to install."""

    def __init__(self, package: str, extra: str) -> None:
        super().__init__(f"{package} is not installed; install it with: pip install 'ctxassembly[{extra}]'")
        self.package = package
        self.extra = extra
