"""Text as words: normalisation, shingles and Jaccard, the facts a passage states, BM25.

What the dedup, relevance, version and extraction stages compare texts by; nothing here
reads a text's layout (that is :mod:`ctxassembly.text.structure`).
"""

from __future__ import annotations

import itertools
import math
import re
import unicodedata
import zlib
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache

import numpy as np

__all__ = [
    "Lexical",
    "differs_in_substance",
    "facts",
    "jaccard",
    "normalize",
    "phrase_pairs",
    "phrases",
    "query_terms",
    "shingles",
    "text_classes",
    "words",
]

_WS = re.compile(r"\s+")
_WORD = re.compile(r"\w+")


# reST markup words that are not content: a role's name (``:setting:`X``` -> ``X``) and a
# directive's name (``.. confval:: X`` -> ``X``)
_MARKUP = re.compile(r"(?<![\w:]):[\w.+-]+(?::[\w.+-]+)*:(?=`)|^\s*\.\.\s+[\w:.-]+::", re.MULTILINE)


# the two halves of _MARKUP, each fast alone: a role opens with a literal ":" (the
# lookbehind moved after it, so the regex engine skips ahead to the next colon), a
# directive is found from its line start; _MARKUP itself tries both at every position
_ROLE = re.compile(r":(?<![\w:]:)[\w.+-]+(?::[\w.+-]+)*:(?=`)")
_DIRECTIVE = re.compile(r"^\s*\.\.\s+[\w:.-]+::", re.MULTILINE)


@lru_cache(maxsize=4096)
def without_markup(text: str) -> str:
    """``text`` with the names of reStructuredText roles and directives blanked out: they
    mark what follows (``:setting:`X```, ``.. note::``) and say nothing of the content, so
    word statistics and word shingles should not count them.

    The same as ``_MARKUP.sub(" ", text)``, found faster: a role needs ``:``` and a
    directive ``..``; with both, the next match is the earlier of the two halves' next
    matches (a role first when both start at one place, as in the alternation), each
    searched again from where the last match ended, which is how ``sub`` scans.

    Cached by text: within one call, dedup's shingles and relevance's BM25 both read it
    of every candidate, and a hybrid list repeats texts.
    """
    if ":`" not in text:
        return _DIRECTIVE.sub(" ", text) if ".." in text else text
    if ".." not in text:
        return _ROLE.sub(" ", text)
    out: list[str] = []
    at = 0
    role, directive = _ROLE.search(text), _DIRECTIVE.search(text)
    while role is not None or directive is not None:
        # the earlier of the two; a role first when both start at one place
        m = role if role is not None and (directive is None or role.start() <= directive.start()) else directive
        assert m is not None  # for mypy: one of them is set
        out += (text[at : m.start()], " ")
        at = m.end()
        if role is not None and role.start() < at:
            role = _ROLE.search(text, at)
        if directive is not None and directive.start() < at:
            directive = _DIRECTIVE.search(text, at)
    out.append(text[at:])
    return "".join(out)


@lru_cache(maxsize=16384)
def normalize(text: str) -> str:
    """NFKC, case-folded, whitespace collapsed: the key for exact duplicates.

    ``str.split()`` splits at exactly the characters regex ``\\s`` matches (both use
    ``Py_UNICODE_ISSPACE``) and drops the ends, so the join equals ``sub(r"\\s+", " ")``
    plus ``strip()``, at a quarter of the cost; ASCII text is already NFKC.
    """
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    return " ".join(text.split()).casefold()


# ASCII whitespace as str.split() sees it, and a table that lower-cases ASCII letters
_ASCII_SPACE = b" \t\n\v\f\r\x1c\x1d\x1e\x1f"
_ASCII_LOWER = bytes(c + 32 if 65 <= c <= 90 else c for c in range(256))


def _squeezed(text: str) -> bytes | str:
    """``normalize(text)`` without its spaces: equal for any two texts whose normalised
    forms are equal, and for ASCII text one C-level pass (as bytes; a non-ASCII text whose
    normal form is ASCII gives the same bytes, any other a str)."""
    if text.isascii():
        return text.encode("ascii").translate(_ASCII_LOWER, _ASCII_SPACE)
    key = normalize(text).replace(" ", "")
    return key.encode("ascii") if key.isascii() else key


