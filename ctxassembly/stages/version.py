"""Version stage: keep the version the question is about, drop (or label) the others.

Each chunk's version comes from where it really is (:mod:`ctxassembly.versioning`): a
version field, a segment of its URL or file path, its title, or the text's own change
notes; the chunk says where (``meta["version_from"]``: ``field``, ``path``, ``title`` or
``text``). The target comes from the caller, else from the question text ("in Django 5.1",
"v3.3", "Enterprise 4.2") matched against the versions present in any spelling (``5.1`` is
``v5.1``, ``5.1.x`` and a compact ``51``), else it is "current": the latest version
present per document family (the document's identity without its version: the location
minus its version segment, else ``doc_id``; chunks without either form one family). A
question that names a version no candidate can be matched to gets a report note.

Text-only candidates carry no version, only change notes that give a *floor* ("New in
5.1": the text is 5.1 or newer) or a *ceiling* ("will be removed in 6.0": it predates
6.0). Against a target, a floor newer than the target marks an other-version chunk, a
ceiling at or below it a superseded one, and a near-copy of a passage whose note holds at
the target (it names the target itself, or announces a change for a later version),
without that note, is another version's copy. A text that states facts of a release
("Acme 4.2 supports ...") describes that release; such a text about the target tells its
copy of a variant pair (the same passage, other figures) from another version's. With no
version named and none anywhere, the newest note that two or more texts carry stands for
"current" in these rules, and of two copies that differ only in version numbers the
higher is the newer. Where no evidence decides, the copies stay; the dedup stage pairs
them as conflicts, and the arrange stage keeps them adjacent, shown as
``status="conflicting"``. A text's note never outranks a version from metadata: the
question's version is matched to the notes only when no candidate carries a version.

A chunk whose page path names another version (``.../releases/4.2/`` inside the 5.2
docs) is about that version, like release notes by their title (below).

Versions compare with :class:`packaging.version.Version`. A string that is not PEP 440
("2024.03-lts", "Jan 2023") falls back to a natural key: runs of digits compare as
numbers, other runs as text, and any PEP 440 version sorts after any non-PEP 440 one.
A chunk with no version is kept and labelled ``unversioned``: we cannot know it is stale.

A chunk whose *subject* is another version (release notes "Django 4.0 release notes"
inside the 5.2 docs) still states old values as facts. With ``subject_versions`` on, such
chunks are treated as other-version chunks unless the question names that version.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache
from itertools import chain
from typing import Literal

from packaging.version import InvalidVersion, Version

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.pipeline import Context, StageBase
from ctxassembly.text.lexical import facts, jaccard, normalize, shingles
from ctxassembly.versioning import (
    DEV_ALIASES,
    LOCATION_KEYS,
    RELEASE_ALIASES,
    VERSION_KEYS,
    Resolved,
    canonical,
    resolve_all,
    same_version,
    versions_in,
)

__all__ = ["VersionFilter", "matches", "version_key", "versions_in"]

Policy = Literal["drop", "label"]
_POLICIES = ("drop", "label")

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
    """Order for "latest": unreleased aliases (``dev``, ``main``) first, then versions,
    then release aliases (``stable``, ``latest``), which name the newest release."""
    folded = version.casefold()
    if folded in DEV_ALIASES:
        return (-1, folded)
    if folded in RELEASE_ALIASES:
        return (3, folded)
    tier, natural, pep = version_key(version)
    return (tier, pep) if pep is not None else (tier, natural)


def matches(version: str, target: str) -> bool:
    """``version`` is ``target``, one of its releases ("5.1.3" matches "5.1") or another
    spelling of it ("v5.1", "5.1.x", compact "51")."""
    return same_version(version, target)


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


def _keys(name: str, value: object) -> tuple[str, ...]:
    """Validate a metadata key list option (one str or a sequence of str)."""
    if isinstance(value, str):
        value = (value,)
    if not isinstance(value, (tuple, list)) or not all(isinstance(k, str) and k for k in value):
        raise ConfigError(f"{name} must be a metadata key or a sequence of keys (non-empty str), got {value!r}")
    return tuple(value)


def _newer(floor: str, target: str) -> bool:
    """The floor is a later version than the target (both dotted; otherwise unknown: False)."""
    if "." not in canonical(target) or same_version(floor, target):
        return False
    return _key_cmp(floor) > _key_cmp(canonical(target))


def _names_before_versions(question: str, target: str | None) -> tuple[str, ...]:
    """The words a question puts right before a version ("pytest" of "in pytest 8.3"):
    before the target's version when the question names it ("Django" of "Django 3.2 on
    Python 3.13"), else before any version."""
    pairs = re.findall(r"([A-Za-z][\w-]*)\s+v?(\d+(?:\.\d+)+)\b", question)
    if target is not None and any(same_version(v, target) for _, v in pairs):
        pairs = [(n, v) for n, v in pairs if same_version(v, target)]
    return tuple(dict.fromkeys(n for n, _ in pairs))


