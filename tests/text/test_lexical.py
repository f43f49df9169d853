import itertools
import math
import os
import random
import re
import subprocess
import sys
import unicodedata
import zlib
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxassembly.data import load_corpus
from ctxassembly.text import lexical
from ctxassembly.text.lexical import Lexical, normalize, query_terms, shingles, text_classes, without_markup, words

pytestmark = pytest.mark.unit

# The fast paths (byte translation, C-level split) must give exactly what the regex gave.
ODD = [
    "",
    "   ",
    "a_b-c d\x1f e",
    "Ünïcödé and ASCII",
    "ﬁle FILE file",
    "Straße STRASSE",
    "tab\tand\nnew\x0bline\x1c\x1dsep",
    "model model model.model",
    "x" * 5,
]
TEXTS = [c["text"] for c in load_corpus()] + ODD
_WORD = re.compile(r"\w+")


def _old_normalize(text):
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).strip().casefold()


def _old_bm25(texts, query, k1=1.2, b=0.75):
    bags = [_glued_bag(_WORD.findall(t.casefold())) for t in texts]
    lengths = [len(_WORD.findall(t.casefold())) for t in texts]
    avg = (sum(lengths) / len(lengths)) or 1.0
    terms = list(dict.fromkeys(query_terms(query)))
    pairs = [f"{a}_{b}" for a, b in itertools.pairwise(terms) if not (a.isdigit() or b.isdigit())]
    terms = list(dict.fromkeys(terms + pairs))
    for bag, t in zip(bags, texts, strict=True):  # a term with "_": a run of an identifier's parts
        for term in terms:
            if "_" in term:
                bag[term] = len(re.findall(rf"(?<![^\W_]){re.escape(term)}(?![^\W_])", t.casefold()))
    weights = {}
    for term in terms:
        f = sum(1 for bag in bags if bag[term])
        weights[term] = math.log(1 + (len(bags) - f + 0.5) / (f + 0.5))
    out = []
    for bag, length in zip(bags, lengths, strict=True):
        norm = k1 * (1 - b + b * length / avg)
        out.append(sum(w * bag[t] * (k1 + 1) / (bag[t] + norm) for t, w in weights.items() if bag[t]))
    return out


def _glued_bag(words_):
    """The word bag BM25 counts by: a word of three letters or more also counts where
    ASCII digits are glued on (``pypy3`` holds ``pypy``)."""
    bag = Counter(words_)
    for w in words_:
        m = re.fullmatch(r"(.*?)([0-9]+)", w)
        if m and len(m[1]) >= 3 and m[1].isalpha():
            bag[m[1]] += 1
    return bag


def test_words_and_normalize_match_the_regex_definitions():
    for t in TEXTS:
        assert words(t) == _WORD.findall(t.casefold()), t
        assert normalize(t) == _old_normalize(t), t


def test_shingles_are_the_hashed_word_five_grams():
    for t in TEXTS:
        w = words(normalize(t))
        grams = [w[i : i + 5] for i in range(len(w) - 4)]
        expected = frozenset(zlib.crc32("\x1f".join(g).encode()) for g in grams) if len(w) >= 5 else None
        if expected is not None:
            assert shingles(t) == expected


def test_shingles_are_the_same_in_every_process():
    # Python's hash() is salted per process; MinHash LSH reads the shingles' bits, so a
    # salted hash would make long-list dedup propose other pairs in each process
    code = "from ctxassembly.text.lexical import shingles; print(sorted(shingles('one two three four five six seven')))"
    seen = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert len(seen) == 1


@pytest.mark.parametrize(
    "query",
    ["What is the default iteration count of PBKDF2 in Django 5.1?", "model model", "straße file", "the of a", ""],
)
def test_bm25_counts_only_the_query_terms_and_gives_the_full_bag_scores(query):
    texts = TEXTS[:150] + ODD
    assert Lexical(texts).scores(query) == pytest.approx(_old_bm25(texts, query), abs=1e-12)
    assert Lexical([]).scores(query) == []


@pytest.mark.parametrize("ascii_", [True, False])
def test_a_word_counts_where_digits_are_glued_to_it(ascii_: bool) -> None:
    """ "Which PyPy version" finds ``PyPy3.8+``; a number or a short word does not glue
    (``v`` is not in ``v7``), and letters after the digits make another word."""
    end = "" if ascii_ else " ❨❩"
    texts = ["- PyPy3.8+ (v7.3.11+)" + end, "Python 3.8 only" + end, "pypy3x and v2" + end, "sha256 sums" + end]
    pypy, v, x = (Lexical(texts).scores(q) for q in ("pypy", "v", "3x"))
    assert pypy[0] > 0
    assert pypy[1:] == [0, 0, 0]
    assert v == x == [0, 0, 0, 0]
    assert Lexical(texts).scores("sha")[3] > 0
    for many in (texts, texts * 2000):  # the list path and the numpy path count the same
        assert Lexical(many).scores("pypy sha") == pytest.approx(_old_bm25(many, "pypy sha"))


