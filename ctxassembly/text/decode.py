"""Decoded views of a text: what an instruction hidden in another channel says.

An instruction the reader (a model) can decode is still an instruction: base64, base32 or
hex it is told to decode, ROT13 it is told to rotate, HTML character references and
percent-escapes, ``\\u`` escapes, letters spaced out (``I g n o r e``, ``i.g.n.o.r.e``),
digits for letters (``1gn0r3``), look-alike letters from other scripts, fullwidth and
other compatibility forms, zero-width, bidi and tag characters; and what is only written
to be decoded: bytes as eight binary digits, as character codes or as Morse code, bits
as two zero-width characters, bytes as variation selectors, a line written backwards. Each decoder has a cheap
trigger (a substring test on the text or on one translation of its bytes into classes)
and runs only when it matches; what it returns is a :class:`View`: the decoded text and,
for each piece of it, the span of the original it comes from, so that whatever a
detector finds in the view maps back to the original.

The detectors (:mod:`ctxassembly.text.injection`, the learned model) scan the views of a
text as well as the text; a finding in a view cuts the sentences of the original that
carry the encoded part (:func:`decoded_spans`). A view is never decoded again (one
level), and a decoded token counts only when it reads as text (printable, mostly letters
and spaces): a hash, an image or a key in base64 decodes to bytes and yields no view.
"""

from __future__ import annotations

import base64
import binascii
import html
import re
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import unquote

__all__ = ["CARRIERS", "CHANNELS", "CONCEALING", "MORSE_CODE", "View", "decoded_spans", "says_something", "views"]

#: the channels a view can come from, in the order they are tried
CHANNELS = (
    "unicode",
    "bits",
    "selectors",
    "spaced",
    "leet",
    "entities",
    "percent",
    "escapes",
    "base64",
    "base32",
    "hex",
    "binary",
    "charcodes",
    "morse",
    "reversed",
    "cipher",
    "rot13",
)
#: the channels nobody writes prose in for a human reader: a sentence decoded from one of
#: them was hidden on purpose, whatever it says (:func:`says_something`)
CONCEALING = frozenset(CHANNELS) - {"unicode", "spaced", "leet", "percent"}
#: the concealing channels with no use in prose at all: two decoded words say something
CARRIERS = frozenset({"bits", "selectors", "binary", "charcodes", "morse"})