def _at_least(target: str, ceiling: str) -> bool:
    """The target is the ceiling's version or later (the text predates the target)."""
    t = canonical(target)
    if not any(ch.isdigit() for ch in t) or same_version(t, ceiling):
        return same_version(t, ceiling)
    return _key_cmp(t) >= _key_cmp(canonical(ceiling))


_WORDS = re.compile(r"\w+")


def _covers_without(anchor: str, cue_at: int, other: str) -> bool:
    """``other`` spans the place of the note at ``cue_at`` in ``anchor`` without the note:
    it holds the words that lead up to the note and goes on after them, or it holds words
    that follow the note. A chunk that merely ends before the note is no evidence."""
    words = _WORDS.findall(other)
    lead = _WORDS.findall(anchor[max(0, cue_at - 300) : cue_at])[-8:]
    n = len(lead)
    if n >= 4 and any(words[i : i + n] == lead for i in range(len(words) - n)):
        return True
    end = anchor.find("\n\n", cue_at)
    trail = _WORDS.findall(anchor[end : end + 400]) if end >= 0 else []
    grams = {tuple(trail[i : i + 6]) for i in range(len(trail) - 5)}
    return any(tuple(words[i : i + 6]) in grams for i in range(len(words) - 5))


class VersionFilter(StageBase):
    """Keep chunks of the target version (or the current one); drop or label the rest.

    :param version_policy: ``"drop"`` removes other-version chunks with reason ``superseded``
        (a newer version of the same document was kept: detail ``superseded_by``) or
        ``other_version``; ``"label"`` keeps them with ``meta["status"]`` set to
        ``superseded``/``other_version`` so the model sees the conflict.
    :param subject_versions: treat release notes of another version as other-version.
    :param version_keys: metadata keys that may hold the version, after the chunk's own
        ``version`` field (default :data:`~ctxassembly.versioning.VERSION_KEYS`).
    :param location_keys: metadata keys that may hold a URL or file path carrying the
        version, read before ``doc_id`` (default :data:`~ctxassembly.versioning.LOCATION_KEYS`:
        ``source``, ``url``, ``file_path``, ``file_name`` ...).
    :param text_cues: read the text's change notes ("New in 5.1") of chunks that have no
        version anywhere else.
    :raises ConfigError: an unknown policy or a bad key list.
    """

    name = "version"

    def __init__(
        self,
        version_policy: Policy = "drop",
        *,
        subject_versions: bool = True,
        version_keys: Sequence[str] | str = VERSION_KEYS,
        location_keys: Sequence[str] | str = LOCATION_KEYS,
        text_cues: bool = True,
    ) -> None:
        if version_policy not in _POLICIES:
            raise ConfigError(f"version_policy must be one of {_POLICIES}, got {version_policy!r}")
        self.version_policy = version_policy
        self.subject_versions = subject_versions
        self.version_keys = _keys("version_keys", version_keys)
        self.location_keys = _keys("location_keys", location_keys)
        self.text_cues = text_cues

    def _target(
        self, chunks: list[Chunk], resolved: list[Resolved], ctx: Context, learnt: dict[str, object]
    ) -> tuple[str | None, dict[str | None, str], set[str]]:
        """The target version (caller, question, or None for "latest per family"), the
        latest version per family, and the versions the question names."""
        present = sorted({r.version for r in resolved if r.version}, key=_key_cmp)
        named = set(versions_in(ctx.question))
        target, how = ctx.target_version, "caller"
        why = "given by the caller"
        unmatched = ""
        if target is None:
            target = resolve_target(ctx.question, present)
            how = "question"
            if target is not None:
                spellings = [p for p in present if matches(p, target)] or [target]
                why = f"the question names {target}; candidates carry {', '.join(spellings)}"
            elif not present:
                # only where no candidate carries a version: a text saying "New in 9.9" must
                # not make 9.9 the target over versions real metadata gives (it would drop
                # every one of them as superseded)
                cues = {cue for r in resolved for cue in r.cues}
                target = next((n for n in versions_in(ctx.question) if any(same_version(c, n) for c in cues)), None)
                how = "question (matched to the text's change notes)"
                why = f"the question names {target}; only the texts' change notes name it"
            if target is None and named:
                unmatched = f"the question names {', '.join(sorted(named))}; no candidate's version matches it" + (
                    f" (present: {', '.join(present)})" if present else " (no candidate carries a version)"
                )
                ctx.report.note(self.name, "unmatched_version", named=sorted(named), present=present, why=unmatched)
        if target is not None:
            ctx.target_version = target
        latest: dict[str | None, str] = {}  # family -> its newest version
        if target is None:
            how = "current"
            why = "no version from the caller or the question: the latest version of each document"
            if unmatched:
                why = f"{unmatched}; so the latest version of each document"
            for r in resolved:
                if r.version:
                    fam = r.document
                    if fam not in latest or _key_cmp(r.version) > _key_cmp(latest[fam]):
                        latest[fam] = r.version
        sources: dict[str, int] = {}
        for r in resolved:
            if r.source is not None:
                sources[r.source] = sources.get(r.source, 0) + 1
        detail: dict[str, object] = {"version": target, "how": how, "why": why, "present": present, "from": sources}
        if learnt.get("axes"):
            detail["axes"] = learnt["axes"]
        ctx.report.note(self.name, "target", **detail)
        ctx.report.target_version = target if target is not None else (present[-1] if present else None)
        return target, latest, named

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        names = _names_before_versions(ctx.question, ctx.target_version)
        resolved, learnt = resolve_all(chunks, self.version_keys, self.location_keys, self.text_cues, names)
        target, latest, named = self._target(chunks, resolved, ctx, learnt)
        ctx.report.note(
            self.name,
            "resolved",
            chunks=[
                [c.index, c.id, r.version or r.floor or r.ceiling, r.source, r.key]
                for c, r in zip(chunks, resolved, strict=True)
                if r.source is not None
            ],
        )
        fates: list[tuple[Chunk, str, dict[str, str] | None]] = []  # (chunk, status, detail)
        # decided once per distinct (version, wanted version) and per distinct heading
        match: dict[tuple[str, str], str | None] = {}  # -> "superseded" / "other_version" / None (it matches)
        subjects: dict[tuple[str | None, str | None], str | None] = {}
        current: dict[str, str] = {}  # family (or id) -> the first current chunk's id
        # text-only candidates and no version named: the newest change note of the set
        # stands for "current" (that release's docs carry it; older copies lack it, older
        # texts announce changes it has made); a floor can never exceed it
        text_target = target if target is not None else _newest_note(chunks, resolved, latest)
        if text_target is not None and target is None:
            why = "no candidate carries a version: the newest change note (in two or more texts) stands for current"
            ctx.report.note(self.name, "text_target", version=text_target, why=why)
        lacking = self._lacking_note(chunks, resolved, text_target) if text_target is not None else {}
        for i, (chunk, r) in enumerate(zip(chunks, resolved, strict=True)):
            c = _labelled(chunk, r)
            if not r.version:
                fates.append((c, *_text_fate(r, text_target, lacking.get(i), named)))
                continue
            want = target if target is not None else latest[r.document]
            pair = (r.version, want)
            if pair not in match:
                match[pair] = self._compare(r.version, want)
            other = match[pair]
            if other is not None:
                fates.append((c, other, {"version": r.version, "target": want, "from": str(r.source)}))
                continue
            if self.subject_versions:
                heading = (c.title, c.section)
                if heading not in subjects:
                    subjects[heading] = subject_version(c)
                subject = subjects[heading] or r.subject  # the heading's, else the page path's
                if subject is not None and not matches(subject, want) and not any(matches(subject, n) for n in named):
                    fates.append((c, "other_version", {"describes": subject, "target": want}))
                    continue
            fates.append((c, "current", None))
            current.setdefault(r.document or c.id, c.id)
        if text_target is not None:
            for j, (witness, fact) in _contradicted(chunks, resolved, fates, text_target).items():
                detail = {"contradicts": witness, "fact": fact, "from": "text", "target": text_target}
                fates[j] = (fates[j][0], "other_version", detail)
        if target is None and not latest:
            for j, (newer, figure) in _outgrown(chunks, resolved, fates).items():
                fates[j] = (fates[j][0], "superseded", {"newer_copy": newer, "figure": figure, "from": "text"})
        return self._apply(fates, resolved, current, ctx)

    def _apply(
        self,
        fates: list[tuple[Chunk, str, dict[str, str] | None]],
        resolved: list[Resolved],
        current: dict[str, str],
        ctx: Context,
    ) -> list[Chunk]:
        """Drop (or label) the other-version chunks; label the kept ones with their provenance."""
        out: list[Chunk] = []
        drop = self.version_policy == "drop"
        for (c, status, detail), r in zip(fates, resolved, strict=True):
            if detail is None:  # current or unversioned
                out.append(c.with_meta(status=status, **_provenance(r)))
                continue
            fam = r.document or c.id
            if status == "superseded" and fam in current:
                detail["superseded_by"] = current[fam]
            if drop:
                ctx.report.drop(c, self.name, status, **detail)
            else:
                labels = {k: v for k, v in detail.items() if k not in ("target", "version", "from")}
                out.append(c.with_meta(status=status, **labels, **_provenance(r)))
        return out

    @staticmethod
    def _compare(version: str, want: str) -> str | None:
        if matches(version, want):
            return None
        folded = version.casefold()
        if folded in RELEASE_ALIASES or folded in DEV_ALIASES or want.casefold() in RELEASE_ALIASES:
            return "other_version"  # an alias has no place in the order of numbered releases
        return "superseded" if _key_cmp(version) < _key_cmp(canonical(want)) else "other_version"

    @staticmethod
    def _lacking_note(chunks: list[Chunk], resolved: list[Resolved], target: str) -> dict[int, tuple[str, str]]:
        """Unversioned chunks that are the passage of an anchor whose change note holds at
        the target, without that note: the target's own docs carry the note, so such a copy
        is another version's (older, or newer with the note pruned). A note holds at the
        target when it names the target itself ("versionchanged:: 5.1" for 5.1), or when it
        announces a change for a later version ("will change ... in 5.0" for 4.2, from an
        anchor no newer than the target): the docs drop such a note once the change is made."""
        anchors = []
        for i, r in enumerate(resolved):
            if r.version is not None:
                continue
            for cue in r.cues:
                if same_version(cue, target):
                    at = _cue_position(chunks[i].text, cue)
                    if at is not None:
                        anchors.append((i, cue, at))
                    break
            else:
                pending = r.ceiling is not None and not _at_least(target, r.ceiling)
                if pending and not (r.floor is not None and _newer(r.floor, target)):
                    assert r.ceiling is not None
                    at = _ceiling_position(chunks[i].text, r.ceiling)
                    if at is not None:
                        anchors.append((i, r.ceiling, at))
        if not anchors:
            return {}
        out: dict[int, tuple[str, str]] = {}
        anchor_ids = {i for i, _, _ in anchors}
        notes = {cue for _, cue, _ in anchors}
        lengths = [len(chunks[i].text) for i, _, _ in anchors]
        low, high = 0.4 * min(lengths), max(lengths) / 0.4
        copies = [
            j
            for j, r in enumerate(resolved)
            if r.version is None
            and j not in anchor_ids
            and low <= len(chunks[j].text) <= high  # lengths farther apart share no half their shingles
            and not any(same_version(c, target) for c in r.cues)
            and not (r.ceiling is not None and r.ceiling in notes)  # it carries the pending note too
        ]
        if not copies:
            return {}
        sh = {j: shingles(chunks[j].text) for j in (*anchor_ids, *copies)}
        near = set(_pairs_with(sh, sorted(anchor_ids), 0.5))
        for j in copies:
            text = chunks[j].text
            for i, cue, at in anchors:
                if (min(i, j), max(i, j)) not in near:
                    continue
                a = chunks[i].text
                if min(len(a), len(text)) < 0.4 * max(len(a), len(text)) or normalize(a) == normalize(text):
                    continue
                if _covers_without(a, at, text):
                    out[j] = (cue, chunks[i].id)
                    break
        return out


