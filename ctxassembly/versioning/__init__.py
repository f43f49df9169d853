"""Where a chunk's version really is, and which document it is a version of.

Real loaders rarely write a ``version`` field. A web loader gives the page URL
(``https://docs.example.org/en/5.1/ref/databases/``), a directory reader the file path
(``docs/guide-4.2-install.md``), and many corpora carry the version only in a title or in
the text's own notes ("New in version 5.1"). :func:`resolve_all` looks in each of those
places, in order of trust, and says where the version came from:

1. ``field``: the chunk's ``version``, else the first of ``version_keys`` in its metadata
   (``version``, ``release``, ``doc_version`` ...). A value that is a URL or a path is read
   as a location instead (``MetadataKeys(version="source")`` used to make the whole URL the
   version).
2. ``path``: a segment of a location (metadata ``source``, ``url``, ``file_path``,
   ``file_name`` ..., then the chunk's ``doc_id``): a version-shaped segment (``5.1``,
   ``4.2.x``, ``v3``, ``-5.1-`` inside a file name) or an alias (``stable``, ``latest``,
   ``dev`` ...). The *variant axis* is discovered from the candidate set itself: a segment
   that differs between otherwise identical locations, for at least two documents, is a
   version axis even when its spelling is unknown (``42`` for 4.2, ``r7``); and where a
   location holds several version-shaped segments (``/5.2/releases/5.1/``) the first one is
   the version unless the axis says otherwise.
3. ``title``: a version in the title or the top heading, when the same title occurs with
   another version in the candidate set (a lone "Python 3.12 support" is no version of
   these docs).
4. ``text``: the body's own change notes (``versionadded``/``versionchanged``/
   ``versionremoved``/``deprecated`` directives, "New in 5.1", "Changed in version 5.1",
   "Deprecated since 5.1", "As of 5.1"), versions the text names after the question's
   product word ("in Acme 5.1", outside a sentence about the future), and changes it
   announces ("will be removed in 6.0": a ceiling). They give a
   *floor*, not a version: the text is at least that new. The chunk keeps no version label;
   the version stage uses the floor against the target.

The document identity ("the same document in another version") never contains the
version: the location with its version segment removed, else ``doc_id`` (when it is not
itself a location), else the title with its version removed.

Nothing here names a product, a site or a path: the shapes are generic, and the axis is
learnt per call from the candidates.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

from ctxassembly.chunk import Chunk
from ctxassembly.twin import unfrozen_twin

__all__ = [
    "DEV_ALIASES",
    "LOCATION_KEYS",
    "RELEASE_ALIASES",
    "VERSION_KEYS",
    "Resolved",
    "canonical",
    "ceilings_in",
    "floors_in",
    "mentions_in",
    "resolve_all",
    "same_version",
    "subjects_in",
    "versions_in",
]

Provenance = Literal["field", "path", "title", "text"]

#: metadata keys that hold a version, in order of trust (the chunk's own field comes first)
VERSION_KEYS: tuple[str, ...] = (
    "version",
    "release",
    "doc_version",
    "docs_version",
    "product_version",
    "software_version",
    "api_version",
)
#: metadata keys that hold a location; LangChain loaders write ``source``, LlamaIndex
#: readers ``file_path``/``file_name`` (web readers ``url``); the chunk's ``doc_id`` (the
#: LlamaIndex ``ref_doc_id``) is read after them
LOCATION_KEYS: tuple[str, ...] = ("source", "url", "file_path", "file_name", "filename", "path", "link")
#: aliases of "the released version" and of "the unreleased one"; both compare after any number
RELEASE_ALIASES = frozenset({"stable", "latest", "current"})
DEV_ALIASES = frozenset({"dev", "devel", "development", "main", "master", "nightly", "unstable", "trunk"})

_SHAPE = re.compile(r"v?\d+(?:\.\d+)+(?:\.[x*])?|v\d+(?:\.[x*])?|\d+\.[x*]", re.IGNORECASE)
_EXT = re.compile(r"\.(?=[a-z])[a-z0-9]{2,5}$", re.IGNORECASE)
_SPLIT = re.compile(r"[-_\s+]+")
_IN_TEXT = re.compile(r"(?<![\w.])v?(\d+(?:\.\d+){1,3})(?![\w]|\.\d)", re.IGNORECASE)
# a change note right before a dotted version; found from the numbers (rare) backwards,
# which is ten times faster than scanning every position for the note's words
_DOTTED_NUM = re.compile(r"\d+(?:\.\d+){1,3}\b")  # a digit first: the regex engine skips ahead fast
_CUE_BEFORE = re.compile(
    r"(?:\.\.\s+(?:versionadded|versionchanged|versionremoved|deprecated)::\s*"
    r"|\b(?:new|changed|added|deprecated)\s+in\s+(?:version\s+)?"
    r"|\b(?:deprecated\s+since|as\s+of|since)\s+(?:version\s+)?)(?:``|`)?$",
    re.IGNORECASE,
)
# a change announced for a later version ("will be removed in 6.0", "in 9.1 it will
# only ..."): the text was written before that version, a *ceiling*
_NUM = r"(?:``)?v?(\d+(?:\.\d+){0,3})(?:``)?(?![\w.]*\d)"
_NAME = r"(?:(version|[A-Za-z][\w-]*)\s+)?"
_IN_VERSION = re.compile(rf"\bin\s+{_NAME}{_NUM}", re.IGNORECASE)
_FLOOR_WORDS = ("version", "deprecated", "new in", "added in", "changed in", "as of", "since")


@dataclass(frozen=True, slots=True)
class Resolved:
    """One chunk's version, where it came from, and its version-free document identity.

    ``version`` is canonical (``v5.1``, ``5.1.x`` -> ``5.1``; a compact ``42`` stays
    ``42``); ``spelling`` is as written; ``key`` names the field or metadata key read.
    ``floor`` is the newest version the text's own change notes name (``source`` is
    ``"text"`` and ``version`` ``None`` then); ``cues`` are all of them. ``ceiling`` is the
    oldest version the text announces a change for ("will be removed in 6.0"): the text
    predates it. ``subject`` is a dotted version naming the page itself in its location
    (``.../releases/4.2/``): the page is about that version, whatever its docs version.
    ``site`` is the location before its version segment (``https://host/en/`` of
    ``https://host/en/5.1/intro``): the documents that share it are one set of docs,
    released together. Only a release-shaped segment (``5.1``, ``v2``, ``5.x``) has one:
    a bare ``2024`` may be an archive's year. ``about`` are the versions the text itself
    describes ("Acme 4.2 supports ..."; see :func:`subjects_in`).
    """

    version: str | None = None
    source: Provenance | None = None
    key: str | None = None
    spelling: str | None = None
    document: str | None = None
    floor: str | None = None
    cues: tuple[str, ...] = ()
    ceiling: str | None = None
    subject: str | None = None
    about: tuple[str, ...] = ()
    site: str | None = None


#: a :class:`Resolved` under construction (:func:`~ctxassembly.twin.unfrozen_twin`)
_UnfrozenResolved = unfrozen_twin(Resolved)


def _resolved(  # noqa: PLR0917 - Resolved's fields, as its constructor takes them
    version: str | None = None,
    source: Provenance | None = None,
    key: str | None = None,
    spelling: str | None = None,
    document: str | None = None,
    floor: str | None = None,
    cues: tuple[str, ...] = (),
    ceiling: str | None = None,
    subject: str | None = None,
    about: tuple[str, ...] = (),
    site: str | None = None,
) -> Resolved:
    """``Resolved(...)`` at a fraction of its cost: the frozen dataclass's ``__init__``
    sets each of the eleven fields through ``object.__setattr__`` (about 19k instructions),
    and the version stage resolves every chunk within the depth, twice when it widens."""
    r: Any = object.__new__(_UnfrozenResolved)
    r.version = version
    r.source = source
    r.key = key
    r.spelling = spelling
    r.document = document
    r.floor = floor
    r.cues = cues
    r.ceiling = ceiling
    r.subject = subject
    r.about = about
    r.site = site
    r.__class__ = Resolved
    out: Resolved = r
    return out


def versions_in(text: str) -> list[str]:
    """Version-like strings in ``text``, in order of appearance."""
    return [m.group(1) for m in _IN_TEXT.finditer(text)]


@lru_cache(maxsize=8192)
def canonical(spelling: str) -> str:
    """``v5.1`` -> ``5.1``, ``4.2.x`` -> ``4.2``, ``Stable`` -> ``stable``; others stripped."""
    s = spelling.strip().casefold()
    if len(s) > 1 and s[0] == "v" and s[1].isdigit():
        s = s[1:]
    for tail in (".x", ".*", "-x"):
        if s.endswith(tail) and len(s) > len(tail):
            s = s[: -len(tail)]
    return s


@lru_cache(maxsize=8192)
def same_version(version: str, target: str) -> bool:
    """``version`` is ``target``, a release of it (``5.1.3`` of ``5.1``) or its compact
    spelling (``51``/``r51`` for ``5.1``, ``20`` for ``2.0``)."""
    v, t = canonical(version), canonical(target)
    if v == t or v.startswith(t + "."):
        return True
    if "." in v and "." in t:
        return False
    # one of them is compact: compare the digits (only when the compact one has no dots)
    vd, td = re.sub(r"\D", "", v), re.sub(r"\D", "", t)
    return bool(vd) and vd == td and (v.isalnum() or t.isalnum())


def floors_in(text: str) -> tuple[str, ...]:
    """Versions the text's change notes name ("versionadded:: 5.1", "New in version 5.1")."""
    low = text.lower()
    if not any(word in low for word in _FLOOR_WORDS):
        return ()  # most texts: no note, decided without a regex
    search = _CUE_BEFORE.search
    out = []
    for m in _DOTTED_NUM.finditer(text):
        start = m.start()
        if start and text[start - 1] in "vV":
            start -= 1
        if start and (text[start - 1].isalnum() or text[start - 1] in "._"):
            continue
        before = text[max(0, start - 40) : start]
        cue = search(before)
        if cue is None:
            continue
        # "will be deprecated in 6.0" announces, it does not note: no floor
        if not cue.group().startswith("..") and _FUTURE_WORDS.search(before[: cue.start()].rsplit(". ", 1)[-1]):
            continue
        out.append(m.group())
    return tuple(dict.fromkeys(out))


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*:])|\n\s*\n")
_FUTURE_WORDS = re.compile(r"\b(?:will|would|shall|scheduled|planned|to be|future|upcoming|next|until|soon)\b", re.I)


