"""Rival entries: sibling definitions written from one sentence template.

Reference documentation defines siblings in the same words: "Set ``list_per_page`` to
control how many items appear on each paginated admin change list page. By default, this
is set to ``100``." beside the same sentences for another option with ``200``; "Prevent
deletion of the referenced object by raising ``ProtectedError``" beside "... raising
``RestrictedError``". A retriever returns both entries because both look like the
answer, and a model shown both may take the wrong value. They are not duplicates (the
dedup stage must never merge two passages that differ in a number or a name) and not
versions of one passage (each entry has its own name): they are *rivals*.

Two blocks are rivals when

- both match the question (each scores at least a quarter of the best block, and the
  weaker at least half the stronger: both look like the answer),
- they belong to different named entries (the first line of the name block they sit
  under differs in more than its digits: two versions of one entry are the version
  stage's business), and
- a prose sentence of one and a sentence of the other are the same words but for one or
  two (the template with another name or value in its slot), and the words they share
  include a word of the question (a lead-in such as "Below, an example for ``X``:" is
  the same in every entry and says nothing of what is asked).

The winner is the entry whose slot word the question names (``ProtectedError``); when
the question names neither, the block that matches the question clearly better (the
other scores at most :data:`MARGIN` of it). Near ties decide nothing: both stay.

:func:`losers` finds them over the blocks of many texts at once; :func:`entry_blocks`
is what leaves with a losing block: its entry's name and everything under it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from ctxassembly.text.lexical import query_terms, words
from ctxassembly.text.structure import HEADER_CHARS, Block

__all__ = ["MARGIN", "entry_blocks", "losers"]

MARGIN = 0.9  # with no slot word in the question, a loser scores at most this share of the winner
_POOL = 0.25  # a block scoring under this share of the best block is no candidate answer
_FLOOR = 0.5  # the weaker rival scores at least this share of the stronger
_MIN_WORDS = 6  # a shorter sentence is too generic to be a template ("Default: None")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]`*]*\s+")
_CODE = re.compile(r">>>|[={}]|^\s*[#$]", re.MULTILINE)
_DIGITS = re.compile(r"\d+")


def entry_name(tree: Sequence[Block], j: int) -> int | None:
    """The block that names the entry block ``j`` belongs to: its label (``.. exception::
    X`` right before it), else the nearest short block that owns it (a directive or term
    whose body it is), else its section heading (a Markdown ``### name`` per entry), else
    ``None`` (prose under no name)."""
    b = tree[j]
    if b.label is not None:
        return b.label
    o = b.owner
    while o is not None:
        if tree[o].end - tree[o].start <= HEADER_CHARS:
            return o
        o = tree[o].owner
    return b.heading


def entry_blocks(tree: Sequence[Block], j: int) -> set[int]:
    """Block ``j`` with its entry: the entry's name block and every block under the name
    (its value, what the name or the value owns, the section a heading opens), so no part
    of a rival stays behind."""
    name = entry_name(tree, j)
    roots = {j} if name is None else {name, j}
    value = None if name is None else tree[name].value
    if value is not None:
        roots.add(value)
    out = set(roots)
    for k, blk in enumerate(tree):
        if name is not None and tree[name].is_heading and blk.heading == name:
            out.add(k)
            continue
        o = blk.owner
        while o is not None:
            if o in roots:
                out.add(k)
                break
            o = tree[o].owner
    return out


def _sentences(text: str) -> list[list[str]]:
    """The prose sentences of a block as words (code, prompts and assignments left out)."""
    out = []
    for s in _SENTENCE_END.split(" ".join(text.split())):
        if _CODE.search(s):
            continue
        ws = words(s)
        if len(ws) >= _MIN_WORDS and sum(w.isalpha() for w in ws) >= 0.6 * len(ws):
            out.append(ws)
    return out


def _slots(a: list[list[str]], b: list[list[str]], terms: set[str]) -> tuple[set[str], set[str]] | None:
    """The words that differ between the first template pair of sentences of ``a`` and
    ``b`` (same length, one or two words apart, and the words they share include one of
    the question's ``terms``: the template says what the question asks), or ``None``."""
    for x in a:
        for y in b:
            if len(x) != len(y):
                continue
            diff = [(p, q) for p, q in zip(x, y, strict=True) if p != q]
            if 1 <= len(diff) <= 2 and terms.intersection(p for p, q in zip(x, y, strict=True) if p == q):
                return {p for p, _ in diff}, {q for _, q in diff}
    return None


Address = tuple[int, int]  # (text, block): block ``block`` of ``trees[text]``


def losers(
    texts: Sequence[str], trees: Sequence[Sequence[Block]], scores: np.ndarray, question: str
) -> dict[Address, Address]:
    """Blocks that lose to a rival: ``{loser: winner}`` as (text, block) addresses;
    ``scores`` holds the blocks of ``trees`` one text after another."""
    where: list[tuple[int, int]] = [(t, j) for t, tree in enumerate(trees) for j in range(len(tree))]
    s = np.asarray(scores, dtype=np.float64)
    if not s.size or s.max() <= 0:
        return {}
    strong = [k for k in np.argsort(-s, kind="stable") if s[k] >= _POOL * s.max()]
    terms = set(query_terms(question))
    names: dict[int, str | None] = {}
    sents: dict[int, list[list[str]]] = {}
    for k in strong:
        t, j = where[k]
        tree = trees[t]
        name = entry_name(tree, j)
        # the name's first line: a directive's options or a heading's underline may differ
        # between two versions of one entry
        line = "" if name is None else texts[t][tree[name].start : tree[name].end].strip().split("\n", 1)[0]
        names[k] = _DIGITS.sub("#", " ".join(line.split())) or None
        if names[k] is not None:  # a block of no entry is nobody's rival: its sentences are never read
            sents[k] = _sentences(texts[t][tree[j].start : tree[j].end])
    lengths = {k: {len(x) for x in ss} for k, ss in sents.items()}
    out: dict[Address, Address] = {}
    for n, a in enumerate(strong):
        if names[a] is None or not lengths[a]:
            continue
        for b in strong[n + 1 :]:  # s[a] >= s[b]
            if s[b] < _FLOOR * s[a]:
                break
            if names[b] is None or names[a] == names[b] or not lengths[a] & lengths[b]:
                continue
            slots = _slots(sents[a], sents[b], terms)
            if slots is None:
                continue
            named_a, named_b = bool(slots[0] & terms), bool(slots[1] & terms)
            if named_b and not named_a:
                out.setdefault(where[a], where[b])
            elif (named_a and not named_b) or s[b] <= MARGIN * s[a]:
                out.setdefault(where[b], where[a])
    return out