@pytest.mark.parametrize("ascii_", [True, False])
def test_neighbouring_question_words_find_an_identifier_of_their_parts(ascii_: bool) -> None:
    """ "the base path" finds ``restrict_base_path`` and "visibility timeout" finds
    ``visibility_timeout``; a lone part does not, nor do the words in another order."""
    end = "" if ascii_ else " ❨❩"
    texts = [
        "`restrict_base_path` | bool | `True`" + end,
        "The visibility_timeout option." + end,
        "A base for the path." + end,
        "path_base and basepath" + end,
    ]
    base_path = Lexical(texts).scores("base path")
    assert base_path[0] > 0  # by the compound alone: no word of it is "base" or "path"
    assert base_path[2] > 0  # the two words themselves
    assert base_path[3] == 0
    assert Lexical(texts).scores("visibility timeout")[1] > 0
    assert Lexical(texts).scores("restrict") == [0, 0, 0, 0]
    assert Lexical(texts).scores("Does it restrict_base_path?")[0] > 0
    for many in (texts, texts * 2000):  # the list path and the numpy path count the same
        q = "restrict the base path, visibility timeout"
        assert Lexical(many).scores(q) == pytest.approx(_old_bm25(many, q))


def test_text_classes_number_normalised_texts_in_order_of_first_appearance():
    base = ["a b", "A  B", "ab", "ﬁle", "file", "FILE ", "x", "", " ", "Straße", "STRASSE"]
    texts = base + base[::-1] + TEXTS[:20] + [t.upper() for t in TEXTS[:20]]
    seen: dict[str, int] = {}
    assert text_classes(texts) == [seen.setdefault(normalize(t), len(seen)) for t in texts]
    assert text_classes([]) == []


def test_bm25_matches_the_regex_bags_on_random_mixed_texts():
    """Words at text edges, repeated terms, digits, underscores, non-ASCII texts and terms,
    empty texts: the byte-level counting must give the regex word bags' scores."""
    import random

    rng = random.Random(1)
    vocab = ["model", "Model", "field", "5", "1", "django", "pypy3", "PyPy", "ab1"]
    vocab += ["x_y", "ß", "straße", "été", "a", "1.1", "MODEL.model", ""]
    seps = ["", " ", ".", ",", "\n", "--"]
    for _ in range(300):
        texts = [
            " ".join(rng.choice(vocab) + rng.choice(seps) for _ in range(rng.randint(0, 30)))
            for _ in range(rng.randint(1, 12))
        ]
        query = " ".join(rng.choice(vocab) for _ in range(rng.randint(0, 6)))
        assert Lexical(texts).scores(query) == pytest.approx(_old_bm25(texts, query), abs=1e-9)


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Set :setting:`DEBUG` to False.", "Set  `DEBUG` to False."),
        ("Use :py:func:`os.path.join` here.", "Use  `os.path.join` here."),
        (".. versionadded:: 5.1\n   The flag.", "  5.1\n   The flag."),
        ("A ratio of 3:4:5 stays; so does key: value and http://x.org/a:b.", None),
        ("Markdown `code` and **bold** stay.", None),
    ],
)
def test_without_markup_blanks_role_and_directive_names_only(text: str, kept: str | None) -> None:
    assert without_markup(text) == (text if kept is None else kept)


# the one regex without_markup used to run: the fast search must find exactly its matches
_MARKUP_REGEX = re.compile(r"(?<![\w:]):[\w.+-]+(?::[\w.+-]+)*:(?=`)|^\s*\.\.\s+[\w:.-]+::", re.MULTILINE)
_MARKUP_PIECES = [":", "`", ".", "..", " ", "\n", "a", "b", "_", "-", ":a:", ".. ", "::", "\t", "x:y", "é"]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(_MARKUP_PIECES), max_size=30).map("".join))
def test_without_markup_is_the_single_regex(text: str) -> None:
    assert without_markup(text) == _MARKUP_REGEX.sub(" ", text)


def test_without_markup_is_the_single_regex_on_the_demo_corpus() -> None:
    for c in load_corpus():
        assert without_markup(c["text"]) == _MARKUP_REGEX.sub(" ", c["text"])