def _cue_position(text: str, cue: str) -> int | None:
    m = re.search(rf"(?:\.\.\s+\w+::\s*|\b(?:in|since)\s+(?:version\s+)?)v?{re.escape(cue)}\b", text, re.I)
    return m.start() if m is not None else None


def _contradicted(
    chunks: list[Chunk], resolved: list[Resolved], fates: list[tuple[Chunk, str, dict[str, str] | None]], target: str
) -> dict[int, tuple[str, str]]:
    """Text-only variants (the same passage with different numbers) that a text about the
    target itself contradicts: when "Acme 4.2 supports X 10.4 and higher" is among the
    candidates, of two copies "X 10.4 and higher" / "X 10.5 and higher" the one whose own
    figures the witness never states, while the other's it does, is another version's.
    -> {index: (witness id, the figure)}."""
    witnesses = [
        i
        for i, r in enumerate(resolved)
        if r.version is None and fates[i][1] == "unversioned" and any(same_version(v, target) for v in r.about)
    ]
    if not witnesses:
        return {}
    seen = {fact: chunks[i].id for i in witnesses for fact in facts(chunks[i].text) if fact.startswith("num:")}
    open_ = [
        j
        for j, r in enumerate(resolved)
        if r.version is None and fates[j][1] == "unversioned" and j not in witnesses and not r.about
    ]
    # a copy the witness can settle holds one of the witness's figures (a number of two or
    # more characters, as written): found by one regex, before any shingling
    written = {m.group() for i in witnesses for m in _WRITTEN.finditer(chunks[i].text)}
    if not written:
        return {}
    queries = [
        j
        for j in open_
        if any(w in chunks[j].text for w in written) and not written.isdisjoint(_WRITTEN.findall(chunks[j].text))
    ]
    if not queries:
        return {}
    sh = {j: shingles(chunks[j].text) for j in open_}
    out: dict[int, tuple[str, str]] = {}
    for a, b in _pairs_with(sh, queries, 0.6):
        fa, fb = _figures(chunks[a].text), _figures(chunks[b].text)
        only_a, only_b = fa - fb, fb - fa
        stated_a, stated_b = only_a & seen.keys(), only_b & seen.keys()
        if stated_a and not stated_b and only_b:
            fact = min(stated_a)
            out.setdefault(b, (seen[fact], fact[4:]))
        elif stated_b and not stated_a and only_a:
            fact = min(stated_b)
            out.setdefault(a, (seen[fact], fact[4:]))
    return out


