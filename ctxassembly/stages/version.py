"""Version stage: keep the version the question is about, drop (or label) the others.

The target comes from the caller, else from the question text ("in Django 5.1",
"v3.3", "Enterprise 4.2") matched against the versions present, else it is "current":
the latest version present per document family (``doc_id``; chunks without one form a
single family).

Versions compare with :class:`packaging.version.Version`. A string that is not PEP 440
("2024.03-lts", "Jan 2023") falls back to a natural key: runs of digits compare as
numbers, other runs as text, and any PEP 440 version sorts after any non-PEP 440 one.
A chunk with no version is kept and labelled ``unversioned``: we cannot know it is stale.

A chunk whose *subject* is another version (release notes "Django 4.0 release notes"
inside the 5.2 docs) still states old values as facts. With ``subject_versions`` on, such
chunks are treated as other-version chunks unless the question names that version.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Literal

from packaging.version import InvalidVersion, Version

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.stages.base import Context

__all__ = ["VersionFilter", "matches", "version_key", "versions_in"]

Policy = Literal["drop", "label"]
_POLICIES = ("drop", "label")

_VERSION_IN_TEXT = re.compile(r"(?<![\w.])v?(\d+(?:\.\d+){1,3})(?![\w]|\.\d)", re.IGNORECASE)
_SUBJECT = re.compile(
    r"(?<![\w.])v?(\d+(?:\.\d+){1,3})\b[^>]{0,20}?\b(?:release notes|changelog|what[’']?s new|upgrade notes)",
    re.IGNORECASE,
)
_SUBJECT_AFTER = re.compile(
    r"\b(?:release notes|changelog|what[’']?s new)\b\s*(?:for|in)?\s*(?:[A-Z][\w-]*\s+)?v?(\d+(?:\.\d+){1,3})\b",
    re.IGNORECASE,
)


@lru_cache(maxsize=4096)
def version_key(version: str) -> tuple[int, tuple[tuple[int, int | str], ...], Version | None]:
    """Sort key: PEP 440 where it parses, a natural (digit-aware) key otherwise."""
    try:
        return (1, (), Version(version))
    except InvalidVersion:
        parts = re.findall(r"\d+|[^\d\W]+", version.casefold())
        return (0, tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts), None)


def _key_cmp(version: str) -> tuple[object, ...]:
    tier, natural, pep = version_key(version)
    return (tier, pep) if pep is not None else (tier, natural)


@lru_cache(maxsize=4096)
def matches(version: str, target: str) -> bool:
    """``version`` is ``target`` or one of its releases ("5.1.3" matches "5.1")."""
    v, t = version.strip().casefold().lstrip("v"), target.strip().casefold().lstrip("v")
    return v == t or v.startswith(t + ".")


def versions_in(text: str) -> list[str]:
    """Version-like strings in ``text``, in order of appearance."""
    return [m.group(1) for m in _VERSION_IN_TEXT.finditer(text)]


def subject_version(chunk: Chunk) -> str | None:
    """The version a chunk is *about* when its title says so (release notes, changelogs)."""
    return _subject(chunk.title or "", (chunk.section or "").split(" > ")[0])


# Each subject pattern needs one of these words; most headings have none of them.
_SUBJECT_WORDS = ("release notes", "changelog", "new", "upgrade notes")


@lru_cache(maxsize=8192)
def _subject(title: str, top_section: str) -> str | None:
    heading = f"{title} > {top_section}" if top_section else title
    folded = heading.casefold()
    if not any(w in folded for w in _SUBJECT_WORDS):
        return None
    for pattern in (_SUBJECT, _SUBJECT_AFTER):
        m = pattern.search(heading)
        if m:
            return m.group(1)
    return None


def resolve_target(question: str, present: Iterable[str]) -> str | None:
    """The first version named in ``question`` that some chunk has (or is a release of).

    Dotted versions ("5.1", "v3.3") are found anywhere; a present version without a dot
    ("2024", "v2") counts only as a whole word of the question.
    """
    present = [p for p in present if p]
    for named in versions_in(question):
        if any(matches(p, named) for p in present):
            return named
    words = set(re.findall(r"[\w.-]+", question.casefold()))
    for p in present:
        if p.casefold() in words or p.casefold().lstrip("v") in words:
            return p
    return None


def family(chunk: Chunk) -> str | None:
    """The document family whose latest version is "current": the chunk's ``doc_id``.

    Chunks without a doc_id form one family (``None``). A corpus whose doc ids carry the
    version ("policy-2024") should name the version in the question or pass it; stripping
    versions out of ids merged unrelated families on the Django docs ("releases/5.1").
    """
    return chunk.doc_id


class VersionFilter:
    """Keep chunks of the target version (or the current one); drop or label the rest.

    :param policy: ``"drop"`` removes other-version chunks with reason ``superseded``
        (a newer version of the same document was kept: detail ``superseded_by``) or
        ``other_version``; ``"label"`` keeps them with ``meta["status"]`` set to
        ``superseded``/``other_version`` so the model sees the conflict.
    :param subject_versions: treat release notes of another version as other-version.
    :raises ConfigError: an unknown policy.
    """

    name = "version"

    def __init__(self, policy: Policy = "drop", *, subject_versions: bool = True) -> None:
        if policy not in _POLICIES:
            raise ConfigError(f"version policy must be one of {_POLICIES}, got {policy!r}")
        self.policy = policy
        self.subject_versions = subject_versions

    def _target(
        self, chunks: list[Chunk], ctx: Context
    ) -> tuple[str | None, dict[str | None, str], dict[str, tuple[object, ...]], set[str]]:
        """The target version (caller, question, or None for "latest per family"), the
        latest version per family, the sort key of every version present, and the
        versions the question names."""
        present = sorted({c.version for c in chunks if c.version}, key=_key_cmp)
        target, how = ctx.target_version, "caller"
        if target is None:
            target = resolve_target(ctx.question, present)
            how = "question"
        named = set(versions_in(ctx.question))
        if target is not None:
            ctx.target_version = target
        keys: dict[str, tuple[object, ...]] = {v: _key_cmp(v) for v in present}  # once per distinct version
        latest: dict[str | None, str] = {}  # family -> its newest version
        if target is None:
            how = "current"
            for c in chunks:
                if c.version:
                    fam = c.doc_id  # family(c)
                    if fam not in latest or keys[c.version] > keys[latest[fam]]:
                        latest[fam] = c.version
        ctx.report.note(self.name, "target", version=target, how=how, present=present)
        ctx.report.target_version = target if target is not None else (present[-1] if present else None)
        return target, latest, keys, named

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        target, latest, keys, named = self._target(chunks, ctx)
        fates: list[tuple[Chunk, str, dict[str, str] | None]] = []  # (chunk, status, detail)
        # decided once per distinct (version, wanted version) and per distinct heading
        match: dict[tuple[str, str], str | None] = {}  # -> "superseded" / "other_version" / None (it matches)
        subjects: dict[tuple[str | None, str | None], str | None] = {}
        current: dict[str, str] = {}  # family (or id) -> the first current chunk's id
        for c in chunks:
            version = c.version
            if not version:
                fates.append((c, "unversioned", None))
                continue
            want = target if target is not None else latest[c.doc_id]
            pair = (version, want)
            if pair in match:
                other = match[pair]
            else:
                other = match[pair] = (
                    None
                    if matches(version, want)
                    else ("superseded" if keys[version] < _key_cmp(want) else "other_version")
                )
            if other is not None:
                fates.append((c, other, {"version": version, "target": want}))
                continue
            if self.subject_versions:
                heading = (c.title, c.section)
                if heading in subjects:
                    subject = subjects[heading]
                else:
                    subject = subjects[heading] = subject_version(c)
                if subject is not None and not matches(subject, want) and not any(matches(subject, n) for n in named):
                    fates.append((c, "other_version", {"describes": subject, "target": want}))
                    continue
            fates.append((c, "current", None))
            current.setdefault(c.doc_id or c.id, c.id)  # family(c) or c.id

        out: list[Chunk] = []
        drop = self.policy == "drop"
        for c, status, detail in fates:
            if detail is None:  # current or unversioned
                out.append(c.with_meta(status=status))
                continue
            if status == "superseded" and (c.doc_id or c.id) in current:
                detail["superseded_by"] = current[c.doc_id or c.id]
            if drop:
                ctx.report.drop(c, self.name, status, **detail)
            else:
                labels = {k: v for k, v in detail.items() if k not in ("target", "version")}
                out.append(c.with_meta(status=status, **labels))
        return out