def mentions_in(text: str, names: Iterable[str]) -> tuple[str, ...]:
    """Versions the text names after one of ``names`` (the word the question puts before its
    version: "pytest 9.1", "Django 5.0") outside a sentence about the future: the text
    knows that version, so it is at least that new."""
    names = [n for n in names if n]
    if not names:
        return ()
    folded = tuple(sorted({n.casefold() for n in names}))
    pattern = _mention_pattern(folded)
    # a name, spaces, a digit: what every mention starts with, searched in the lower-cased
    # text by a case-sensitive regex (fast; exact for ASCII, where lower() keeps offsets
    # and the regex's IGNORECASE folds nothing else onto these letters)
    needle = _name_before_digit(folded, r"\s") if text.isascii() else None
    if needle is not None:
        if not needle.search(text.lower()):
            return ()
    elif not pattern.search(text):
        return ()
    out: list[str] = []
    for sentence in _SENTENCE.split(text):
        if needle is not None and not needle.search(sentence.lower()):
            continue  # no mention in this sentence (a mention in a sentence is one in the text)
        if _FUTURE_WORDS.search(sentence):
            continue
        out.extend(m.group(1) for m in pattern.finditer(sentence))
    return tuple(dict.fromkeys(out))


@lru_cache(maxsize=64)
def _name_before_digit(names: tuple[str, ...], space: str) -> re.Pattern[str] | None:
    """One of the (case-folded) ``names``, ``space`` characters and a digit, case-sensitive,
    for lower-cased ASCII text: a necessary condition of the mention and subject patterns.
    ``None`` when a name is not ASCII (then only the patterns themselves decide)."""
    if not all(n.isascii() for n in names):
        return None
    return re.compile(rf"(?:{'|'.join(re.escape(n) for n in names)}){space}+v?\d")