_WRITTEN = re.compile(r"(?<![\w.,])\d[\d.,]*\d(?![\w]|[.,]\d)")


def _pairs_with(sh: dict[int, frozenset[int]], queries: Sequence[int], threshold: float) -> list[tuple[int, int]]:
    """Pairs ``(a, b)``, ``a < b``, one of them in ``queries``, whose shingle sets have a
    Jaccard of ``threshold`` or more: the shared shingles are counted from an index of the
    queries' shingles (C-level set intersections pick each set's candidates), so the cost
    follows what the few queries share, not the number of pairs."""
    post: dict[int, list[int]] = {}
    for a in queries:
        for x in sh[a]:
            post.setdefault(x, []).append(a)
    indexed = post.keys()
    pairs: set[tuple[int, int]] = set()
    for b, s in sh.items():
        common = s & indexed
        if not common:
            continue
        shared: Counter[int] = Counter(chain.from_iterable(post[x] for x in common))
        for a, n in shared.items():
            if a != b and n / (len(sh[a]) + len(s) - n) >= threshold:  # the Jaccard, from the counts
                pairs.add((a, b) if a < b else (b, a))
    return sorted(pairs)


def _figures(text: str) -> frozenset[str]:
    """The numbers of ``text`` (``num:`` facts, as the dedup guard compares them)."""
    return frozenset(f for f in facts(text) if f.startswith("num:"))