def text_classes(texts: Sequence[str]) -> list[int]:
    """For each text, the number of its :func:`normalize` class, classes numbered in order of
    first appearance: what ``seen.setdefault(normalize(t), len(seen))`` gives, while
    normalising only texts whose cheap squeezed key repeats (most never do). A text seen
    before in ``texts`` (a hybrid list repeats a chunk once per retriever) takes the class
    of its first copy, neither squeezed nor normalised again."""
    out: list[int] = []
    first: dict[bytes | str, tuple[str, int]] = {}  # squeezed key -> (its first text, its class)
    exact: dict[str, int] = {}  # normalised text -> class, filled for repeated keys only
    opened: set[bytes | str] = set()
    same: dict[str, int] = {}  # text -> its class, for texts that repeat verbatim
    for text in texts:
        if text in same:
            out.append(same[text])
            continue
        key = _squeezed(text)
        if key not in first:
            first[key] = (text, len(first) + len(exact) - len(opened))
            out.append(first[key][1])
            same[text] = first[key][1]
            continue
        if key not in opened:
            opened.add(key)
            exact[normalize(first[key][0])] = first[key][1]
        norm = normalize(text)
        if norm not in exact:
            exact[norm] = len(first) + len(exact) - len(opened)
        out.append(exact[norm])
        same[text] = exact[norm]
    return out


def words(text: str) -> list[str]:
    """The case-folded ``\\w+`` runs of ``text`` (ASCII text without the regex: non-word
    bytes become spaces and a C-level split does the rest, with the same result)."""
    folded = text.casefold()
    if folded.isascii():
        return folded.encode("ascii").translate(_ASCII_NON_WORD).decode("ascii").split()
    return _WORD.findall(folded)


@lru_cache(maxsize=16384)
def shingles(text: str, k: int = 5) -> frozenset[int]:
    """Hashed word ``k``-shingles of ``text`` (a text shorter than k is one shingle).

    The hash is CRC-32 of the shingle's words, not Python's ``hash()``: that one is salted
    per process, so MinHash LSH (which reads the hashes' bits) would propose other pairs in
    every process."""
    norm = normalize(text)
    folded = norm.casefold()
    if folded.isascii():  # the words as bytes at once: words() of it, each word encoded
        b = folded.encode("ascii").translate(_ASCII_NON_WORD).split()
    else:
        b = [x.encode("utf-8") for x in _WORD.findall(folded)]
    if len(b) < k:
        return frozenset([zlib.crc32(b"\x1f".join(b))]) if b else frozenset()
    # zip of k shifted views yields the same k-tuples as slicing, without a slice per word;
    # each word is encoded once and the bytes joined (UTF-8 of a join is the join of the
    # UTF-8s), so every hash is _stable's, without a Python call per shingle
    return frozenset(map(zlib.crc32, map(b"\x1f".join, zip(*(b[i:] for i in range(k)), strict=False))))


def _stable(gram: Sequence[str]) -> int:
    return zlib.crc32("\x1f".join(gram).encode("utf-8"))


def jaccard(a: frozenset[int], b: frozenset[int], at_least: float = 0.0) -> float:
    """Jaccard similarity; returns 0.0 early when the sizes alone rule out ``at_least``."""
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    small, large = sorted((len(a), len(b)))
    if small < at_least * large:  # |a & b| <= small and |a | b| >= large
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