def subjects_in(text: str, names: Iterable[str]) -> tuple[str, ...]:
    """Versions a sentence of the text is about: it opens with one of ``names`` and a
    version, then a verb in the present ("Acme 4.2 supports PostgreSQL 12 and higher.",
    "Acme 4.2.1 fixes several bugs", "Acme 5.0 is ..."). Release notes speak so of their
    own release; a reference page of another version speaks of itself without a number."""
    names = [n for n in names if n]
    if not names:
        return ()
    folded = tuple(sorted({n.casefold() for n in names}))
    needle = _name_before_digit(folded, r"[ \t]") if text.isascii() else None
    if needle is not None and not needle.search(text.lower()):
        return ()  # no name followed by a version: most texts (see mentions_in)
    pattern = _subject_pattern(folded)
    return tuple(dict.fromkeys(m.group(1) for m in pattern.finditer(text)))


@lru_cache(maxsize=64)
def _subject_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(n) for n in names)
    return re.compile(
        rf"(?:^|(?<=[.!?:])[ \t]+|\n[ \t]*)(?i:{alternatives})[ \t]+v?(\d+(?:\.\d+){{1,3}})[ \t]+"
        r"(?:(?:also|now|officially)[ \t]+)?(?:is|has|[a-z]+[^s\W]s)\b"
    )


