"""Version stage: keep the version the question is about, drop (or label) the others.

Each chunk's version comes from where it really is (:mod:`ctxassembly.versioning`): a
version field, a segment of its URL or file path, its title, or the text's own change
notes; the ledger says where (``Facts.version``, a :class:`~ctxassembly.ledger.Verdict`:
``field``, ``path``, ``title`` or ``text``). The target comes from the caller, else from
the question text ("in Django 5.1", "v3.3", "Enterprise 4.2") matched against the
versions present in any spelling (``5.1`` is ``v5.1``, ``5.1.x`` and a compact ``51``),
else it is "current": the newest version of each page's docs (its *site*: the
location before its version segment), so a page that release lacks is superseded
(``latest="site"``, the default), and where no location carries the version the latest
version present per document family (the document's identity without its version: the
location minus its version segment, else ``doc_id``; chunks without either form one
family; ``latest="document"`` uses this for every chunk), unless the pages themselves
show the release line went on: a page whose newest copy is 4.2, beside another page with
copies at 4.2 and 5.2, is missing from 5.2 and superseded as a site's page would be. A
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
(The rules themselves: :mod:`ctxassembly.versioning.evidence`.)

A chunk whose page path names another version (``.../releases/4.2/`` inside the 5.2
docs) is about that version, like release notes by their title (below).

Versions compare with :class:`packaging.version.Version`. A string that is not PEP 440
("2024.03-lts", "Jan 2023") falls back to a natural key: runs of digits compare as
numbers, other runs as text, and any PEP 440 version sorts after any non-PEP 440 one.
A chunk with no version is kept and labelled ``unversioned``: we cannot know it is stale.

A chunk whose *subject* is another version (release notes "Django 4.0 release notes"
inside the 5.2 docs) still states old values as facts. With ``subject_versions`` on, such
chunks are treated as other-version chunks unless the question names that version.

A changelog is many versions in one file: a section under a release heading ("Version
7.1.2", "7.1.2 (2020-04-27)", "[8.2.0] - 2024-05-01"; :mod:`ctxassembly.versioning.headings`)
is about that release. Against the target it is the target's when its release is the
target or one of the releases since the newest older docs version present (the 8.2.1 docs
beside the 8.1.7 ones: the sections of 8.2.0 and 8.2.1 tell what changed since; with no
older docs present, the releases of the target's series, 8.2.x), and it is labelled with
that release (``version_from="text"``, ``version_key="heading"``);
a section about an older release leaves as ``other_version`` (detail ``describes``). A
heading newer than the docs that hold it (a deprecation timeline's "6.0" in the 5.2 docs)
announces, it is no release: it decides nothing.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Sequence
from functools import lru_cache

from ctxassembly.chunk import Chunk
from ctxassembly.errors import AbsentVersionError, AbsentVersionWarning, ConfigError
from ctxassembly.kinds import (
    ABSENT_POLICIES,
    LATEST_SCOPES,
    VERSION_POLICIES,
    AbsentPolicy,
    LatestScope,
    Reason,
    Status,
    VersionPolicy,
    one_of,
)
from ctxassembly.ledger import Verdict
from ctxassembly.pipeline import Context, StageBase
from ctxassembly.versioning import (
    DEV_ALIASES,
    LOCATION_KEYS,
    RELEASE_ALIASES,
    VERSION_KEYS,
    Provenance,
    Resolved,
    canonical,
    resolve_all,
    same_version,
    versions_in,
)
from ctxassembly.versioning.evidence import Fates, contradicted, lacking_note, newest_note, outgrown, text_fate
from ctxassembly.versioning.headings import Sections, sections
from ctxassembly.versioning.order import order_key, version_key

__all__ = ["VersionFilter", "matches", "version_key", "versions_in"]

Policy = VersionPolicy
Absent = AbsentPolicy

_SUBJECT = re.compile(
    r"(?<![\w.])v?(\d+(?:\.\d+){1,3})\b[^>]{0,20}?\b(?:release notes|changelog|what[’']?s new|upgrade notes)",
    re.IGNORECASE,
)
_SUBJECT_AFTER = re.compile(
    r"\b(?:release notes|changelog|what[’']?s new)\b\s*(?:for|in)?\s*(?:[A-Z][\w-]*\s+)?v?(\d+(?:\.\d+){1,3})\b",
    re.IGNORECASE,
)


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


def _names_before_versions(question: str, target: str | None) -> tuple[str, ...]:
    """The words a question puts right before a version ("pytest" of "in pytest 8.3"):
    before the target's version when the question names it ("Django" of "Django 3.2 on
    Python 3.13"), else before any version."""
    pairs = re.findall(r"([A-Za-z][\w-]*)\s+v?(\d+(?:\.\d+)+)\b", question)
    if target is not None and any(same_version(v, target) for _, v in pairs):
        pairs = [(n, v) for n, v in pairs if same_version(v, target)]
    return tuple(dict.fromkeys(n for n, _ in pairs))