def _variant_pairs(sh: dict[int, frozenset[int]], threshold: float) -> list[tuple[int, int]]:
    """Pairs ``(a, b)``, ``a < b``, whose shingle sets have a Jaccard of ``threshold`` or
    more. Prefix filtering (Bayardo et al., "Scaling up all pairs similarity search", WWW
    2007): with shingles ordered rarest first, two such sets share one of the first
    ``len - ceil(threshold * len) + 1`` shingles of each. A shingle no other set holds
    matches nothing, so a set whose prefix is all such shingles is skipped unsorted, and
    only sets that share a rare shingle are compared, not every pair of a thousand."""
    union: set[int] = set()
    multi: set[int] = set()
    for s in sh.values():  # the shingles two or more sets hold, in C-level set operations
        multi |= s & union
        union |= s
    freq = Counter(chain.from_iterable(s & multi for s in sh.values()))
    postings: dict[int, list[int]] = {}
    prefixes: dict[int, list[int]] = {}
    for j, s in sh.items():
        shared = list(s & multi)
        room = len(s) - math.ceil(threshold * len(s)) + 1 - (len(s) - len(shared))
        if room <= 0:
            continue  # too few shingles anyone else holds to reach the threshold with anyone
        shared.sort(key=lambda x: (freq[x], x))
        prefixes[j] = shared[:room]
        for x in prefixes[j]:
            postings.setdefault(x, []).append(j)
    pairs: set[tuple[int, int]] = set()
    for a, prefix in prefixes.items():
        for x in prefix:
            for b in postings[x]:
                if b > a and (a, b) not in pairs and jaccard(sh[a], sh[b], threshold) >= threshold:
                    pairs.add((a, b))
    return sorted(pairs)