@lru_cache(maxsize=64)
def _mention_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(n) for n in names)
    return re.compile(rf"\b(?:{alternatives})\s+v?(\d+(?:\.\d+){{1,3}})\b(?!\.?\d)", re.IGNORECASE)


def ceilings_in(text: str, names: Iterable[str] = ()) -> tuple[str, ...]:
    """Versions the text announces a future change for ("will be removed in 6.0").

    A dotted number counts alone or after "version"; any number after one of ``names``
    (the word the question puts before its version: "in pytest 10"). "Will run in 3
    seconds" and "will be dropped in Python 3.13" name no version of these docs.
    """
    low = text.lower()
    at = low.find("will")
    if at < 0:
        return ()  # the common case, decided without a regex
    allowed = {n.casefold() for n in names}
    out = []
    while at >= 0:
        if (at == 0 or not low[at - 1].isalnum()) and not low[at + 4 : at + 5].isalnum():
            # the sentence around "will", at most 120 characters either side
            left = max(low.rfind(". ", 0, at) + 1, low.rfind("\n\n", 0, at), at - 120, 0)
            ends = [i for i in (low.find(". ", at), low.find("\n\n", at)) if i >= 0]
            right = min([*ends, at + 120, len(text)])
            for m in _IN_VERSION.finditer(text, left, right):
                name, number = m.group(1), m.group(2)
                folded = (name or "").casefold()
                if folded in allowed or ((not name or folded == "version") and "." in number):
                    out.append(number)
        at = low.find("will", at + 4)
    return tuple(dict.fromkeys(out))


# -- locations ---------------------------------------------------------------------------


@lru_cache(maxsize=16384)
def _parse(location: str) -> tuple[str, tuple[str, ...]] | None:
    """``(host, tokens)``: the path split at ``/`` and, inside a segment, at ``-``/``_``;
    the last segment loses its extension. ``None`` for a value that is no location."""
    s = location.strip()
    if not s or "\n" in s or len(s) > 2048:
        return None
    host = ""
    if "://" in s:
        parts = urlsplit(s)
        host, path = parts.netloc.casefold(), unquote(parts.path)
    else:
        path = s.replace("\\", "/")
    segments = [seg for seg in path.split("/") if seg]
    if not segments:
        return None
    segments[-1] = _EXT.sub("", segments[-1]) or segments[-1]
    tokens = tuple(t for seg in segments for t in _SPLIT.split(seg) if t)
    return (host, tokens) if tokens else None


