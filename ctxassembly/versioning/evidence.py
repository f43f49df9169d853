"""The text-only evidence rules of the version stage: what a chunk with no version from
metadata tells by its own text, against a target (the stage's docstring says when each
applies; :class:`ctxassembly.stages.version.VersionFilter` calls them).

- :func:`text_fate`: a floor newer than the target, a ceiling at or below it, a text about
  another release, or a copy lacking the target's own change note (:func:`lacking_note`);
- :func:`contradicted`: of two variant copies, the one a text about the target contradicts;
- :func:`outgrown`: with no version anywhere, of two copies that differ only in version
  numbers, the lower;
- :func:`newest_note`: the newest change note two texts carry, standing for "current".
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import chain

from ctxassembly.chunk import Chunk
from ctxassembly.text.lexical import facts, jaccard, normalize, shingles
from ctxassembly.versioning import Resolved, canonical, same_version
from ctxassembly.versioning.order import order_key, version_key

__all__ = [
    "at_least",
    "ceiling_position",
    "contradicted",
    "cue_position",
    "lacking_note",
    "newer",
    "newest_note",
    "outgrown",
    "pairs_with",
    "text_fate",
    "variant_pairs",
]

Fates = list[tuple[Chunk, str, dict[str, str] | None]]  # (chunk, status, detail) per candidate


def newer(floor: str, target: str) -> bool:
    """The floor is a later version than the target (both dotted; otherwise unknown: False)."""
    if "." not in canonical(target) or same_version(floor, target):
        return False
    return order_key(floor) > order_key(canonical(target))


def at_least(target: str, ceiling: str) -> bool:
    """The target is the ceiling's version or later (the text predates the target)."""
    t = canonical(target)
    if not any(ch.isdigit() for ch in t) or same_version(t, ceiling):
        return same_version(t, ceiling)
    return order_key(t) >= order_key(canonical(ceiling))


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


def cue_position(text: str, cue: str) -> int | None:
    m = re.search(rf"(?:\.\.\s+\w+::\s*|\b(?:in|since)\s+(?:version\s+)?)v?{re.escape(cue)}\b", text, re.I)
    return m.start() if m is not None else None


def contradicted(
    chunks: list[Chunk], resolved: list[Resolved], fates: Fates, target: str
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
    for a, b in pairs_with(sh, queries, 0.6):
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


def pairs_with(sh: dict[int, frozenset[int]], queries: Sequence[int], threshold: float) -> list[tuple[int, int]]:
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


def variant_pairs(sh: dict[int, frozenset[int]], threshold: float) -> list[tuple[int, int]]:
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


def outgrown(chunks: list[Chunk], resolved: list[Resolved], fates: Fates) -> dict[int, tuple[str, str]]:
    """With no version named and none known: of two text-only copies of one passage that
    differ only in version numbers ("supports Foo 3.21.0 and later" / "3.31.0 and later"),
    every one of them higher in one copy, that copy is the newer: requirements and
    supported releases only move up. -> {index of the older copy: (newer id, its figure)}."""
    open_ = [j for j, r in enumerate(resolved) if r.version is None and fates[j][1] == "unversioned"]
    sh = {j: shingles(chunks[j].text) for j in open_ if _DOTTED.search(chunks[j].text)}
    out: dict[int, tuple[str, str]] = {}
    for a, b in variant_pairs(sh, 0.6):
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


def ceiling_position(text: str, ceiling: str) -> int | None:
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


def newest_note(chunks: list[Chunk], resolved: list[Resolved], latest: dict[str | None, str]) -> str | None:
    """The newest version change notes name, when no candidate carries a version; it must
    be named in two or more different texts (one planted note must not decide "current")."""
    if latest:
        return None
    texts: dict[str, set[str]] = {}
    for c, r in zip(chunks, resolved, strict=True):
        for cue in r.cues:
            texts.setdefault(canonical(cue), set()).add(normalize(c.text))
    confirmed = [v for v, seen in texts.items() if len(seen) >= 2]
    return max(confirmed, key=order_key) if confirmed else None


def text_fate(
    r: Resolved, target: str | None, lacking: tuple[str, str] | None, named: Iterable[str] = ()
) -> tuple[str, dict[str, str] | None]:
    """The fate of a chunk with no version: its text's floor or ceiling against the target,
    or a copy lacking the target's own note; else kept ``unversioned``."""
    if target is None:
        return "unversioned", None
    if r.floor is not None and newer(r.floor, target):
        return "other_version", {"floor": r.floor, "from": "text", "target": target}
    if r.ceiling is not None and at_least(target, r.ceiling):
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


def lacking_note(chunks: list[Chunk], resolved: list[Resolved], target: str) -> dict[int, tuple[str, str]]:
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
                at = cue_position(chunks[i].text, cue)
                if at is not None:
                    anchors.append((i, cue, at))
                break
        else:
            pending = r.ceiling is not None and not at_least(target, r.ceiling)
            if pending and not (r.floor is not None and newer(r.floor, target)):
                assert r.ceiling is not None
                at = ceiling_position(chunks[i].text, r.ceiling)
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
    near = set(pairs_with(sh, sorted(anchor_ids), 0.5))
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
