"""Dedup stage: exact and near duplicates go, conflicts stay (side by side).

Exact duplicates share a normalised text (NFKC, case-folded, whitespace collapsed).
Near duplicates share most word 5-shingles (Jaccard >= ``near_threshold``): computed exactly
for small lists, through datasketch MinHash LSH candidates (then verified exactly) once
the list is longer than ``lsh_from``.

Which copy stays is the copy that serves the question, in this order: the copy of the
current version when the version stage labels other versions instead of dropping them;
the copy of the target version; the copy whose neighbourhood (title and section path)
matches the question better (the same paragraph under "Upgrading" and under the
option's own reference entry); else the higher-ranked one (lists arrive ranked). The
kept copy records the dropped ids in the ledger (``Facts.duplicates``), and each dropped copy's
fate says which copy was kept and why (``kept_because``).

The guard: two passages that look alike but differ in a number, unit, negation, date or
version string are not duplicates; they say different things. Both stay, each naming
the other (``Facts.conflicts_with``), and the arrange stage keeps them adjacent.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.kinds import Reason, Status
from ctxassembly.ledger import Ledger
from ctxassembly.pipeline import Context, StageBase
from ctxassembly.text.lexical import Lexical, differs_in_substance, jaccard, normalize, shingles, without_markup
from ctxassembly.versioning import same_version

__all__ = ["Dedup"]


class Dedup(StageBase):
    """Remove exact and near-duplicate chunks, keeping the higher-ranked copy.

    :param near_threshold: word-shingle Jaccard at or above which two chunks are near
        duplicates; ``None`` turns near-duplicate detection off.
    :param shingle: words per shingle.
    :param lsh_from: list length from which MinHash LSH proposes the candidate pairs.
    :param num_perm: MinHash permutations for LSH.
    :param guard: ``(a_text, b_text) -> bool``, True when the two differ in substance;
        defaults to comparing numbers, units, negations, dates and versions.
    :raises ConfigError: a threshold outside (0, 1].
    """

    name = "dedup"
    shrinks = True
    reads = frozenset({"version", "target_version", "duplicates"})
    writes = frozenset({"duplicates", "conflicts_with"})

    def __init__(
        self,
        *,
        near_threshold: float | None = 0.8,
        shingle: int = 5,
        lsh_from: int = 200,
        num_perm: int = 128,
        guard: Callable[[str, str], bool] | None = None,
    ) -> None:
        if near_threshold is not None and not 0 < near_threshold <= 1:
            raise ConfigError(f"near_threshold must be in (0, 1] or None, got {near_threshold!r}")
        if shingle < 1:
            raise ConfigError(f"shingle must be a positive int, got {shingle!r}")
        self.near_threshold = near_threshold
        self.shingle = shingle
        self.lsh_from = lsh_from
        self.num_perm = num_perm
        self.guard = differs_in_substance if guard is None else guard

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        kept: list[Chunk] = []
        by_text: dict[str, int] = {}
        dup_ids: dict[int, list[str]] = {}
        prefer = _Preference(chunks, ctx)
        for c in chunks:
            key = normalize(c.text)
            first = by_text.get(key)
            if first is not None:
                loser = c
                why = prefer.better(c, kept[first])
                if why is not None:
                    loser, kept[first] = kept[first], c
                else:
                    why = prefer.better(kept[first], c) or "higher_ranked"
                ctx.report.drop(
                    loser, self.name, Reason.DUPLICATE, duplicate_of=kept[first].id, kind="exact", kept_because=why
                )
                dup_ids[first].append(loser.id)
                continue
            by_text[key] = len(kept)
            dup_ids[len(kept)] = []
            kept.append(c)
        conflicts: dict[int, list[str]] = {}
        removed: set[int] = set()
        if self.near_threshold is not None and len(kept) > 1:
            sh = [shingles(without_markup(c.text), self.shingle) for c in kept]
            for i, j in self._pairs(sh):
                if i in removed or j in removed:
                    continue
                if jaccard(sh[i], sh[j], self.near_threshold) < self.near_threshold:
                    continue
                if self.guard(kept[i].text, kept[j].text):
                    conflicts.setdefault(i, []).append(kept[j].id)
                    conflicts.setdefault(j, []).append(kept[i].id)
                    continue
                why = prefer.better(kept[j], kept[i])
                keep, lose = (j, i) if why is not None else (i, j)
                why = why or prefer.better(kept[i], kept[j]) or "higher_ranked"
                removed.add(lose)
                ctx.report.drop(
                    kept[lose], self.name, Reason.DUPLICATE, duplicate_of=kept[keep].id, kind="near", kept_because=why
                )
                dup_ids[keep].extend([kept[lose].id, *dup_ids[lose]])
        out = []
        ledger = ctx.ledger
        for i, c in enumerate(kept):
            if i in removed:
                continue
            dups = tuple(dict.fromkeys(d for d in (*ledger[c.index].duplicates, *dup_ids[i]) if d != c.id))
            if dups:
                ledger.update(c.index, duplicates=dups)
            if i in conflicts:
                ledger.update(c.index, conflicts_with=tuple(x for x in conflicts[i] if x != c.id))
            out.append(c)
        return out

    def _pairs(self, sh: list[frozenset[int]]) -> list[tuple[int, int]]:
        """Index pairs (i < j) to compare: all of them, or LSH candidates on long lists.

        LSH: datasketch computes (and we cache) each text's MinHash; the banding is a
        dict of band -> first index per band, which costs a few dictionary operations per
        chunk instead of an index insert and query."""
        n = len(sh)
        assert self.near_threshold is not None  # _pairs runs only with near dedup on
        if n < self.lsh_from:
            return _size_compatible(sh, self.near_threshold)
        bands, rows = _lsh_params(self.near_threshold, self.num_perm)
        buckets: dict[tuple[int, bytes], list[int]] = {}
        pairs: set[tuple[int, int]] = set()
        for i, s in enumerate(sh):
            values = _minhash(s, self.num_perm)
            for b in range(bands):
                members = buckets.setdefault((b, values[b * rows : (b + 1) * rows].tobytes()), [])
                pairs.update((j, i) for j in members)
                members.append(i)
        return sorted(pairs)


def _size_compatible(sh: list[frozenset[int]], threshold: float) -> list[tuple[int, int]]:
    """All pairs (i < j, sorted) whose sizes allow a Jaccard of ``threshold``: |a & b| <=
    |small| and |a | b| >= |large|, so a pair with small < threshold x large cannot be
    near duplicates (exactly the test :func:`jaccard` starts with). Walking the sets by size
    stops at the first too-large partner, instead of calling jaccard on every pair."""
    sizes = [len(s) for s in sh]
    order = sorted(range(len(sh)), key=sizes.__getitem__)
    pairs = []
    for at, i in enumerate(order):
        small = sizes[i]
        for j in order[at + 1 :]:
            if small < threshold * sizes[j]:
                break
            pairs.append((i, j) if i < j else (j, i))
    pairs.sort()
    return pairs


@lru_cache(maxsize=16)
def _lsh_params(threshold: float, num_perm: int) -> tuple[int, int]:
    # datasketch finds the (bands, rows) that minimise false positives and negatives at
    # this threshold by numerical integration; once per setting is enough
    from datasketch import MinHashLSH

    probe = MinHashLSH(threshold=threshold, num_perm=num_perm)
    return probe.b, probe.r


@lru_cache(maxsize=4)
def _permutations(num_perm: int) -> tuple[object, str]:
    from datasketch import MinHash

    probe = MinHash(num_perm=num_perm)
    return probe.permutations, probe.scheme


@lru_cache(maxsize=16384)
def _minhash(shingle_set: frozenset[int], num_perm: int) -> Any:
    """MinHash signature (numpy array) of hashed shingles, cached; the shingles are already
    integers, so they are not hashed a second time."""
    from datasketch import MinHash

    perms, scheme = _permutations(num_perm)
    m = MinHash(num_perm=num_perm, hashfunc=_identity32, permutations=perms, scheme=scheme)
    m.update_batch(list(shingle_set) or [0])
    return m.hashvalues


def _identity32(value: int) -> int:
    return value & 0xFFFFFFFF


class _Preference:
    """Which of two copies serves the question better, and the reason (see the module doc)."""

    def __init__(self, chunks: list[Chunk], ctx: Context) -> None:
        self.target = ctx.ledger.call.target_version
        self._ledger = ctx.ledger
        self._where: dict[int, float] | None = None
        self._chunks = chunks
        self._question = ctx.question

    def where(self, c: Chunk) -> float:
        """BM25 of the question over the chunk's title and section (computed once, on demand)."""
        if self._where is None:
            labels = [" ".join(filter(None, (x.title, x.section))) for x in self._chunks]
            scores = Lexical(labels).scores(self._question) if any(labels) else [0.0] * len(labels)
            self._where = {id(x): s for x, s in zip(self._chunks, scores, strict=True)}
        return self._where.get(id(c), 0.0)

    def better(self, a: Chunk, b: Chunk) -> str | None:
        """The reason ``a`` (ranked lower) should be kept over ``b``, or ``None``."""
        sa, sb = _standing(self._ledger, a), _standing(self._ledger, b)
        if sa != sb:
            return "current_version" if sa < sb else None
        if self.target is not None and a.version != b.version:
            on_a, on_b = _on(a.version, self.target), _on(b.version, self.target)
            if on_a != on_b:
                return "target_version" if on_a else None
        if (a.title, a.section) != (b.title, b.section):
            wa, wb = self.where(a), self.where(b)
            if wa > wb:
                return "section_matches_question"
        return None


def _on(version: str | None, target: str) -> bool:
    return version is not None and same_version(version, target)


_STANDING = {Status.CURRENT: 0, Status.UNVERSIONED: 1}


def _standing(ledger: Ledger, c: Chunk) -> int:
    """Which copy of a duplicate to keep when versions are labelled, not dropped: the
    current one, then an unversioned one, then the others (ties: the higher-ranked)."""
    status = ledger[c.index].status
    return 0 if status is None else _STANDING.get(status, 2)