def _looks_like_location(value: str) -> bool:
    return "/" in value or "\\" in value or "://" in value


@lru_cache(maxsize=16384)
def _shaped(token: str) -> bool:
    return bool(_SHAPE.fullmatch(token)) or token.casefold() in RELEASE_ALIASES or token.casefold() in DEV_ALIASES


@lru_cache(maxsize=16384)
def _plausible(token: str) -> bool:
    """An unknown spelling on a discovered axis must carry a digit (or be an alias)."""
    return _shaped(token) or any(ch.isdigit() for ch in token)


def _axes(paths: Iterable[tuple[str, str, tuple[str, ...]]]) -> dict[tuple[str, str], dict[int, int]]:
    """Per (key, host): position -> number of documents seen there in two or more variants.

    Two locations that are equal except at position p are variants of one document along
    p; a version axis is a position along which several documents vary."""
    groups: dict[tuple[str, str, int, int, tuple[str, ...]], set[str]] = {}
    for key, host, tokens in set(paths):
        n = len(tokens)
        for p in range(n):
            groups.setdefault((key, host, n, p, tokens[:p] + tokens[p + 1 :]), set()).add(tokens[p])
    out: dict[tuple[str, str], dict[int, int]] = {}
    for (key, host, n, p, _rest), values in groups.items():
        if len(values) < 2:
            continue
        if not all(_plausible(v) for v in values):
            continue
        if p == n - 1 and not all(_shaped(v) for v in values):
            continue  # the last segment names the page; only a known shape there is a version
        counts = out.setdefault((key, host), {})
        counts[p] = counts.get(p, 0) + 1
    return out


def _version_at(tokens: tuple[str, ...], axis: dict[int, int]) -> int | None:
    """Which token of ``tokens`` is the version (None: none is)."""
    last = len(tokens) - 1
    # the last segment names the page ("releases/4.2" is about 4.2, in whatever docs
    # version): a version there needs the axis, two or more documents varying at it
    shaped = [p for p, t in enumerate(tokens) if _shaped(t) and (p < last or axis.get(p, 0) >= 2)]
    best = max(axis.items(), key=lambda kv: (kv[1], -kv[0]), default=None)
    if shaped:
        first = shaped[0]
        # the first version-shaped segment, unless it never varies and a later one does
        # across two or more documents ("/5.2/releases/5.1/" within one docs version
        # varies at "5.1" only once; across versions the first varies too)
        if axis.get(first, 0) == 0:
            later = [p for p in shaped[1:] if axis.get(p, 0) >= 2]
            if later:
                return max(later, key=lambda p: (axis[p], -p))
        return first
    if best is not None and best[1] >= 2 and best[0] < len(tokens) and _plausible(tokens[best[0]]):
        return best[0]  # an unknown spelling on the discovered axis
    return None


def _identity(host: str, tokens: tuple[str, ...], at: int | None) -> str:
    kept = tokens if at is None else tokens[:at] + tokens[at + 1 :]
    return f"{host}/{'/'.join(kept)}" if host else "/".join(kept)


def _locations(c: Chunk, keys: Sequence[str]) -> list[tuple[str, str]]:
    meta = c.meta._data  # the plain dict behind the read-only view: Mapping.get costs a try/except
    out = [(key, value) for key in keys if key in meta and isinstance(value := meta[key], str) and value.strip()]
    doc = c.doc_id
    if doc and (not out or all(doc != v for _, v in out)):
        out.append(("doc_id", doc))
    return out