_DOTTED = re.compile(r"\d+(?:\.\d+)+")


def _outgrown(
    chunks: list[Chunk], resolved: list[Resolved], fates: list[tuple[Chunk, str, dict[str, str] | None]]
) -> dict[int, tuple[str, str]]:
    """With no version named and none known: of two text-only copies of one passage that
    differ only in version numbers ("supports Foo 3.21.0 and later" / "3.31.0 and later"),
    every one of them higher in one copy, that copy is the newer: requirements and
    supported releases only move up. -> {index of the older copy: (newer id, its figure)}."""
    open_ = [j for j, r in enumerate(resolved) if r.version is None and fates[j][1] == "unversioned"]
    sh = {j: shingles(chunks[j].text) for j in open_ if _DOTTED.search(chunks[j].text)}
    out: dict[int, tuple[str, str]] = {}
    for a, b in _variant_pairs(sh, 0.6):
        fa, fb = _figures(chunks[a].text), _figures(chunks[b].text)
        only_a, only_b = {f[4:] for f in fa - fb}, {f[4:] for f in fb - fa}
        if not only_a or len(only_a) != len(only_b):
            continue
        if not all(_DOTTED.fullmatch(f) for f in (*only_a, *only_b)):
            continue
        pairs = list(zip(sorted(only_a, key=version_key), sorted(only_b, key=version_key), strict=True))
        if all(version_key(x) < version_key(y) for x, y in pairs):
            out.setdefault(a, (chunks[b].id, pairs[0][1]))
        elif all(version_key(x) > version_key(y) for x, y in pairs):
            out.setdefault(b, (chunks[a].id, pairs[0][0]))
    return out