class VersionFilter(StageBase):
    """Keep chunks of the target version (or the current one); drop or label the rest.

    :param version_policy: ``"drop"`` removes other-version chunks with reason ``superseded``
        (a newer version of the same document was kept: detail ``superseded_by``) or
        ``other_version``; ``"label"`` keeps them with the status ``superseded``/``other_version``
        (the ledger's verdict, shown in the context) so the model sees the conflict.
    :param subject_versions: treat release notes of another version as other-version.
    :param version_keys: metadata keys that may hold the version, after the chunk's own
        ``version`` field (default :data:`~ctxassembly.versioning.VERSION_KEYS`).
    :param location_keys: metadata keys that may hold a URL or file path carrying the
        version, read before ``doc_id`` (default :data:`~ctxassembly.versioning.LOCATION_KEYS`:
        ``source``, ``url``, ``file_path``, ``file_name`` ...).
    :param text_cues: read the text's change notes ("New in 5.1") of chunks that have no
        version anywhere else.
    :param absent_version: what to do when the version asked for (the caller's
        ``target_version``, or the one the question names) is among no candidate's
        versions, e.g. ``"9.9"`` over docs 7.1 to 8.2: ``"latest"`` (default) answers
        for the latest version of each document, ``"empty"`` keeps the target, so every
        versioned chunk leaves as another version's (only unversioned ones can stay),
        ``"error"`` raises :class:`~ctxassembly.errors.AbsentVersionError`. The first two
        warn (:class:`~ctxassembly.errors.AbsentVersionWarning`) and note it in the
        report (``absent_version``).
    :param latest: with no version asked for, what "current" is: ``"site"`` (default) the
        newest version of the docs each page belongs to (the location before its version
        segment), so a page missing from that release leaves as ``superseded`` (detail
        ``absent_from``); ``"document"`` the newest version of each page among the
        candidates. Pages whose version comes from a field alone, not a location, have no
        site: for them another page with copies at a page's newest version and at a newer
        one stands for the site (with no such page, theirs is the per-document latest).
    :raises ConfigError: an unknown policy or a bad key list.
    """

    name = "version"
    reads = frozenset({"depth_total", "depth_cut"})
    writes = frozenset({"version", "target_version", "target_unseen"})

    def __init__(
        self,
        version_policy: Policy = "drop",
        *,
        subject_versions: bool = True,
        version_keys: Sequence[str] | str = VERSION_KEYS,
        location_keys: Sequence[str] | str = LOCATION_KEYS,
        text_cues: bool = True,
        absent_version: Absent = "latest",
        latest: LatestScope = "site",
    ) -> None:
        one_of("version_policy", version_policy, VERSION_POLICIES)
        one_of("latest", latest, LATEST_SCOPES)
        self.latest = latest
        one_of("absent_version", absent_version, ABSENT_POLICIES)
        self.absent_version = absent_version
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
        present = sorted({r.version for r in resolved if r.version}, key=order_key)
        named = set(versions_in(ctx.question))
        target, how = ctx.target_version, "caller"
        why = "given by the caller"
        unmatched = ""
        if target is not None and present and not any(matches(p, target) for p in present):
            target = self._absent(target, "target_version", present, ctx)
            if target is None:
                unmatched = f"target_version {ctx.target_version!r} matches no candidate's version"
            else:
                why = "given by the caller; no candidate carries it (absent_version='empty')"
        elif target is None:
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
                target, unmatched = self._unmatched(named, present, ctx)
                if target is not None:
                    why = f"the question names {target}; no candidate carries it (absent_version='empty')"
        if target is not None:
            ctx.ledger.update_call(target_version=target)
        latest: dict[str | None, str] = {}  # family -> its newest version
        if target is None:
            how = "current"
            why = "no version from the caller or the question: the latest version of each document"
            if unmatched:
                why = f"{unmatched}; so the latest version of each document"
            for r in resolved:
                if r.version:
                    fam = r.document
                    if fam not in latest or order_key(r.version) > order_key(latest[fam]):
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

    def _site_latest(self, resolved: list[Resolved], latest: dict[str | None, str]) -> dict[str | None, str]:
        """A page missing from its docs' newest release is no page of the current docs: its
        family's "latest" becomes the newest version of its site (the location before the
        version segment), so its copies leave as superseded (detail ``absent_from``). Returns
        the families so lifted, with that version. Only numbered releases count: a page
        under ``latest/`` or ``main/`` beside numbered docs may be the newest of all."""
        absent_from: dict[str | None, str] = {}
        if self.latest != "site" or not latest:
            return absent_from
        newest: dict[str, str] = {}
        site_of: dict[str | None, str] = {}
        for r in resolved:
            if r.version and r.site is not None and not _alias(r.version):
                if r.site not in newest or order_key(r.version) > order_key(newest[r.site]):
                    newest[r.site] = r.version
                if r.version == latest.get(r.document):
                    site_of[r.document] = r.site
        for fam, site in site_of.items():
            top = newest[site]
            if order_key(top) > order_key(latest[fam]) and not matches(latest[fam], top):
                latest[fam] = top
                absent_from[fam] = top
        # a version from a field alone gives no site: the pages themselves tell the release
        # line. A page whose newest copy is v, beside another page with copies at v and at a
        # newer release, is missing from that release (moved or removed), as above
        lines: dict[str, set[str]] = {}  # page -> its field versions
        for r in resolved:
            if r.version and r.site is None and r.source == "field" and r.document and not _alias(r.version):
                lines.setdefault(r.document, set()).add(r.version)
        if len(lines) < 2:
            return absent_from
        reach: dict[str, str] = {}  # version -> the newest version of a page that has a copy at it
        for vs in lines.values():
            top = max(vs, key=order_key)
            for v in vs:
                if v not in reach or order_key(top) > order_key(reach[v]):
                    reach[v] = top
        for fam in lines:
            own = latest.get(fam)
            if own is None or fam in absent_from or own not in reach:
                continue
            top = reach[own]
            if order_key(top) > order_key(own) and not matches(own, top):
                latest[fam] = top
                absent_from[fam] = top
        return absent_from

    def _unmatched(self, named: set[str], present: list[str], ctx: Context) -> tuple[str | None, str]:
        """The question names versions and none is a candidate's: the note, and the
        target by ``absent_version`` when versions exist (with no version anywhere there is
        nothing to fall back from: the text rules decide)."""
        unmatched = f"the question names {', '.join(sorted(named))}; no candidate's version matches it" + (
            f" (present: {', '.join(present)})" if present else " (no candidate carries a version)"
        )
        ctx.report.note(self.name, "unmatched_version", named=sorted(named), present=present, why=unmatched)
        target = self._absent(versions_in(ctx.question)[0], "the question", present, ctx) if present else None
        return target, unmatched

    def _absent(self, version: str, asked_by: str, present: list[str], ctx: Context) -> str | None:
        """The target when ``version`` (asked by the caller or the question) is among no
        candidate's versions: ``None`` (the latest per document) or ``version`` itself
        (``"empty"``), with a warning and a note; or raise (``"error"``)."""
        if ctx.ledger.call.unread:
            # candidates wait beyond the depth: the depth reads on (this pass is undone)
            ctx.ledger.update_call(target_unseen=version)
            return None
        where = f" (present: {', '.join(present)})"
        if asked_by == "target_version":
            asked = f"target_version {version!r} matches no candidate's version{where}"
        else:
            asked = f"the question names {version!r}, which matches no candidate's version{where}"
        if self.absent_version == "error":
            raise AbsentVersionError(
                f"{asked}; pass a version among them, or absent_version='latest' or 'empty'",
                version=version,
                present=present,
            )
        if self.absent_version == "latest":
            did = "answering for the latest version of each document"
        else:
            did = "keeping it as the target: every versioned chunk leaves"
        message = f"{asked}; {did} (absent_version={self.absent_version!r}; 'latest', 'empty' or 'error')"
        warnings.warn(message, AbsentVersionWarning, stacklevel=2)
        ctx.report.note(
            self.name, "absent_version", version=version, asked_by=asked_by, policy=self.absent_version, why=message
        )
        return None if self.absent_version == "latest" else version

    def _text_target(
        self, chunks: list[Chunk], resolved: list[Resolved], latest: dict[str | None, str], ctx: Context
    ) -> str | None:
        text_target = newest_note(chunks, resolved, latest)
        if text_target is not None:
            why = "no candidate carries a version: the newest change note (in two or more texts) stands for current"
            ctx.report.note(self.name, "text_target", version=text_target, why=why)
        return text_target

    def _note_resolved(self, chunks: list[Chunk], resolved: list[Resolved], ctx: Context) -> None:
        ctx.report.note(
            self.name,
            "resolved",
            chunks=[
                [c.index, c.id, r.version or r.floor or r.ceiling, r.source, r.key]
                for c, r in zip(chunks, resolved, strict=True)
                if r.source is not None
            ],
        )

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        resolved, learnt = resolve_all(
            chunks,
            self.version_keys,
            self.location_keys,
            self.text_cues,
            _names_before_versions(ctx.question, ctx.target_version),
        )
        target, latest, named = self._target(chunks, resolved, ctx, learnt)
        if ctx.ledger.call.target_unseen is not None:
            return chunks  # the depth reads on and this pass is undone: no fate to decide in it
        absent_from = self._site_latest(resolved, latest)
        self._note_resolved(chunks, resolved, ctx)
        fates: Fates = []  # (chunk, status, detail)
        # decided once per distinct (version, wanted version) and per distinct heading
        match: dict[tuple[str, str], str | None] = {}  # -> "superseded" / "other_version" / None (it matches)
        subjects: dict[tuple[str | None, str | None], str | None] = {}
        current: dict[str, str] = {}  # family (or id) -> the first current chunk's id
        # text-only candidates and no version named: the newest change note of the set
        # stands for "current" (that release's docs carry it; older copies lack it, older
        # texts announce changes it has made); a floor can never exceed it
        text_target = target if target is not None else self._text_target(chunks, resolved, latest, ctx)
        lacking = lacking_note(chunks, resolved, text_target) if text_target is not None else {}
        releases = sections(chunks, [r.document for r in resolved]) if self.subject_versions else [None] * len(chunks)
        docs_versions = sorted({r.version for r in resolved if r.version}, key=order_key)
        headed: dict[int, str] = {}  # chunk position -> the release heading it is labelled with
        for i, (chunk, r) in enumerate(zip(chunks, resolved, strict=True)):
            c = _labelled(chunk, r)
            section = releases[i]
            if not r.version:
                status, detail = text_fate(r, text_target, lacking.get(i), named)
                about = _release_fate(section, None, text_target, docs_versions, named) if detail is None else None
                if about is not None:  # a changelog section: labelled with its release, or another version's
                    c, status, detail = _by_heading(c, about, status, headed, i)
                fates.append((c, status, detail))
                continue
            want = target if target is not None else latest[r.document]
            pair = (r.version, want)
            if pair not in match:
                match[pair] = self._compare(r.version, want)
            other = match[pair]
            if other is not None:
                absent = {"absent_from": want} if r.document in absent_from else {}
                fates.append((c, other, {"version": r.version, "target": want, "from": str(r.source), **absent}))
                continue
            about = _release_fate(section, r.version, want, docs_versions, named)
            if about is not None:  # a changelog section: its heading decides
                fates.append(_by_heading(c, about, "current", headed, i))
                if isinstance(about, str):
                    current.setdefault(r.document or c.id, c.id)
                continue
            if self.subject_versions:
                subject = _other_subject(c, r, want, named, subjects)
                if subject is not None:
                    fates.append((c, "other_version", {"describes": subject, "target": want}))
                    continue
            fates.append((c, "current", None))
            current.setdefault(r.document or c.id, c.id)
        if text_target is not None:
            for j, (witness, fact) in contradicted(chunks, resolved, fates, text_target).items():
                detail = {"contradicts": witness, "fact": fact, "from": "text", "target": text_target}
                fates[j] = (fates[j][0], "other_version", detail)
        if target is None and not latest:
            for j, (newer, figure) in outgrown(chunks, resolved, fates).items():
                fates[j] = (fates[j][0], "superseded", {"newer_copy": newer, "figure": figure, "from": "text"})
        return self._apply(fates, resolved, current, ctx, headed)

    def _apply(
        self,
        fates: Fates,
        resolved: list[Resolved],
        current: dict[str, str],
        ctx: Context,
        headed: dict[int, str] | None = None,
    ) -> list[Chunk]:
        """Drop (or label) the other-version chunks; label the kept ones with their provenance.

        The drops are recorded per reason in bulk (:meth:`Report.drop_all`): a long list
        drops hundreds here, and the pass before the depth widens is rolled back."""
        out: list[Chunk] = []
        ledger = ctx.ledger
        drop = self.version_policy == "drop"
        headed = headed or {}
        dropped: dict[Reason, tuple[list[Chunk], list[dict[str, str]]]] = {}  # reason -> chunks, details
        for i, ((c, status, detail), r) in enumerate(zip(fates, resolved, strict=True)):
            if detail is None:  # current or unversioned
                verdict = _verdict(_STATUS[status], r)
                if i in headed:  # a changelog section: its version is its release heading's
                    verdict = Verdict(verdict.status, "text", key="heading")
                ledger.update(c.index, version=verdict)
                out.append(c)
                continue
            fam = r.document or c.id
            if status == "superseded" and fam in current:
                detail["superseded_by"] = current[fam]
            if drop:
                gone, details = dropped.setdefault(_REASON[status], ([], []))
                gone.append(c)
                details.append(detail)  # a fresh dict per chunk (the fates' own, see run)
            else:
                labels = tuple((k, v) for k, v in detail.items() if k not in ("target", "version", "from"))
                ledger.update(c.index, version=_verdict(_STATUS[status], r, labels))
                out.append(c)
        for reason, (gone, details) in dropped.items():
            ctx.report.drop_all(gone, self.name, reason, details)
        return out

    @staticmethod
    def _compare(version: str, want: str) -> str | None:
        if matches(version, want):
            return None
        if _alias(version) or want.casefold() in RELEASE_ALIASES:
            return "other_version"  # an alias has no place in the order of numbered releases
        return "superseded" if order_key(version) < order_key(canonical(want)) else "other_version"