def _field(c: Chunk, keys: Sequence[str]) -> tuple[str | None, str | None]:
    """``(value, key)`` of the version field (the chunk's own, then metadata keys)."""
    if c.version:
        return c.version, "version"
    meta = c.meta._data
    if not meta:
        return None, None  # a text-only candidate: no key to try
    for key in keys:
        value = meta.get(key)
        if (
            isinstance(value, (int, float))
            and not isinstance(value, bool)
            and not (isinstance(value, int) and abs(value) > 10**100)
        ):
            value = str(value)  # (a longer int is no version, and str() of one past 4,300 digits raises)
        if isinstance(value, str) and value.strip():
            return value.strip(), key
    return None, None


@lru_cache(maxsize=8192)
def _title_version(title: str) -> str | None:
    m = _IN_TEXT.search(title)
    return m.group(1) if m else None


def _strip_title(title: str, spelling: str) -> str:
    return re.sub(rf"(?<![\w.])v?{re.escape(spelling)}(?![\w]|\.\d)", "", title, count=1).strip()


def resolve_all(
    chunks: Sequence[Chunk],
    version_keys: Sequence[str] = VERSION_KEYS,
    location_keys: Sequence[str] = LOCATION_KEYS,
    text_cues: bool = True,
    names: Sequence[str] = (),
) -> tuple[list[Resolved], dict[str, object]]:
    """Each chunk's :class:`Resolved`, and what was learnt about the call (the axes found).

    Policy for what is missing: no version anywhere gives ``Resolved(version=None)`` (the
    stage keeps such chunks, labelled ``unversioned``); no location and no ``doc_id`` gives
    ``document=None`` (one family, as before).
    """
    fields = [_field(c, version_keys) for c in chunks]
    locs = [_locations(c, location_keys) for c in chunks]
    for i, (value, _key) in enumerate(fields):
        # a version field and a plain doc id (no location): nothing to learn from paths
        if value is not None and len(locs[i]) == 1 and locs[i][0][0] == "doc_id" and "://" not in locs[i][0][1]:
            locs[i] = []
    # a version field that is a URL or a path is a location, read like one
    for i, (value, key) in enumerate(fields):
        if value is not None and key is not None and _looks_like_location(value):
            locs[i] = [(key, value), *locs[i]]
            fields[i] = (None, None)
    parsed: list[list[tuple[str, str, tuple[str, ...]]]] = []
    for entries in locs:
        row = []
        for key, value in entries:
            p = _parse(value)
            if p is not None:
                row.append((key, p[0], p[1]))
        parsed.append(row)
    axes = _axes(entry for row in parsed for entry in row)
    titled = _Titles(chunks)  # learnt on first use: most calls resolve every chunk before titles
    out: list[Resolved] = []
    for c, (value, key), row in zip(chunks, fields, parsed, strict=True):
        out.append(_resolve_one(c, value, key, row, axes=axes, titled=titled, text_cues=text_cues, names=tuple(names)))
    found = {f"{k}@{h}" if h else k: {str(p): n for p, n in sorted(a.items())} for (k, h), a in axes.items() if a}
    return out, {"axes": found}