# What must not be merged away: two passages that differ in one of these say different
# things, however similar the rest of their words are.
# each pattern opens with a lookahead for the characters its matches can start with: the
# regex engine tries a pattern at every position, and one cheap test rules most out (the
# matches are the same)
_NUMBER = re.compile(
    r"(?=[-+\d])(?<![\w.])[-+]?\d[\d,_]*(?:\.\d+)*(?:\s?(?:%|[kmgt]i?b|bytes?|ms|s|sec(?:onds?)?|"
    r"min(?:utes?)?|h(?:ours?)?|days?|weeks?|years?|chars?|characters?|x))?(?![\w])",
    re.IGNORECASE,
)
_NEGATION = re.compile(
    r"\b(?=[cdainruw])(?:not|no|never|none|cannot|can't|don't|doesn't|isn't|aren't|won't|without|"
    r"deprecated|removed|unsupported|no longer)\b",
    re.IGNORECASE,
)
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_DATE = re.compile(
    rf"\b(?=[\djfmasond])(?:\d{{4}}-\d{{2}}-\d{{2}}|{_MONTH}\s+\d{{1,2}},?\s+\d{{4}}|\d{{1,2}}\s+{_MONTH}\s+\d{{4}})\b",
    re.IGNORECASE,
)

_YEAR = re.compile(r"\d{4}")


@lru_cache(maxsize=16384)
def facts(text: str) -> frozenset[str]:
    """Numbers (with units), versions, dates and negations in ``text``, normalised."""
    t = unicodedata.normalize("NFKC", text)
    # every date holds a year's four digits: most texts have none, and the scan for them is fast
    found = {"date:" + _WS.sub(" ", m.group(0).lower()) for m in _DATE.finditer(t)} if _YEAR.search(t) else set()
    found |= {"num:" + _WS.sub("", m.group(0).lower()).replace(",", "").replace("_", "") for m in _NUMBER.finditer(t)}
    negations = Counter(_WS.sub(" ", m.group(0).lower()) for m in _NEGATION.finditer(t))
    found |= {f"neg:{w}:{n}" for w, n in negations.items()}
    return frozenset(found)


def differs_in_substance(a: str, b: str) -> bool:
    """True when ``a`` and ``b`` state different numbers, units, negations, dates or versions."""
    return facts(a) != facts(b)


_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "how",
        "i",
        "if",
        "in",
        "is",
        "it",
        "its",
        "my",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "was",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
    ]
)


def query_terms(text: str) -> list[str]:
    """The words of ``text`` without the stop words: what BM25 scores a query by."""
    return [w for w in words(text) if w not in _STOP]


class Lexical:
    """Okapi BM25 of one query over a small set of texts (the candidates themselves).

    Inverse document frequencies come from the texts being scored, which is what makes
    a term that every candidate shares (the product name) weigh nothing. A term of three
    letters or more also counts where digits are glued to it (``pypy`` in ``PyPy3.8+``:
    :func:`_glues`). Two neighbouring query terms are also a term joined by an underscore,
    and a term with an underscore counts wherever it is a run of an identifier's parts
    (:func:`_compounds`): "the base path" finds ``restrict_base_path``, "visibility
    timeout" finds ``visibility_timeout``, while a lone "base" still does not. Words are
    counted as they are written otherwise.

    Only the query's terms are counted, and ASCII texts (the common case) are never split
    into words: they are joined into one byte string in which one translation lower-cases
    the letters and turns every other non-word byte into a space. With numpy, a word
    starts at a non-space byte after a space; a term occurs where a word starts with its
    first letter, the next bytes spell the rest, and a space follows. Each hit's text is
    found by binary search on the text offsets. This counts exactly the ``\\w+`` words the
    regex would, at a fraction of the cost of a Python list of words. Other text goes
    through the regex.
    """

    def __init__(
        self, texts: Sequence[str], *, k1: float = 1.2, b: float = 0.75, idf_from: Sequence[str] | None = None
    ) -> None:
        self.k1, self.b = k1, b
        self.texts = list(texts)
        self.idf_from = None if idf_from is None else list(idf_from)
        self._counted: dict[str, np.ndarray] = {}

    def holds(self, term: str) -> np.ndarray | None:
        """Which texts hold ``term`` (bool per text) as the last :meth:`scores` counted it (a
        word, or one with digits glued on); ``None`` when it did not count that term."""
        counts = self._counted.get(term)
        return None if counts is None else counts > 0

    def scores(self, query: str) -> list[float]:
        """BM25 of ``query`` over the texts; document frequencies over ``idf_from`` when given
        (e.g. score the headings of chunks with the rarity of words in their whole texts)."""
        n = len(self.texts)
        if not n:
            return []
        terms = _compounds(list(dict.fromkeys(query_terms(query))))
        counts, lengths = _term_counts(self.texts, terms)
        self._counted = dict(zip(terms, counts, strict=True))
        avg = float(lengths.sum()) / n or 1.0  # what lengths.mean() gives, without its wrapper
        if self.idf_from is None:
            df, m = (counts > 0).sum(axis=1), n
        else:
            df, m = _doc_freq(self.idf_from, terms), len(self.idf_from)
        weights = np.log(1 + (m - df + 0.5) / (df + 0.5))
        norm = self.k1 * (1 - self.b + self.b * lengths / avg)
        per_term = weights[:, None] * counts * (self.k1 + 1) / (counts + norm[None, :])
        scores: list[float] = per_term.sum(axis=0).tolist()
        return scores