@dataclass(frozen=True)
class View:
    """A decoded reading of a text: ``text``, made of segments ``(start, end, lo, hi,
    copied)``: ``text[start:end]`` is the original's ``[lo:hi]`` copied character for
    character, or decoded from it (each of its characters then stands for all of it)."""

    channel: str
    text: str
    segments: tuple[tuple[int, int, int, int, bool], ...]

    def decoded(self) -> list[tuple[int, int]]:
        """The spans of ``text`` that were decoded (not copied from the original); for
        ROT13, which rotates in place, the rotated rest of the text."""
        if self.channel == "rot13":
            return [(s, e) for s, e, *_ in self.segments[1:]]
        out: list[tuple[int, int]] = []
        for s, e, _, _, copied in self.segments:
            if copied:
                continue
            if out and out[-1][1] == s:  # one character reference after another: one piece
                out[-1] = (out[-1][0], e)
            else:
                out.append((s, e))
        return out

    def origin(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original that ``text[start:end]`` was decoded from."""
        lo, hi = -1, -1
        for s, e, o_lo, o_hi, copied in self.segments:
            if e <= start or s >= max(end, start + 1):
                continue
            a, b = (o_lo + max(start, s) - s, o_lo + min(end, e) - s) if copied else (o_lo, o_hi)
            lo = a if lo < 0 else min(lo, a)
            hi = max(hi, b)
        return (max(lo, 0), max(hi, lo, 0))


class _Builder:
    """A view written piece by piece, each piece with the original span it stands for."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.parts: list[str] = []
        self.segments: list[tuple[int, int, int, int, bool]] = []
        self.at = 0

    def _add(self, piece: str, start: int, end: int, copied: bool) -> None:
        if piece:
            self.parts.append(piece)
            self.segments.append((self.at, self.at + len(piece), start, end, copied))
            self.at += len(piece)

    def copy(self, start: int, end: int) -> None:
        """The original's own characters ``start:end``, one for one."""
        self._add(self.source[start:end], start, end, True)

    def same_length(self, piece: str, start: int) -> None:
        """``piece`` read from ``source[start:start + len(piece)]`` character for character."""
        self._add(piece, start, start + len(piece), True)

    def put(self, piece: str, start: int, end: int) -> None:
        """``piece`` decoded from ``source[start:end]`` (every character of it maps there)."""
        self._add(piece, start, end, False)

    def pieces(self, pieces: list[tuple[int, int, str]], channel: str) -> View | None:
        """The source with each ``(start, end, decoded)`` of ``pieces`` (in order) put in."""
        last = 0
        for start, end, piece in pieces:
            self.copy(last, start)
            self.put(piece, start, end)
            last = end
        self.copy(last, len(self.source))
        return self.view(channel)

    def view(self, channel: str) -> View | None:
        text = "".join(self.parts)
        if text == self.source:
            return None
        return View(channel, text, tuple(self.segments))


def _rewrite(
    text: str, pattern: re.Pattern[str], decode: Callable[[re.Match[str]], str | None], channel: str
) -> View | None:
    """The view of ``text`` with each match of ``pattern`` replaced by ``decode(match)``
    (a match it returns ``None`` for stays as it is)."""
    pieces = [(m.start(), m.end(), piece) for m in pattern.finditer(text) if (piece := decode(m)) is not None]
    return _pieces(text, pieces, channel)


def _reads_as_text(s: str, *, words: int = 3, least: int = 8) -> bool:
    """Mostly printable, mostly letters and spaces, several words (``words``, in ``least``
    characters or more): prose, not bytes."""
    if len(s) < least or not s.isprintable():
        return False
    letters = sum(ch.isalpha() for ch in s)
    spaces = s.count(" ")
    return spaces >= words - 1 and (letters + spaces) >= 0.75 * len(s)


# --- unicode: invisible characters, compatibility forms, look-alike letters -------------

_ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e\u2061\u2062\u2063\u2064\u034f\u115f\u1160\u3164"
_BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
_DROP = frozenset(_ZERO_WIDTH + _BIDI)
# Cyrillic, Greek, Armenian and Latin-extension letters drawn like basic Latin ones (NFKC
# leaves them alone): folded to the Latin letter they imitate
_CONFUSABLE = {
    **dict(zip("аеорсухіјѕԁɡһԛԝӏ", "aeopcyxijsdghqwl", strict=True)),
    **dict(zip("АВЕКМНОРСТХІЈЅԌԚԜ", "ABEKMHOPCTXIJSGQW", strict=True)),
    **dict(zip("αβεικνορτυχϲϳ", "abeiknoptuxcj", strict=True)),
    **dict(zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧϹ", "ABEZHIKMNOPTYXC", strict=True)),
    **dict(zip("օսոցհոգ", "ounghnq", strict=True)),
    **dict(zip("ıɑɩʏᴀᴄᴅᴇᴊᴋᴍᴏᴘᴛᴜᴠᴡᴢ", "iaiyacdejkmoptuvwz", strict=True)),
}


def _is_latin(ch: str) -> bool:
    return ("a" <= ch <= "z") or ("A" <= ch <= "Z")


@lru_cache(maxsize=8192)
def _unicode_char(ch: str) -> str | None:
    """What one non-ASCII character reads as, or ``None`` when it stays itself: invisible
    ones are dropped (``""``), tag characters give their ASCII twin, look-alikes their
    Latin letter, a compatibility form of a letter or digit its NFKC form."""
    code = ord(ch)
    if ch in _DROP:
        return ""
    if 0xE0000 <= code <= 0xE007F:
        return chr(code - 0xE0000) if 0xE0020 <= code <= 0xE007E else ""
    if ch in _CONFUSABLE:
        return _CONFUSABLE[ch]
    if ch.isalnum():
        norm = unicodedata.normalize("NFKC", ch)
        if norm != ch and norm.isascii() and norm.isalnum():
            return norm
    return None


_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def _unicode(text: str) -> View | None:
    """Invisible characters removed, tag characters decoded, look-alikes and
    compatibility forms folded: only when one of them sits in a word or in a run of tag
    characters (an accent, a dash or a typographic quote yields no view)."""
    if text.isascii():
        return None
    b = _Builder(text)
    last = 0
    suspicious = False
    for m in _NON_ASCII.finditer(text):
        ch = m.group()
        rep = _unicode_char(ch)
        if rep is None:
            continue
        i = m.start()
        if ch in _CONFUSABLE:
            # a look-alike counts inside a word that also has basic Latin letters
            lo, hi = i, i + 1
            while lo > 0 and text[lo - 1].isalpha():
                lo -= 1
            while hi < len(text) and text[hi].isalpha():
                hi += 1
            if not any(_is_latin(c) for c in text[lo:hi]):
                continue
        b.copy(last, i)
        b.put(rep, i, i + 1)
        last = i + 1
        suspicious = True
    if not suspicious:
        return None
    b.copy(last, len(text))
    return b.view("unicode")


# --- spaced-out letters ------------------------------------------------------------------

# five or more single letters, each from the next by a space, a dot, a hyphen, an
# asterisk or an underscore (a wider gap, ``/`` or ``|`` parts words)
_SPACED = re.compile(r"(?<![\w.*-])[^\W\d_](?:(?:[ \t]{1,3}|[ \t]*[/|][ \t]*|[.*_-])[^\W\d_](?![\w*])){4,}")
_GAP = re.compile(r"[ \t]*[/|][ \t]*|[ \t]+|[.*_-]")


def _join_spaced(m: re.Match[str]) -> str:
    """The letters of a run joined: where they are parted by punctuation, a space parts
    words; where by spaces, a wider gap (or ``/``, ``|``) does."""
    s = m.group()
    gaps = list(_GAP.finditer(s))
    marked = any(not g.group().isspace() and "/" not in g.group() and "|" not in g.group() for g in gaps)
    out, i = [], 0
    for g in gaps:
        out.append(s[i : g.start()])
        gap = g.group()
        breaks = ("/" in gap or "|" in gap) or (gap.isspace() and (marked or len(gap) > 1))
        out.append(" " if breaks else "")
        i = g.end()
    out.append(s[i:])
    return "".join(out)


def _spaced(text: str) -> View | None:
    """Runs of spaced-out letters (``I g n o r e``, ``i.g.n.o.r.e``) joined into words."""
    return _rewrite(text, _SPACED, _join_spaced, "spaced")


# --- digits for letters -----------------------------------------------------------------

_LEET = str.maketrans("013457@$", "oieastas")
_LEET_WORD = re.compile(r"(?<![\w@$])(?=[\w@$]*[a-zA-Z])(?=[\w@$]*[013457@$])[a-zA-Z013457@$]{3,}(?![\w@$])")


_DIGITS = "0123456789"


def _leetish(word: str) -> bool:
    """A digit stands for a letter inside the word or at its start, not only as a
    trailing counter (``start2``, ``sha1``, ``utf8`` are names, not disguises)."""
    return any(c in "013457@$" for c in word.rstrip(_DIGITS))


def _leet(text: str, stems: frozenset[str]) -> View | None:
    """Digits read as the letters they imitate (``0`` o, ``1`` i, ``3`` e, ``4`` a, ``5``
    s, ``7`` t, ``@`` a, ``$`` s) in words that mix them with letters (a digit inside the
    word or at its start), when at least two such words then read as words the detectors
    know."""
    words = [w for w in _LEET_WORD.findall(text) if _leetish(w)]
    if len(words) < 2:
        return None
    if sum(w.translate(_LEET)[:5].lower() in stems for w in words) < 2:
        return None
    return _rewrite(text, _LEET_WORD, lambda m: m.group().translate(_LEET) if _leetish(m.group()) else None, "leet")


# --- markup and string escapes ------------------------------------------------------------

_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,9});")
_NUMERIC_ENTITIES = re.compile(r"(?:&#[xX]?[0-9a-fA-F]{1,7};[^&]{0,3}){3}")
_PERCENT = re.compile(r"(?<!\S)[^\s%]*%[0-9A-Fa-f]{2}(?:[^\s%]*%[0-9A-Fa-f]{2}){2,}[^\s%]*")
_PERCENT_ONE = re.compile(r"%[0-9A-Fa-f]{2}")
_ESCAPES = re.compile(r"(?:\\(?:u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|x[0-9a-fA-F]{2})[^\\\s]{0,3}){3,}")
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|x([0-9a-fA-F]{2}))")