def _other_subject(
    c: Chunk, r: Resolved, want: str, named: set[str], subjects: dict[tuple[str | None, str | None], str | None]
) -> str | None:
    """The other version the chunk is about by its heading or page path (release notes of
    another version), else ``None``; ``subjects`` caches the heading's per distinct heading."""
    heading = (c.title, c.section)
    if heading not in subjects:
        subjects[heading] = subject_version(c)
    subject = subjects[heading] or r.subject  # the heading's, else the page path's
    if subject is not None and not matches(subject, want) and not any(matches(subject, n) for n in named):
        return subject
    return None


def _by_heading(
    c: Chunk, about: str | dict[str, str], status: str, headed: dict[int, str], i: int
) -> tuple[Chunk, str, dict[str, str] | None]:
    """The fate of a changelog section: ``other_version`` with ``about`` as its detail, or
    kept with ``status``, labelled with the release ``about`` (noted in ``headed``)."""
    if isinstance(about, dict):
        return c, "other_version", about
    headed[i] = about
    return c.evolve(version=about), status, None


def _release_fate(
    section: Sections | None, docs_version: str | None, want: str | None, present: Sequence[str], named: Iterable[str]
) -> str | dict[str, str] | None:
    """A changelog section against the version wanted: the release it is labelled with
    (the target's, or one since the newest older docs version present), the detail of an
    ``other_version`` fate, or ``None`` (nothing to decide: its first lines are under a
    heading not known, or every heading is newer than the docs that hold it; no section)."""
    if section is None:
        return None
    if section.leading is None:
        return _below(section.at_most, docs_version, want, present, named)
    about = [v for v in section.all if docs_version is None or not _newer(v, docs_version)]
    if section.leading not in about:
        return None
    if want is None:
        return max(about, key=order_key)
    named = tuple(named)
    older = [p for p in present if not matches(p, want) and order_key(p) < order_key(canonical(want))]
    since = older[-1] if older else None
    series = _series(want)
    fits = [
        v
        for v in about
        if matches(v, want)
        or any(matches(v, n) for n in named)
        or (since is None and matches(v, series))
        or (since is not None and not _newer(v, want) and _newer(v, since))
    ]
    if fits:
        return max(fits, key=order_key)
    return {"describes": section.leading, "target": want, "from": "text"}