# --------------------------------------------------------------------------- phrases
#: stop words may stand between a phrase's words ("path of the file" says "path file")
_STOP_BYTES = frozenset(w.encode() for w in _STOP)

#: how many other words may stand between a phrase's two words, besides stop words: one
#: lets "cache timeout" find "cache default timeout" (chosen on sixteen corpora with the
#: phrase signal's weight: benchmarks/README.md)
PHRASE_GAP = 1


def phrase_pairs(query: str) -> list[tuple[str, str]]:
    """The pairs of neighbouring terms of ``query``, stop words left out as BM25 reads it:
    "the visibility timeout of a task" -> (visibility, timeout), (timeout, task). A number
    makes no pair (a version the question names is the version stage's to read, as in
    :func:`_compounds`), nor does a word with itself."""
    return list(dict.fromkeys(p for p in _word_pairs(query_terms(query)) if p[0] != p[1]))


def phrases(texts: Sequence[str], query: str, holds: Callable[[str], np.ndarray | None] | None = None) -> list[float]:
    """How much of ``query`` each text says the way the query says it: the sum, over the
    query's :func:`phrase_pairs` that the text holds in that order, at most
    :data:`PHRASE_GAP` other words apart (stop words and punctuation do not count), of the
    pair's inverse document frequency over ``texts`` (the weight BM25 gives a term). BM25
    counts words one by one, so a text that says "cache" in one paragraph and "timeout" in
    another scores as one that says "cache timeout".

    Only a text that holds both words of a pair is read for it: ``holds(word)`` tells which
    do (:meth:`Lexical.holds`, from the counts BM25 has made of the same texts; without it
    each text is searched). The text is then read as its case-folded words between
    spaces, and ``bytes.find`` walks from each second word back to the nearest first word
    before it (one further back has more words between); a pair counts once a text."""
    n = len(texts)
    pairs = phrase_pairs(query)
    if not pairs or not n:
        return [0.0] * n
    spaced: dict[str, bytes] = {}
    near: dict[tuple[str, tuple[str, str]], bool] = {}  # a hybrid list repeats texts: each is read once
    found: list[list[tuple[str, str]]] = [[] for _ in texts]
    for pair in pairs:
        first, second = (f" {w} ".encode() for w in pair)
        both = _both(holds, pair) if holds is not None else None
        for i in range(n) if both is None else np.flatnonzero(both).tolist():
            key = (texts[i], pair)
            if key not in near:
                if texts[i] not in spaced:
                    spaced[texts[i]] = b" " + _spaced(texts[i]) + b" "
                text = spaced[texts[i]]
                near[key] = (both is not None or (first in text and second in text)) and _near(text, first, second)
            if near[key]:
                found[i].append(pair)
    df = Counter(p for f in found for p in f)
    weight = {p: math.log(1 + (n - d + 0.5) / (d + 0.5)) for p, d in df.items()}
    return [sum(weight[p] for p in f) for f in found]