def test_few_texts_are_counted_as_the_numpy_path_counts() -> None:
    rng = random.Random(5)
    terms = ["default", "count", "django", "5", "1", "ünï", "a_b", "x", "the", "setting"]
    for _ in range(200):
        texts = [t for t in rng.sample(TEXTS, rng.randint(1, 12)) if t.isascii()] + ["", "a_b x  X"]
        picked = rng.sample(terms, 5)
        cols = np.arange(len(texts))
        few, few_len = np.zeros((5, len(texts))), np.zeros(len(texts))
        full, full_len = np.zeros((5, len(texts))), np.zeros(len(texts))
        lexical._count_few(texts, picked, few, few_len, cols)
        lexical._count_ascii(texts, picked, full, full_len, cols)
        assert (few == full).all()
        assert (few_len == full_len).all()


_GLUE_PIECES = ["sha", "SHA", "256", "1", "pypy", "3", "x", " ", "  ", "-", "_", ".", "\n", "sha256", "pypy3x"]


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_GLUE_PIECES), max_size=14).map("".join), min_size=1, max_size=4))
def test_few_texts_count_the_glued_bag(texts: list[str]) -> None:
    """The list path counts each term as :func:`_glued_bag` does (a word, and a word of three
    letters or more with digits glued on), wherever the word sits in the text."""
    terms = ["sha", "pypy", "x", "256", "3"] if len(texts) % 2 else ["sha", "pypy", "x", "256", "3", "1", "sha256", "y"]
    cols = np.arange(len(texts))
    counts, lengths = np.zeros((len(terms), len(texts))), np.zeros(len(texts))
    lexical._count_few(texts, terms, counts, lengths, cols)
    for col, text in enumerate(texts):
        found = _WORD.findall(text.casefold())
        bag = _glued_bag(found)
        assert lengths[col] == len(found)
        assert [counts[j, col] for j in range(len(terms))] == [bag[t] for t in terms], text


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_GLUE_PIECES), max_size=14).map("".join), min_size=1, max_size=6))
def test_document_frequencies_are_those_of_the_counts(texts: list[str]) -> None:
    """:func:`_doc_freq` (searched, not counted) holds each term in as many texts as the
    counts find it in, repeated texts included."""
    texts = texts + texts[:2]
    terms = ["sha", "pypy", "x", "256", "3", "1", "sha256", "y", "sha_256", "ünï"]
    counts, _ = lexical._term_counts(texts, terms)
    assert lexical._doc_freq(texts, terms).tolist() == (counts > 0).sum(axis=1).tolist()


def test_document_frequencies_of_corpus_texts() -> None:
    terms = ["default", "count", "django", "5", "1", "a_b", "x", "the", "setting", "python", "ünï"]
    rng = random.Random(7)
    for _ in range(100):
        texts = rng.sample(TEXTS, rng.randint(1, 12))
        counts, _ = lexical._term_counts(texts, terms)
        assert lexical._doc_freq(texts, terms).tolist() == (counts > 0).sum(axis=1).tolist()


# the fact patterns as they were before each opened with a lookahead of its first
# characters (and dates were looked for only beside four digits): the same facts
_OLD_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_OLD_DATE = re.compile(
    rf"\b(?:\d{{4}}-\d{{2}}-\d{{2}}|{_OLD_MONTH}\s+\d{{1,2}},?\s+\d{{4}}|\d{{1,2}}\s+{_OLD_MONTH}\s+\d{{4}})\b",
    re.IGNORECASE,
)
_OLD_NUMBER = re.compile(
    r"(?<![\w.])[-+]?\d[\d,_]*(?:\.\d+)*(?:\s?(?:%|[kmgt]i?b|bytes?|ms|s|sec(?:onds?)?|"
    r"min(?:utes?)?|h(?:ours?)?|days?|weeks?|years?|chars?|characters?|x))?(?![\w])",
    re.IGNORECASE,
)
_OLD_NEGATION = re.compile(
    r"\b(?:not|no|never|none|cannot|can't|don't|doesn't|isn't|aren't|won't|without|"
    r"deprecated|removed|unsupported|no longer)\b",
    re.IGNORECASE,
)
_FACT_PIECES = [
    "1",
    "20",
    "2020",
    "-",
    "+",
    ".",
    ",",
    "_",
    " ",
    "\n",
    "%",
    "ms",
    "KiB",
    "x",
    "a",
    "Jan",
    "may",
    "DEC.",
    "sept",
    "not",
    "NO",
    "no longer",
    "can't",
    "Won't",
    "None",
    "removed",
    "é",
    "İ",
    "ı",
    "ſ",
    "K",
]