def _resolve_one(
    c: Chunk,
    value: str | None,
    key: str | None,
    row: list[tuple[str, str, tuple[str, ...]]],
    *,
    axes: dict[tuple[str, str], dict[int, int]],
    titled: _Titles,
    text_cues: bool,
    names: tuple[str, ...],
) -> Resolved:
    # every location's version and identity (the first location that has one wins)
    path_hit: tuple[str, str, str, str | None] | None = None  # (spelling, key, identity, site)
    subject: str | None = None
    plain_identity: str | None = None
    for lkey, host, tokens in row:
        at = _version_at(tokens, axes.get((lkey, host), {}))
        if at is None:
            if plain_identity is None:
                plain_identity = _identity(host, tokens, None)
            continue
        if path_hit is None:
            # a site only behind a release-shaped segment ("5.1", "v2"): a bare "2024" may
            # be an archive's year, whose pages are no releases of one set of docs
            site = f"{lkey}:{host}/{'/'.join(tokens[:at])}" if _SHAPE.fullmatch(tokens[at]) else None
            path_hit = (tokens[at], lkey, _identity(host, tokens, at), site)
            page = tokens[-1]
            if at != len(tokens) - 1 and "." in page and _SHAPE.fullmatch(page):
                subject = canonical(page)
    # the doc id names the document unless it is itself a location (a URL, or a copy of
    # ``source``); a location that carries the version names it better still: a reader's
    # per-file id (LlamaIndex ``ref_doc_id``) differs between the versions of one page
    own_doc = c.doc_id if c.doc_id and not _doc_id_is_location(c, row) else None
    if value is not None:
        # a plain doc id that happens to hold the version ("releases/5.1" of the 5.1 docs)
        # still names its own document; only a real location is stripped of it
        located = path_hit is not None and (path_hit[1] != "doc_id" or own_doc is None)
        site = None
        if path_hit is not None and located and same_version(path_hit[0], value):
            document: str | None = path_hit[2]
            site = path_hit[3]
        else:
            document = own_doc or plain_identity or c.doc_id
        return _resolved(
            canonical(value), "field", key, value, document, subject=subject if located else None, site=site
        )
    if path_hit is not None:
        spelling, lkey, identity, site = path_hit
        return _resolved(canonical(spelling), "path", lkey, spelling, identity, subject=subject, site=site)
    document = own_doc or plain_identity or c.doc_id
    for text, tkey in ((c.title, "title"), ((c.section or "").split(" > ")[0], "section")):
        if text and text in titled:
            found = _title_version(text)
            if found is not None:
                return _resolved(canonical(found), "title", tkey, found, document or _strip_title(text, found))
    if text_cues:
        cued = _text_cues(c.text, names)
        if cued is not None:
            floor, cues, ceiling, about = cued
            return _resolved(None, "text", "text", floor or ceiling, document, floor, cues, ceiling, about=about)
    return _resolved(document=document)


@lru_cache(maxsize=8192)
def _text_cues(
    text: str, names: tuple[str, ...]
) -> tuple[str | None, tuple[str, ...], str | None, tuple[str, ...]] | None:
    """``(floor, change-note versions, ceiling, subjects)`` the text's cues give, or ``None``
    when it has none; cached by text, so a passage retrieved for several versions (or
    again by a later call) is read once."""
    cues, future = floors_in(text), ceilings_in(text, names)
    known = (*cues, *mentions_in(text, names))
    if not known and not future:
        return None
    floor = max(known, key=_floor_key) if known else None
    ceiling = min(future, key=_floor_key) if future else None
    return floor, cues, ceiling, subjects_in(text, names)


class _Titles:
    """The titles of :func:`_title_axis`, computed the first time one is looked up."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        self._chunks: Sequence[Chunk] = chunks
        self._titles: frozenset[str] | None = None

    def __contains__(self, title: str) -> bool:
        if self._titles is None:
            self._titles = _title_axis(self._chunks)
        return title in self._titles


def _title_axis(chunks: Sequence[Chunk]) -> frozenset[str]:
    """Titles (and top headings) whose version is a version of the document: the same
    title with another version occurs in the set ("Acme 3.1 guide" / "Acme 3.2 guide").
    A lone "Python 3.12 support" names a version of something else as often as not."""
    seen: dict[str, dict[str, str]] = {}  # title minus version -> version -> title
    for c in chunks:
        for text in (c.title, (c.section or "").split(" > ")[0]):
            if text:
                found = _title_version(text)
                if found is not None:
                    seen.setdefault(_strip_title(text, found).casefold(), {})[canonical(found)] = text
    return frozenset(t for variants in seen.values() if len(variants) >= 2 for t in variants.values())


def _doc_id_is_location(c: Chunk, row: list[tuple[str, str, tuple[str, ...]]]) -> bool:
    """The doc id is a location when it repeats a location value (LangChain's adapter copies
    ``source`` into it) or is a URL."""
    if c.doc_id is None:
        return False
    if "://" in c.doc_id:
        return True
    return any(c.meta.get(k) == c.doc_id for k, _, _ in row if k != "doc_id")


def _floor_key(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in v.split(".") if p.isdigit())