def _both(holds: Callable[[str], np.ndarray | None], pair: tuple[str, str]) -> np.ndarray | None:
    """Which texts hold both words of ``pair``, by ``holds`` (``None``: it does not know)."""
    a, b = holds(pair[0]), holds(pair[1])
    return None if a is None or b is None else a & b


#: bytes of a text read before counting the words between a pair's words: more than
#: :data:`PHRASE_GAP` + 1 words that are not stop words fill far less
_SPAN = 160


def _near(text: bytes, first: bytes, second: bytes) -> bool:
    """``first`` is followed by ``second`` (each `` word ``) in ``text`` with at most
    :data:`PHRASE_GAP` words between them that are not stop words."""
    hit = text.find(first)
    while hit >= 0:
        q = text.find(second, hit + len(first) - 1)
        if q < 0:
            return False
        p = text.rfind(first, hit, q + 1)  # the nearest first word before this second word
        at = p + len(first) - 1
        if _few_between(text, at, q + 1):
            return True
        hit = text.find(first, q + len(second) - 1)
    return False


def _few_between(text: bytes, start: int, end: int) -> bool:
    """At most :data:`PHRASE_GAP` words of ``text[start:end]`` are not stop words."""
    if end - start > _SPAN:  # a long stretch: its first words decide, unless they are stop words
        head = text[start : start + _SPAN].split()[:-1]  # the last may be cut
        if len(head) - sum(map(_STOP_BYTES.__contains__, head)) > PHRASE_GAP:
            return False
    between = text[start:end].split()
    return len(between) <= PHRASE_GAP or len(between) - sum(map(_STOP_BYTES.__contains__, between)) <= PHRASE_GAP


def _spaced(text: str) -> bytes:
    """``text``'s case-folded ``\\w+`` words with spaces between them (ASCII text: every
    other byte a space, by one translation; other text: the words joined, in UTF-8)."""
    folded = text.casefold()
    if folded.isascii():
        return folded.encode("ascii").translate(_ASCII_NON_WORD)
    return " ".join(_WORD.findall(folded)).encode()