def _old_facts(text: str) -> frozenset[str]:
    t = unicodedata.normalize("NFKC", text)
    found = {"date:" + re.sub(r"\s+", " ", m.group(0).lower()) for m in _OLD_DATE.finditer(t)}
    found |= {
        "num:" + re.sub(r"\s+", "", m.group(0).lower()).replace(",", "").replace("_", "")
        for m in _OLD_NUMBER.finditer(t)
    }
    negations = Counter(re.sub(r"\s+", " ", m.group(0).lower()) for m in _OLD_NEGATION.finditer(t))
    return frozenset(found | {f"neg:{w}:{n}" for w, n in negations.items()})


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(_FACT_PIECES), max_size=30).map("".join))
def test_facts_are_the_old_patterns_facts(text: str) -> None:
    assert lexical.facts(text) == _old_facts(text)


def test_facts_are_the_old_patterns_facts_on_the_demo_corpus() -> None:
    for c in load_corpus():
        assert lexical.facts(c["text"]) == _old_facts(c["text"])


# --- phrases: the question's neighbouring words said together


def _plain_phrases(texts: list[str], query: str, gap: int = lexical.PHRASE_GAP) -> list[float]:
    """The definition in words: a text holds a query pair when, in its list of words with
    the stop words left out, the second follows the first at most ``gap`` words later;
    each held pair scores its inverse document frequency over the texts."""
    terms = query_terms(query)
    pairs = {p for p in itertools.pairwise(terms) if p[0] != p[1] and not (p[0].isdigit() or p[1].isdigit())}
    held = []
    for t in texts:
        ws = [w for w in words(t) if w not in lexical._STOP]
        held.append({(ws[i], ws[j]) for i in range(len(ws)) for j in range(i + 1, min(i + 2 + gap, len(ws)))} & pairs)
    n = len(texts)
    df = Counter(p for h in held for p in h)
    return [sum(math.log(1 + (n - df[p] + 0.5) / (df[p] + 0.5)) for p in h) for h in held]


def test_a_phrase_counts_where_the_question_says_it_in_that_order() -> None:
    texts = [
        "Set the visibility timeout of a task.",  # said together
        "The visibility of the default timeout",  # one other word between: still the phrase
        "visibility, then three other words, timeout",  # too far apart
        "timeout and visibility",  # the wrong order
        "Visibility-Timeout",  # punctuation is no word
        "the timeouts of visibility",  # another word
    ]
    found = lexical.phrases(texts, "What is the visibility timeout?")
    assert [s > 0 for s in found] == [True, True, False, False, True, False]
    assert found[0] == found[1] == found[4] == pytest.approx(math.log(1 + 3.5 / 3.5))
    # a number makes no pair (the version stage reads versions), nor does a word with itself
    assert lexical.phrase_pairs("In Django 5.2, does the cache cache timeout?") == [("cache", "timeout")]
    assert lexical.phrases(["celery 5 5"], "Celery 5.5") == [0.0]
    assert lexical.phrases([], "visibility timeout") == []
    assert lexical.phrases(["a b"], "the") == [0.0]


def test_phrases_are_the_plain_definition_with_and_without_the_bm25_counts() -> None:
    """On the demo corpus and on random texts (repeats, non-ASCII, stop words, digits): the
    walk by ``bytes.find`` finds what the word lists find, and the BM25 counts only skip texts."""
    rng = random.Random(7)
    vocab = ["cache", "Cache", "timeout", "the", "of", "a", "default", "5", "ß", "straße", "été", "x_y", "field"]
    seps = [" ", ".", ",", "\n", "--", "  "]
    cases = []
    for _ in range(300):
        texts = [
            "".join(rng.choice(vocab) + rng.choice(seps) for _ in range(rng.randint(0, 25)))
            for _ in range(rng.randint(1, 8))
        ]
        texts += rng.sample(texts, min(2, len(texts)))  # a hybrid list repeats texts
        cases.append((texts, " ".join(rng.choice(vocab) for _ in range(rng.randint(0, 6)))))
    corpus = [c["text"] for c in load_corpus()]
    for _ in range(40):
        texts = rng.sample(corpus, 12)
        cases.append((texts, " ".join(rng.sample(" ".join(texts).split(), 6))))
    cases.append((["x " + "of the " * 200 + "cache timeout", "cache " + "the " * 100 + "timeout"], "cache timeout"))
    for texts, query in cases:
        expected = _plain_phrases(texts, query)
        assert lexical.phrases(texts, query) == pytest.approx(expected, abs=1e-9), (texts, query)
        bm25 = Lexical(texts)
        bm25.scores(query)
        assert lexical.phrases(texts, query, bm25.holds) == pytest.approx(expected, abs=1e-9), (texts, query)
