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


class AbsentVersionWarning(UserWarning):
    """The version asked for (the caller's ``target_version``, or a version the question
    names) is not among the candidates' versions; the ``absent_version`` option says what
    the call did instead. Route it to logging with :func:`logging.captureWarnings`."""


class AbsentVersionError(ConfigError):
    """The version asked for is not among the candidates' versions and the
    ``absent_version`` option is ``"error"``. ``version`` is the version asked for,
    ``present`` the versions the candidates carry."""

    def __init__(self, message: str, *, version: str, present: list[str]) -> None:
        super().__init__(message)
        self.version = version
        self.present = present


class UntrainedModelWarning(UserWarning):
    """A model given to a stage scores at random (a cross-encoder whose classification
    head was newly initialised); the report notes it too."""
