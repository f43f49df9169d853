"""Release headings: a changelog is many versions in one file.

A section under a *release heading* is about that release, whatever docs version the
file ships in: the ``CHANGES`` file of release 8.2.1 holds the notes of 8.2.0, 8.1.7 and
7.0, each under its own heading. This module finds those headings, generally:

* the heading's text is a version with at most two words before it ("Version 7.1.2",
  "Release 2.0", "Acme 5.0.0", "v1.4"), optionally in brackets, optionally followed by a
  date or "(unreleased)" ("7.1.2 (2020-04-27)", "[8.2.0] - 2024-05-01",
  "5.0.0 — May 3, 2019");
* a heading is a reST title (a line over an underline of one repeated punctuation
  character at least as long), a Markdown ``#`` line, or a component of the chunk's
  section path (``Changelog > 5.0.0 (2019-06-28) > Features``);
* it is a *release* heading when it carries a date, or a line right below it says when it
  was released ("Released 2020-04-27", ":release-date: 2025-04-25", "Release date: ..."),
  or, for a bare version, when the document holds two or more versions under such
  headings among the candidates (:func:`sections`).

No rule names a product or one project's markup: the shapes are those of changelogs in
general (reST and Markdown, dated or not).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from ctxassembly.chunk import Chunk

__all__ = ["Sections", "heading_version", "release_headings", "sections"]

_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_DATE = (
    r"(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}"  # 2020-04-27
    rf"|\d{{1,2}}\s+{_MONTH},?\s+\d{{4}}"  # 27 April 2020
    rf"|{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}"  # April 27, 2020
    r"|unreleased|not\s+(?:yet\s+)?released|in\s+development|tbd|tba)"
)
_VERSION = r"v?(\d+(?:\.\d+){1,3}(?:[-.]?(?:a|b|rc|alpha|beta|dev|post)\d*)?)"
#: the whole heading: up to two words, the version (maybe bracketed), maybe a date
_HEADING = re.compile(
    rf"^(?:[A-Za-z][\w-]*\s+){{0,2}}\[?{_VERSION}\]?"
    rf"(?P<tail>\s*(?:[-–—:,]\s*|\(\s*|\s+(?:released\s+|on\s+)?)(?P<date>{_DATE})\s*\)?)?\s*$",
    re.IGNORECASE,
)
#: a line right below a heading that says when it was released
_RELEASED = re.compile(rf"^\s*:?(?:released|release[- ]date|date)\b:?\s*(?:on\s+)?{_DATE}", re.IGNORECASE)
_UNDERLINE = re.compile(r"^([=\-~^\"'*+#_:.`])\1{2,}\s*$")
_MARKDOWN = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
_UNDERLINE_CHARS = frozenset("=-~^\"'*+#_:.`")  # what an underline is made of (_UNDERLINE's class)
_WORDS_BEFORE_LIMIT = 60  # a heading longer than this is a sentence, not a version heading


@lru_cache(maxsize=16384)
def heading_version(heading: str) -> tuple[str, bool] | None:
    """``(version, dated)`` when ``heading`` is a version heading, else ``None``.

    >>> heading_version("7.1.2 (2020-04-27)")
    ('7.1.2', True)
    >>> heading_version("Version 8.0.0")
    ('8.0.0', False)
    >>> heading_version("Dropped support for MariaDB 10.4") is None
    True
    """
    text = heading.strip().strip("*_`").strip()
    if not text or len(text) > _WORDS_BEFORE_LIMIT or not any(ch.isdigit() for ch in text):
        return None
    m = _HEADING.match(text)
    if m is None:
        return None
    return m.group(1), m.group("date") is not None


#: the opening of an underline (what :data:`_UNDERLINE` matches) on the line after a
#: newline; the regex opens with a literal, so the engine looks for it at C speed
_UNDERLINE_OPENING = re.compile(r"\n([=\-~^\"'*+#_:.`])\1\1")
_DIGIT = re.compile(r"\d")


@lru_cache(maxsize=8192)
def release_headings(text: str) -> tuple[tuple[int, str, bool], ...]:
    """The version headings in ``text``: ``(offset of the heading line, version, is a
    release)``; a release heading carries a date or has a "Released ..." line below it."""
    out: list[tuple[int, str, bool]] = []
    for at in _heading_lines(text):
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        line = text[at:end]
        if not _DIGIT.search(line):
            continue  # no version in it (heading_version's first test)
        candidate: str | None = None
        md = _MARKDOWN.match(line) if line.startswith("#") else None
        rest = _lines_below(text, end, 7)
        if md is not None:
            candidate, below = md.group(1), rest
        elif (
            rest
            and rest[0][:1] in _UNDERLINE_CHARS
            and line.strip()
            and _UNDERLINE.match(rest[0])
            and len(rest[0].rstrip()) >= len(line.strip())
        ):
            candidate, below = line, rest[1:]
        if candidate is None:
            continue
        found = heading_version(candidate)
        if found is None:
            continue
        version, dated = found
        if not dated:
            following = [ln for ln in below[:6] if ln.strip()][:2]
            dated = any(_RELEASED.match(ln) for ln in following)
        out.append((at, version, dated))
    if out and not any(ch.isdigit() for ch in text[:20000]):
        return ()  # a text without a digit in its first 20,000 characters has none (the old early exit)
    return tuple(out)


def _heading_lines(text: str) -> list[int]:
    """The offsets, in order, of the lines of ``text`` that may be headings: a line that
    opens with ``#`` (Markdown) and a line over one that opens with three of an underline's
    characters (reST). Every other line fails :func:`release_headings`'s tests, so they are
    found by substring search instead of a test per line."""
    found = {text.rfind("\n", 0, m.start()) + 1 for m in _UNDERLINE_OPENING.finditer(text)}
    if text.startswith("#"):
        found.add(0)
    i = text.find("\n#")
    while i >= 0:
        found.add(i + 1)
        i = text.find("\n#", i + 1)
    return sorted(found)


def _lines_below(text: str, end: int, n: int) -> list[str]:
    """The first ``n`` lines after the line that ends at ``end`` (fewer at the end of ``text``),
    as ``text.split("\\n")`` gives them."""
    out: list[str] = []
    while end < len(text) and len(out) < n:
        nxt = text.find("\n", end + 1)
        nxt = len(text) if nxt < 0 else nxt
        out.append(text[end + 1 : nxt])
        end = nxt
    return out


@dataclass(frozen=True, slots=True)
class Sections:
    """The releases one chunk's text is about.

    ``leading`` is the release the chunk's first line belongs to (the heading it opens
    with, else the one its section path ends under, else the last heading of the candidate
    right before it in the same file); ``None``: not known. ``inside`` are the releases
    of the headings inside its text after its first line. ``at_most`` bounds a chunk whose
    own heading is not known: in a file whose headings run newest first, the nearest
    heading above it (by offsets, among the candidates) is the newest it can be under.
    """

    leading: str | None
    inside: tuple[str, ...]
    at_most: str | None = None

    @property
    def all(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*([self.leading] if self.leading else []), *self.inside)))


#: a chunk whose start is this close after another's end continues it (splitters drop the
#: whitespace between their chunks)
_CONTINUES = 16


def sections(chunks: Sequence[Chunk], documents: Sequence[str | None]) -> list[Sections | None]:
    """Per chunk, the releases its text is about, or ``None`` for a chunk that is not a
    section of a changelog (most chunks).

    ``documents`` are the chunks' version-free document identities: a bare version
    heading (no date, no "Released" line) counts only when its document shows two or more
    versions under headings among the candidates, a changelog's mark; a dated one counts
    alone.
    """
    found: list[tuple[tuple[str, bool] | None, tuple[tuple[int, str, bool], ...]]] = []
    per_document: dict[str | None, set[str]] = {}
    for c, doc in zip(chunks, documents, strict=True):
        from_section = None
        if c.section:
            for part in reversed(c.section.split(" > ")[1:]):
                from_section = heading_version(part)
                if from_section is not None:
                    break
        in_text = release_headings(c.text)
        found.append((from_section, in_text))
        versions = {v for _, v, _ in in_text} | ({from_section[0]} if from_section else set())
        if versions:
            per_document.setdefault(doc, set()).update(versions)
    if not per_document:  # no version heading anywhere (most calls): no chunk is a changelog's section
        return [None] * len(found)
    out: list[Sections | None] = []
    heads: list[list[tuple[int, str]]] = []  # per chunk: (offset in its file, release) of its headings
    for c, (from_section, in_text), doc in zip(chunks, found, documents, strict=True):
        changelog = len(per_document.get(doc, ())) >= 2
        kept = [(offset, v) for offset, v, dated in in_text if dated or changelog]
        start = c.start or 0
        heads.append([(start + offset, v) for offset, v in kept])
        leading = None
        if kept and _opens_with(c.text, kept[0][0]):
            leading, kept = kept[0][1], kept[1:]
        elif from_section is not None and (from_section[1] or changelog):
            leading = from_section[0]
            heads[-1].insert(0, (start, leading))
        out.append(Sections(leading, tuple(v for _, v in kept)) if leading or kept else None)
    return _continued(chunks, out, heads)


def _opens_with(text: str, offset: int) -> bool:
    """Only markup stands before ``offset``: blank lines, reST labels and directives, an
    overline, an HTML comment."""
    for line in text[:offset].split("\n"):
        s = line.strip()
        if s and not (s.startswith(("..", "<!--", "<a ")) or _UNDERLINE.match(s)):
            return False
    return True


def _continued(
    chunks: Sequence[Chunk], out: list[Sections | None], heads: list[list[tuple[int, str]]]
) -> list[Sections | None]:
    """A chunk without a leading release, right after a changelog chunk of the same file
    (by offsets), continues that chunk's last section; one further down a file whose
    headings run newest first is bounded by the nearest heading above it (``at_most``)."""
    by_file: dict[tuple[object, ...], list[int]] = {}
    for i, c in enumerate(chunks):
        if c.start is not None:
            # only string locations name a file (an odd value, a list or a dict, names none
            # and is not hashable)
            where = (c.meta.get("source"), c.meta.get("file_path"), c.meta.get("url"))
            key = (c.doc_id, *(v if isinstance(v, str) else None for v in where), c.version)
            by_file.setdefault(key, []).append(i)
    for members in by_file.values():
        members.sort(key=lambda i: chunks[i].start or 0)
        for a, b in itertools.pairwise(members):
            prev, cur = chunks[a], chunks[b]
            last = out[a].all[-1] if out[a] is not None and out[a].all else None  # type: ignore[union-attr]
            end = prev.end if prev.end is not None else (prev.start or 0) + len(prev.text)
            if last is None or cur.start is None or not 0 <= cur.start - end <= _CONTINUES:
                continue
            mine = out[b]
            if mine is None:
                out[b] = Sections(last, ())
            elif mine.leading is None:
                out[b] = Sections(last, mine.inside)
        known = sorted(h for i in members for h in heads[i])
        if len({v for _, v in known}) < 2 or not _newest_first([v for _, v in known]):
            continue
        for i in members:
            mine, start = out[i], chunks[i].start or 0
            if mine is not None and mine.leading is not None:
                continue
            above = [v for p, v in known if p < start]
            if above:
                out[i] = Sections(None, mine.inside if mine is not None else (), at_most=above[-1])
    return out


def _newest_first(versions: Sequence[str]) -> bool:
    """The versions, in file order, never rise: a changelog written newest first."""
    from ctxassembly.versioning.order import order_key

    keys = [order_key(v) for v in versions]
    return all(a >= b for a, b in itertools.pairwise(keys))