def _entities(text: str) -> View | None:
    """HTML character references decoded, when at least three numeric ones come close
    together (a named ``&lt;`` or ``&amp;`` alone is ordinary markup)."""
    if "&#" not in text or _NUMERIC_ENTITIES.search(text) is None:
        return None
    return _rewrite(text, _ENTITY, lambda m: html.unescape(m.group()), "entities")


def _percent(text: str) -> View | None:
    """Percent-escapes decoded in a token that holds at least three (``+`` read as a
    space inside such a token)."""
    if text.count("%") < 3 or len(_PERCENT_ONE.findall(text)) < 3:
        return None

    def decode(m: re.Match[str]) -> str | None:
        out = unquote(m.group().replace("+", " "), errors="strict")
        return out if out != m.group() else None

    try:
        return _rewrite(text, _PERCENT, decode, "percent")
    except UnicodeDecodeError:
        return None


def _unescape(m: re.Match[str]) -> str:
    def one(e: re.Match[str]) -> str:
        code = int(e.group(1) or e.group(2) or e.group(3), 16)
        return chr(code) if code < 0x110000 and not 0xD800 <= code < 0xE000 else e.group()

    return _ESCAPE.sub(one, m.group())


def _escapes(text: str) -> View | None:
    """``\\uXXXX``, ``\\UXXXXXXXX`` and ``\\xXX`` escapes decoded, in runs of three or more."""
    if len(_ESCAPE.findall(text)) < 3:
        return None
    return _rewrite(text, _ESCAPES, _unescape, "escapes")