def _below(
    at_most: str | None, docs_version: str | None, want: str | None, present: Sequence[str], named: Iterable[str]
) -> dict[str, str] | None:
    """A changelog chunk whose own heading is not known, under the heading ``at_most`` or
    one further down (older): ``other_version`` when even ``at_most`` is no newer than the
    docs version before the target (and no version the question names is at or below
    it); else nothing to decide."""
    if at_most is None or want is None or (docs_version is not None and _newer(at_most, docs_version)):
        return None
    older = [p for p in present if not matches(p, want) and order_key(p) < order_key(canonical(want))]
    if not older or _newer(at_most, older[-1]) or matches(at_most, want):
        return None
    if any(not _newer(n, at_most) for n in named):
        return None
    return {"describes": f"{at_most} or older", "target": want, "from": "text"}


def _alias(version: str) -> bool:
    folded = version.casefold()
    return folded in RELEASE_ALIASES or folded in DEV_ALIASES


def _series(version: str) -> str:
    """The release series of ``version``: its first two numbers (``8.2`` of ``8.2.1``);
    docs are most often published per series, so with no older docs version among the
    candidates a section of the target's series is what its docs describe."""
    parts = canonical(version).split(".")
    return ".".join(parts[:2])


def _newer(version: str, than: str) -> bool:
    """``version`` comes after ``than`` (a release of ``than`` does not: 5.1.3 is 5.1)."""
    return not matches(version, than) and order_key(version) > order_key(canonical(than))


def _labelled(c: Chunk, r: Resolved) -> Chunk:
    """The chunk with its resolved version as its label (when it was not its own field)."""
    if r.version is not None and c.version != r.version:
        return c.evolve(version=r.version)
    return c


#: a status, and a reason, by its value (``Status(value)`` goes through the enum's lookup,
#: for every chunk)
_STATUS: dict[str, Status] = {s.value: s for s in Status}
_REASON: dict[str, Reason] = {r.value: r for r in Reason}


def _verdict(status: Status, r: Resolved, labels: tuple[tuple[str, object], ...] = ()) -> Verdict:
    """The verdict with its provenance (``field``/``path``/``title``/``text``) and the key
    or the change notes."""
    if r.source == "text":
        return Verdict(status, "text", floor=r.floor, ceiling=r.ceiling, labels=labels)
    if not labels:  # most chunks: one of a few verdicts, shared (they are frozen)
        return _plain_verdict(status, r.source, r.key if r.source is not None else None)
    return Verdict(status, r.source, key=r.key if r.source is not None else None, labels=labels)


@lru_cache(maxsize=256)
def _plain_verdict(status: Status, source: Provenance | None, key: str | None) -> Verdict:
    return Verdict(status, source, key=key)