def _ceiling_position(text: str, ceiling: str) -> int | None:
    """Where the note announcing the change for ``ceiling`` starts: its paragraph, with a
    one-line paragraph right before it (a directive or a label such as "Deprecated:")."""
    # "will" and then, in the same paragraph, "in [name] <ceiling>"
    number = re.escape(ceiling)
    m = re.search(rf"\bwill\b(?:(?!\n\s*\n).){{0,400}}?\bin\s+(?:[\w-]+\s+)?(?:``)?v?{number}\b", text, re.I | re.S)
    if m is None:
        return None
    start = text.rfind("\n\n", 0, m.start())
    if start < 0:
        return 0
    before = text.rfind("\n\n", 0, start)
    head = text[before + 2 if before >= 0 else 0 : start]
    if head.strip() and "\n" not in head.strip() and len(head.strip()) <= 60:
        return before + 2 if before >= 0 else 0
    return start + 2


def _newest_note(chunks: list[Chunk], resolved: list[Resolved], latest: dict[str | None, str]) -> str | None:
    """The newest version change notes name, when no candidate carries a version; it must
    be named in two or more different texts (one planted note must not decide "current")."""
    if latest:
        return None
    texts: dict[str, set[str]] = {}
    for c, r in zip(chunks, resolved, strict=True):
        for cue in r.cues:
            texts.setdefault(canonical(cue), set()).add(normalize(c.text))
    confirmed = [v for v, seen in texts.items() if len(seen) >= 2]
    return max(confirmed, key=_key_cmp) if confirmed else None


def _text_fate(
    r: Resolved, target: str | None, lacking: tuple[str, str] | None, named: Iterable[str] = ()
) -> tuple[str, dict[str, str] | None]:
    """The fate of a chunk with no version: its text's floor or ceiling against the target,
    or a copy lacking the target's own note; else kept ``unversioned``."""
    if target is None:
        return "unversioned", None
    if r.floor is not None and _newer(r.floor, target):
        return "other_version", {"floor": r.floor, "from": "text", "target": target}
    if r.ceiling is not None and _at_least(target, r.ceiling):
        return "superseded", {"ceiling": r.ceiling, "from": "text", "target": target}
    if (
        r.about
        and not any(same_version(v, target) for v in r.about)
        and not any(same_version(v, n) for v in r.about for n in named)
    ):
        return "other_version", {"describes": r.about[0], "from": "text", "target": target}
    if lacking is not None:
        return "other_version", {"lacks_note": lacking[0], "copy_of": lacking[1], "from": "text", "target": target}
    return "unversioned", None


def _labelled(c: Chunk, r: Resolved) -> Chunk:
    """The chunk with its resolved version as its label (when it was not its own field)."""
    if r.version is not None and c.version != r.version:
        return c.evolve(version=r.version)
    return c


def _provenance(r: Resolved) -> dict[str, object]:
    """``version_from`` (``field``/``path``/``title``/``text``) and the key or the floor."""
    if r.source is None:
        return {}
    if r.source == "text":
        out: dict[str, object] = {"version_from": "text"}
        if r.floor is not None:
            out["version_floor"] = r.floor
        if r.ceiling is not None:
            out["version_ceiling"] = r.ceiling
        return out
    return {"version_from": r.source, "version_key": r.key}