# --- base64 and hex ------------------------------------------------------------------------

_B64_RUN = re.compile(rb"b{16,}")
_HEX_RUN = re.compile(rb"h{24,}|(?:hh[ :]){11,}hh")
_UPPER = bytes(range(65, 91))
_LOWER = bytes(range(97, 123))
_DIGITS_PLUS = b"0123456789+/"


def _b64_token(tok: str, mask: bytes) -> str | None:
    """``tok`` decoded when it reads as text; ``mask``: its bytes. Base64 of text mixes
    upper and lower case and digits throughout: a word, a name in CamelCase, a path or a
    constant in capitals is no candidate (and is not decoded at all)."""
    if len(mask.translate(None, _DIGITS_PLUS)) == len(mask):
        return None  # base64 of a sentence has digits, "+" or "/" (1 of 3,000 composed payloads has none)
    upper = len(mask) - len(mask.translate(None, _UPPER))
    lower = len(mask) - len(mask.translate(None, _LOWER))
    if upper < 3 or lower < 3:
        return None
    try:
        tok = tok.rstrip("=")
        s = base64.b64decode(tok + "=" * (-len(tok) % 4), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    return s if _reads_as_text(s) else None


def _hex_token(tok: str) -> str | None:
    digits = re.sub(r"[ :]", "", tok)
    try:
        s = bytes.fromhex(digits[: len(digits) // 2 * 2]).decode("utf-8")
    except ValueError:
        return None
    s = s.strip()
    return s if _reads_as_text(s) else None


def _runs(
    text: str,
    raw: bytes,
    classes: bytes,
    run: re.Pattern[bytes],
    decode: Callable[[str, bytes], str | None],
    *,
    seeds: tuple[bytes, bytes] | None = None,
) -> list[tuple[int, int, str]]:
    """``(start, end, decoded)`` of the runs of ``run`` over the byte classes of ``text``
    (``raw``: its one-byte-per-character form) that ``decode`` reads. ``seeds``: a byte
    string and a needle in it that every run holds (the runs are then looked for only
    where the needle is found, not by scanning the whole text)."""
    out = []
    if seeds is None:
        spans = [(m.start(), m.end()) for m in run.finditer(classes)]
    else:
        hay, needle = seeds
        spans, at = [], hay.find(needle)
        while at >= 0:
            start = at
            while start > 0 and classes[start - 1] == classes[at]:
                start -= 1
            m = run.match(classes, start)
            end = m.end() if m else at + len(needle)
            if m:
                spans.append((start, end))
            at = hay.find(needle, end)
    for s, e in spans:
        piece = decode(text[s:e], raw[s:e])
        if piece is not None:
            out.append((s, e, piece))
    return out


_B64_SEED = b"b" * 16


def _base64(text: str, raw: bytes, alnum: bytes) -> View | None:
    """Tokens of sixteen base64 characters or more that decode to text (looked for where
    sixteen letters and digits come in a row)."""
    runs = _runs(text, raw, raw.translate(_B64_BYTES), _B64_RUN, _b64_token, seeds=(alnum, _B64_SEED))
    return _pieces(text, runs, "base64")


def _pieces(text: str, pieces: list[tuple[int, int, str]], channel: str) -> View | None:
    return _Builder(text).pieces(pieces, channel) if pieces else None


# --- bytes written to be decoded: binary digits, base32, character codes, Morse ---------------


def _text_of(data: bytes) -> str | None:
    """``data`` as UTF-8 text when it reads as words (two at least: a carrier with no use
    in prose needs no more, :data:`CARRIERS`)."""
    try:
        s = data.decode("utf-8").strip()
    except UnicodeDecodeError:
        return None
    return s if _reads_as_words(" ".join(s.split())) else None


def _reads_as_words(s: str) -> bool:
    """Printable, two words or more, mostly letters and spaces."""
    return _reads_as_text(s, words=2, least=5)


_BINARY = re.compile(r"(?<![01])[01]{8}(?:[ ,;]?[01]{8}){3,}(?![01])")


def _binary(text: str) -> View | None:
    """Runs of four or more bytes written as eight binary digits (``01101111 01100010``)."""

    def decode(m: re.Match[str]) -> str | None:
        digits = re.sub(r"[ ,;]", "", m.group())
        return _text_of(bytes(int(digits[i : i + 8], 2) for i in range(0, len(digits), 8)))

    return _rewrite(text, _BINARY, decode, "binary")


_BASE32 = re.compile(r"(?<![A-Za-z0-9])[A-Z2-7]{16,}={0,6}(?![A-Za-z0-9=])")


def _base32(text: str) -> View | None:
    """Tokens of sixteen or more base32 characters (capitals and 2–7) that decode to text."""

    def decode(m: re.Match[str]) -> str | None:
        tok = m.group().rstrip("=")
        try:
            return _text_of(base64.b32decode(tok + "=" * (-len(tok) % 8)))
        except (binascii.Error, ValueError):
            return None

    return _rewrite(text, _BASE32, decode, "base32")


_CHARCODES = re.compile(r"(?<![\d.])\d{1,3}(?:[ \t]*,[ \t]*\d{1,3}){7,}(?![\d.])")


def _charcodes(text: str) -> View | None:
    """Lists of eight or more character codes (``[97, 99, 116, 32, …]``, what
    ``String.fromCharCode`` or ``chr`` turns into text)."""

    def decode(m: re.Match[str]) -> str | None:
        codes = [int(c) for c in m.group().split(",")]
        if any(not (32 <= c < 127 or c in (9, 10)) for c in codes):
            return None
        return _text_of(bytes(codes))

    return _rewrite(text, _CHARCODES, decode, "charcodes")


#: Morse code: the letter or digit each code stands for
MORSE_CODE = dict(
    zip(
        ".- -... -.-. -.. . ..-. --. .... .. .--- -.- .-.. -- -. --- .--. --.- .-. ... - ..- ...- .-- -..- -.-- "  # noqa: SIM905
        "--.. ----- .---- ..--- ...-- ....- ..... -.... --... ---.. ----.".split(),
        "abcdefghijklmnopqrstuvwxyz0123456789",
        strict=True,
    )
)
_MORSE = re.compile(r"(?<![\w.-])[.-]{1,6}(?:(?:[ ]+/?[ ]*|/[ ]*)[.-]{1,6}){7,}(?![\w.-])")


def _morse(text: str) -> View | None:
    """Runs of eight or more Morse letters, words parted by ``/`` or by three spaces."""

    def decode(m: re.Match[str]) -> str | None:
        words = []
        for word in re.split(r"[ ]*/[ ]*|[ ]{3,}", m.group()):
            letters = [MORSE_CODE.get(code) for code in word.split()]
            if None in letters:
                return None
            words.append("".join(letters))  # type: ignore[arg-type]
        s = " ".join(w for w in words if w)
        return s if _reads_as_words(s) else None

    return _rewrite(text, _MORSE, decode, "morse")


# --- invisible carriers: bits as zero-width characters, bytes as variation selectors -------

_ZERO_RUN = re.compile("[\u200b\u200c\u200d\u2060\ufeff]{16,}")


def _bits_of(run: str) -> str | None:
    """The text a run of zero-width characters spells: its two commonest characters are the
    bits (either way round), any third one parts bytes or marks the start."""
    counts = sorted(((run.count(ch), ch) for ch in set(run)), reverse=True)
    if len(counts) < 2:
        return None
    zero, one = counts[0][1], counts[1][1]
    groups = [g for g in re.split(f"[^{zero}{one}]", run) if g]
    for low_bit in (zero, one):
        bits = ["".join("0" if ch == low_bit else "1" for ch in g) for g in groups]
        if any(len(g) % 8 for g in bits):
            continue
        data = bytes(int(g[i : i + 8], 2) for g in bits for i in range(0, len(g), 8))
        s = _text_of(data)
        if s is not None:
            return s
    return None


def _bits(text: str) -> View | None:
    """Runs of sixteen or more zero-width characters that spell text as bits."""
    return _rewrite(text, _ZERO_RUN, lambda m: _bits_of(m.group()), "bits")


_SELECTOR_RUN = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]{4,}")


def _selectors(text: str) -> View | None:
    """Runs of four or more variation selectors read as bytes (U+FE00–FE0F: 0–15,
    U+E0100–E01EF: 16–255), the way text is smuggled after an emoji."""

    def decode(m: re.Match[str]) -> str | None:
        data = bytes(ord(ch) - 0xFE00 if ord(ch) < 0xFE10 else ord(ch) - 0xE0100 + 16 for ch in m.group())
        return _text_of(data)

    return _rewrite(text, _SELECTOR_RUN, decode, "selectors")


# --- a line written backwards ------------------------------------------------------------------

#: the commonest English words, to tell a sentence from letters
FUNCTION_WORDS = frozenset(
    "the a an to of and or in on for with from by at as is are be this that it you "  # noqa: SIM905
    "your all any every now then not no do if when me my we our us they them their its into only".split()
)
#: common English words written backwards: one of them among a text's words opens the check
_BACKWARDS = frozenset(
    {"eht", "dna", "uoy", "ruoy", "siht", "taht", "htiw", "morf", "won", "lla", "rof", "yreve", "ton"}
)
_WORDS = re.compile(r"[^\W\d_]+")


def _known(words: list[str]) -> int:
    return sum(w in FUNCTION_WORDS for w in words)


def _reversed(text: str, words: list[str]) -> View | None:
    """Lines of four words or more that read as English backwards and not forwards (tried
    when a common word written backwards is one of ``words``, the text's)."""
    if _BACKWARDS.isdisjoint(words):
        return None
    pieces = []
    at = 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        line_words = _WORDS.findall(body.lower())
        if len(line_words) >= 4:
            back = body[::-1]
            ahead, behind = _known(line_words), _known(_WORDS.findall(back.lower()))
            if behind >= 2 and behind > ahead:
                pieces.append((at, at + len(body), back))
        at += len(line)
    return _pieces(text, pieces, "reversed")


# --- letters shifted or mirrored (Caesar, ROT-n, Atbash), named or not ------------------------

_LOWER_AZ = "abcdefghijklmnopqrstuvwxyz"


def _shifted(k: int) -> str:
    return _LOWER_AZ[k:] + _LOWER_AZ[:k]


# the tables that read a cipher back: a shift by k (k = 1…25) undone, and Atbash (its own inverse)
_BACK = [
    *(str.maketrans(_shifted(k) + _shifted(k).upper(), _LOWER_AZ + _LOWER_AZ.upper()) for k in range(1, 26)),
    str.maketrans(_LOWER_AZ + _LOWER_AZ.upper(), _LOWER_AZ[::-1] + _LOWER_AZ[::-1].upper()),
]
#: the enciphered forms of a few of the commonest words, each with the table that reads it back
_ENCIPHERED: dict[str, set[int]] = {}
for _i, _table_back in enumerate(_BACK):
    for _word in ("the", "and", "you", "your", "with", "this", "that", "from", "for"):
        _ENCIPHERED.setdefault(_word.translate({v: k for k, v in _table_back.items()}), set()).add(_i)
_ENCIPHERED_WORDS = frozenset(_ENCIPHERED)
_WORD_TRIGGERS = _ENCIPHERED_WORDS | _BACKWARDS
_LETTER_RUN = re.compile(r"[A-Za-z]+(?:[ ,'-]+[A-Za-z]+){3,}")


def _cipher(text: str, words: list[str]) -> View | None:
    """Runs of four words or more that hold no common English word but read as English
    once their letters are shifted back (ROT-n, Caesar) or mirrored (Atbash); tried only
    for the tables whose form of "the", "and", "you" … is one of ``words`` (the text's)."""
    tables = {i for w in _ENCIPHERED_WORDS.intersection(words) for i in _ENCIPHERED[w]}
    if not tables:
        return None
    pieces = []
    for m in _LETTER_RUN.finditer(text):
        run_words = _WORDS.findall(m.group().lower())
        if _known(run_words):
            continue
        for i in sorted(tables):
            back = m.group().translate(_BACK[i])
            known = _known(_WORDS.findall(back.lower()))
            if known >= 2 and 4 * known >= len(run_words):
                pieces.append((m.start(), m.end(), back))
                break
    return _pieces(text, pieces, "cipher")


#: the first words of a sentence that reports (a subject, a greeting), not one that orders
REPORT_OPENERS = frozenset(
    "the a an this that these those it its he she they we "  # noqa: SIM905
    "i our their his her my there here some hello hi hey dear thanks".split()
)


def says_something(piece: str, stems: frozenset[str] = frozenset(), channel: str = "") -> bool:
    """``piece`` reads as a sentence that orders or addresses its reader: four words or
    more, mostly letters, at least two of them among the commonest English words or the
    detectors' stems (``stems``), one in four at least (a decoded sentence, not a name, a
    key or letters that happen to decode; from a carrier with no use in prose,
    :data:`CARRIERS`, two words and one known word); and it does not open as a report
    does, with a subject, a greeting or a word in -ed, -ly or -ing (a tool's encoded
    "The meeting moved to Thursday." is data, "Publish the release now." is an order)."""
    words = _WORDS.findall(piece.lower())
    least, known_least = (2, 1) if channel in CARRIERS else (4, 2)
    if len(words) < least or not _reads_as_words(" ".join(piece.split())):
        return False
    first = words[0]
    if first in REPORT_OPENERS or (len(first) > 4 and first.endswith(("ed", "ly", "ing"))):
        return False
    known = sum(w in FUNCTION_WORDS or w[:5] in stems for w in words)
    return known >= known_least and 4 * known >= len(words)


# --- rot13, when the text names it -----------------------------------------------------------

_ROT_NAME = re.compile(r"(?i)\brot[ _-]?13\b")
_ROT13 = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", "NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm"
)


def _rot13(text: str) -> View | None:
    """The text after a mention of ROT13, rotated back (a rotation cannot be told from
    prose by its characters, so the channel's name is its trigger)."""
    m = _ROT_NAME.search(text)
    if m is None:
        return None
    b = _Builder(text)
    b.copy(0, m.end())
    b.same_length(text[m.end() :].translate(_ROT13), m.end())
    return b.view("rot13")


def _table(f: Callable[[str], str]) -> bytes:
    return bytes(ord(f(chr(c))) for c in range(256))


# byte classes of a text's UTF-8 form, for the triggers (one translate each, then
# substring tests: a few microseconds for a chunk of documentation)
_SHAPE = _table(
    lambda ch: "a" if ch.isascii() and ch.isalpha() else "1" if ch in "013457@$" else " " if ch in " \t/|.*_-" else "."
)
_B64_BYTES = _table(lambda ch: "b" if ch.isascii() and (ch.isalnum() or ch in "+/=") else " ")
# the trigger: sixteen letters and digits in a row (a path or a URL is parted by its
# slashes and dots; base64 of a sentence has such runs between its rare ``+`` and ``/``)
_ALNUM_BYTES = _table(lambda ch: "b" if ch.isascii() and ch.isalnum() else " ")
_HEX_BYTES = _table(lambda ch: "h" if ch in "0123456789abcdefABCDEF" else " " if ch in " :" else ".")
_BASE32_BYTES = _table(lambda ch: "u" if ch in "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567" else " ")
_BASE32_SEED = b"u" * 16
_CODE_BYTES = _table(lambda ch: "9" if ch in _DIGITS else "," if ch == "," else "x")


@lru_cache(maxsize=16384)
def views(text: str, stems: frozenset[str] = frozenset()) -> tuple[View, ...]:
    """The decoded views of ``text``, one per channel whose trigger matches and whose
    decoding changes something (most texts: none). ``stems``: the first five letters of
    the words the caller's detectors know (digits are read as letters only when a word
    then becomes one of them)."""
    raw = text.encode("ascii", "replace")  # one byte per character: offsets stay
    ascii_only = text.isascii()
    shape = raw.translate(_SHAPE)
    hexes = raw.translate(_HEX_BYTES)
    found = [
        _unicode(text),
        _bits(text) if not ascii_only and ("\u200b" in text or "\u200c" in text) else None,
        _selectors(text) if not ascii_only and _SELECTOR_RUN.search(text) else None,
        _spaced(text) if b"a a a a" in shape else None,
        _leet(text, stems) if shape.count(b"a1") >= 3 else None,
        _entities(text) if b"&#" in raw else None,
        _percent(text) if b"%" in raw else None,
        _escapes(text) if raw.count(b"\\") >= 3 else None,
        _base64(text, raw, alnum) if _B64_SEED in (alnum := raw.translate(_ALNUM_BYTES)) else None,
        _pieces(text, _runs(text, raw, hexes, _HEX_RUN, lambda t, _: _hex_token(t)), "hex")
        if b"h" * 24 in hexes or b"hh hh hh hh hh hh" in hexes
        else None,
        _base32(text) if _BASE32_SEED in raw.translate(_BASE32_BYTES) else None,
        _binary(text) if b"0110" in raw or b"0111" in raw else None,
        _charcodes(text) if raw.count(b",") >= 7 and raw.translate(_CODE_BYTES, b" \t").count(b"9,9") >= 7 else None,
        _morse(text) if (b".-" in raw or b"-." in raw) and raw.count(b".-") + raw.count(b"-.") >= 4 else None,
        *(
            (_reversed(text, words), _cipher(text, words))
            if not _WORD_TRIGGERS.isdisjoint(words := text.lower().split())
            else ()
        ),
        _rot13(text) if b"13" in raw else None,
    ]
    return tuple(v for v in found if v is not None and v.text.strip())


def decoded_spans(
    text: str,
    scan: Callable[[View], Sequence[tuple[int, int, str]]],
    stems: frozenset[str],
    boundaries: Callable[[str], Sequence[int]],
    cls: str = "hidden",
) -> list[tuple[int, int, str]]:
    """What ``scan`` finds in the decoded views of ``text``, as spans ``(start, end, cls)``
    of ``text``: each finding widened to the sentences of the original it was decoded
    from (``boundaries(text)``: the offsets where the caller's sentences start or end)."""
    found = views(text, stems)
    if not found:
        return []
    out: list[tuple[int, int, str]] = []
    bounds: list[int] | None = None
    for v in found:
        for s, e, _ in scan(v):
            lo, hi = v.origin(s, e)
            if bounds is None:
                bounds = sorted({0, len(text), *boundaries(text)})
            a = bounds[max(bisect_right(bounds, lo) - 1, 0)]
            b = bounds[min(bisect_left(bounds, hi), len(bounds) - 1)]
            while a < b and text[a].isspace():
                a += 1
            if a < b:
                out.append((a, b, cls))
    return out