def _term_counts(texts: Sequence[str], terms: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """``counts[term, text]`` (whole-word hits) and ``lengths[text]`` (words). A text that
    repeats (one passage retrieved for several versions) is counted once and its column
    copied."""
    first: dict[str, int] = {}
    slots = [first.setdefault(t, len(first)) for t in texts]
    if len(first) == len(slots):
        return _distinct_counts(texts, terms)
    counts, lengths = _distinct_counts(list(first), terms)
    at = np.asarray(slots, dtype=np.intp)
    return counts[:, at], lengths[at]


def _doc_freq(texts: Sequence[str], terms: list[str]) -> np.ndarray:
    """Per term, how many of ``texts`` hold it (a whole-word hit, as :func:`_term_counts`
    counts them). Few ASCII texts are only searched for each term (the first hit decides;
    no word is counted); others are counted."""
    distinct = Counter(texts)
    if sum(map(len, distinct)) >= _FEW_CHARS or not all(t.isascii() for t in distinct):
        counts, _ = _term_counts(texts, terms)
        found: np.ndarray = (counts > 0).sum(axis=1)
        return found
    df = np.zeros(len(terms))
    wanted = [
        (j, t.encode("ascii"), _glued_bytes(t) if _glues(t) else None) for j, t in enumerate(terms) if t.isascii()
    ]
    for text, times in distinct.items():
        lowered = text.encode("ascii").translate(_ASCII_LOWER_WORD)
        padded = b" " + lowered + b" "
        for j, term, glued in wanted:
            if term not in lowered:
                continue
            if b"_" in term:
                held = bool(_part_runs(lowered, term))
            else:  # the word itself stands between spaces, or with digits glued on
                held = b" " + term + b" " in padded or (glued is not None and glued.search(padded) is not None)
            if held:
                df[j] += times
    return df


def _distinct_counts(texts: Sequence[str], terms: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_term_counts`, counting every text."""
    n = len(texts)
    counts = np.zeros((len(terms), n))
    lengths = np.zeros(n)
    ascii_: list[int] = []
    other: list[int] = []
    for i, text in enumerate(texts):
        (ascii_ if text.isascii() else other).append(i)
    if ascii_:
        pick = [texts[i] for i in ascii_]
        # numpy pays a fixed cost per term (a tenth of a millisecond): few words are
        # counted faster one list of words at a time (the same counts)
        count = _count_few if sum(map(len, pick)) < _FEW_CHARS else _count_ascii
        count(pick, terms, counts, lengths, np.asarray(ascii_))
    for i in other:
        folded = texts[i].casefold()
        words_ = _WORD.findall(folded)
        lengths[i] = len(words_)
        for j, t in enumerate(terms):
            if "_" in t:
                counts[j, i] = len(_part_run(t).findall(folded)) if t in folded else 0
                continue
            glued_on = len(_glued(t).findall(folded)) if _glues(t) and t in folded else 0
            counts[j, i] = words_.count(t) + glued_on
    return counts, lengths


def _compounds(terms: list[str]) -> list[str]:
    """``terms`` and, after them, each two neighbours that are words, not numbers, joined by
    an underscore (``base``, ``path`` -> ``base_path``): the question says in words what
    the docs name as an identifier."""
    pairs = (f"{a}_{b}" for a, b in _word_pairs(terms))
    return list(dict.fromkeys([*terms, *pairs]))


def _word_pairs(terms: Sequence[str]) -> Iterator[tuple[str, str]]:
    """Each two neighbours of ``terms`` that are words, not numbers: what the question says
    as one name (:func:`_compounds`) or one phrase (:func:`phrase_pairs`)."""
    return ((a, b) for a, b in itertools.pairwise(terms) if not (a.isdigit() or b.isdigit()))


@lru_cache(maxsize=1024)
def _part_run(term: str) -> re.Pattern[str]:
    """Where ``term`` (a word with an underscore) is a run of an identifier's parts in a
    case-folded text: the whole word, or the same bounded by underscores inside a longer
    one (``base_path`` in ``restrict_base_path``)."""
    return re.compile(rf"(?<![^\W_]){re.escape(term)}(?![^\W_])")


def _part_runs(text: bytes, term: bytes) -> list[int]:
    """Where :func:`_part_run` matches ``term`` in a text whose non-word bytes are spaces
    (``_ASCII_LOWER_WORD``): the same scan (a match resumes after its end), by ``find``,
    which skips ahead where a regex opening with a lookbehind tries every position."""
    out: list[int] = []
    at = text.find(term)
    while at >= 0:
        end = at + len(term)
        if (at == 0 or text[at - 1] in _EDGE) and (end == len(text) or text[end] in _EDGE):
            out.append(at)
            at = text.find(term, end)
        else:
            at = text.find(term, at + 1)
    return out


_EDGE = b" _"  # the bytes an identifier's part may end at, in _ASCII_LOWER_WORD text


def _glues(term: str) -> bool:
    """Whether ``term`` also counts where digits are glued to it: a word of three letters or
    more (``pypy`` in ``pypy3``, ``python`` in ``python3``, ``sha`` in ``sha256``), not a
    number or a one- or two-letter word (``v`` in ``v2``)."""
    return len(term) >= 3 and term.isalpha()


@lru_cache(maxsize=1024)
def _glued(term: str) -> re.Pattern[str]:
    """The words that are ``term`` with ASCII digits glued on, in a case-folded text."""
    return re.compile(rf"(?<!\w){re.escape(term)}[0-9]+(?!\w)")


@lru_cache(maxsize=1024)
def _glued_bytes(term: str) -> re.Pattern[bytes]:
    """:func:`_glued` for a text whose non-word bytes are spaces (``_ASCII_LOWER_WORD``),
    padded with a space at each end: the pattern opens with a literal (the space and the
    term), which the regex engine looks for at C speed instead of trying every position."""
    return re.compile(rb" " + re.escape(term.encode("ascii")) + rb"[0-9]+(?= )")


_FEW_CHARS = 16_000  # below this many characters, _count_few is the faster (measured)


def _count_few(texts: list[str], terms: list[str], counts: np.ndarray, lengths: np.ndarray, cols: np.ndarray) -> None:
    """What :func:`_count_ascii` fills, from each text's list of words (for few texts)."""
    ascii_terms = [(j, t) for j, t in enumerate(terms) if t.isascii()]
    wanted = [(j, t.encode("ascii"), _glued_bytes(t) if _glues(t) else None) for j, t in ascii_terms]
    for text, col in zip(texts, cols.tolist(), strict=True):
        lowered = text.encode("ascii").translate(_ASCII_LOWER_WORD)
        found = lowered.split()
        lengths[col] = len(found)
        padded = b""
        # only the terms in the text are counted (else neither the word nor the word with
        # digits on is there: the count stays 0), each by a C-level scan of the word list
        # while at most three are present (a bag of every word costs more than three scans);
        # with more, one bag of its words counts them all
        present = [w for w in wanted if w[1] in lowered]
        bag = Counter(found) if len(present) > 3 else None
        for j, term, glued in present:
            if b"_" in term:
                counts[j, col] = len(_part_runs(lowered, term))
                continue
            hits = found.count(term) if bag is None else bag[term]
            if glued is not None:
                padded = padded or b" " + lowered + b" "
                hits += len(glued.findall(padded))
            counts[j, col] = hits


def _count_ascii(texts: list[str], terms: list[str], counts: np.ndarray, lengths: np.ndarray, cols: np.ndarray) -> None:
    """Fill ``lengths[cols]`` (words per text) and ``counts[:, cols]`` (whole-word hits of each
    term) for ASCII ``texts``, without splitting them into words (see :class:`Lexical`)."""
    encoded = [t.encode("ascii") for t in texts]
    # " " + t0 + "  " + t1 + ... + " ": every text starts after a space and ends before one
    joined = (b" " + b"  ".join(encoded) + b" ").translate(_ASCII_LOWER_WORD)
    arr = np.frombuffer(joined, dtype=np.uint8)
    sizes = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    starts = np.empty(len(encoded), dtype=np.int64)
    starts[0] = 1
    np.cumsum(sizes[:-1] + 2, out=starts[1:])
    starts[1:] += 1
    space = arr == 32
    before_head = space[:-1] & ~space[1:]  # [p] is true when a word starts at p + 1
    heads = np.flatnonzero(before_head) + 1
    lengths[cols] = np.add.reduceat(before_head, starts - 1, dtype=np.int64)  # words per text
    first = arr[heads]
    for j, term in enumerate(terms):
        if not term.isascii():
            continue  # a non-ASCII term never occurs in ASCII text
        tb = term.encode("ascii")
        if b"_" in tb:  # a run of an identifier's parts, found in the joined bytes
            pos = np.asarray(_part_runs(joined, tb), dtype=np.int64)
        else:
            pos = heads[first == tb[0]]
            for k in range(1, len(tb)):  # the next bytes spell the term
                if not pos.size:
                    break
                pos = pos[arr[pos + k] == tb[k]]
            if pos.size:  # then a space, or (where the term glues, :func:`_glues`) digits and a space
                after = arr[pos + len(tb)]
                ends = after == 32
                if _glues(term):
                    for n in np.flatnonzero((after >= 48) & (after <= 57)).tolist():
                        p = int(pos[n]) + len(tb)
                        ends[n] = joined[p : joined.index(b" ", p)].isdigit()
                pos = pos[ends]
        if pos.size:  # each hit's text, by its offset
            owner = np.searchsorted(starts, pos, side="right") - 1
            counts[j, cols] = np.bincount(owner, minlength=len(encoded))


# bytes table: every byte that is not an ASCII word character (regex \w) becomes a space
_ASCII_NON_WORD = bytes(c if c < 128 and (chr(c).isalnum() or chr(c) == "_") else 32 for c in range(256))
# the same, with ASCII letters lower-cased
_ASCII_LOWER_WORD = bytes(_ASCII_LOWER[c] if _ASCII_NON_WORD[c] != 32 else 32 for c in range(256))
