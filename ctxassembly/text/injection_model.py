"""Instruction-like sentences found by a learned linear model (numpy only).

The rules of :mod:`ctxassembly.text.injection` are precise on the shapes they were
written for; text that does the same thing in another grammatical shape, another
language or another channel passes them. This model is the second net: a logistic
regression over hashed character n-grams (3 to 5 characters of the lower-cased text,
punctuation folded to spaces, so "ignor", "nore ", "anwei" carry across inflections and
languages), hashed words, word stems (the first five characters of a longer word, so that
"disregarded" and "disregard", a passive and an imperative, share a feature) and pairs of
neighbouring words and of their stems, the rules' own verdict on the sentence, and intent
signals built from word concepts (a small lexicon in 29 languages): an act addressed to
a model; an act on the reader's own context (a model's act with a must, a secret sent
somewhere, earlier rules dismissed), one feature for the three so that its weight is
learnt from every family; an imperative whose object is the reader's context; and how
many of the concepts the sentence holds (a ladder: two or more, ..., six or more).
Instructions of every family share them, so that a family's words the n-grams never saw
still meet a feature they did. It is
trained on a labelled set of instruction-like text composed from intents, shapes
(polite, passive, third person, split, conditional, addressed), channels (comments, alt
text, link titles, code comments, tool results, transcripts) and languages, and of real
documentation sentences that talk about prompts, passwords, instructions and warnings
(``benchmarks/injection_data.py`` builds it, ``benchmarks/injection_train.py`` trains it
and prints the leave-one-family-out and leave-one-shape-out tables).

Other scripts are read as text: a combining mark (a Devanagari vowel sign) stays in its
word, ``。`` / ``।`` / ``؟`` end a sentence, a character of a script without spaces (Han,
kana, Thai) counts as part of a word, and the lexicon's words in those scripts are found
as substrings. The n-grams and words with a letter past Latin-1 have a table of weights
of their own, fitted (``benchmarks/injection_train.py``, second stage) on payloads in 22
more languages and on real translated software and manuals with everything else held,
so that what those languages teach moves no weight English text reads; a sentence with
such letters in which English function words are rare is flagged from a threshold of its
own (``other_threshold``), chosen on real text of those languages by the English rule.

The weights ship with the package (``ctxassembly/data/injection_model.npz``, float16);
scoring is a gather and a segment sum over the n-gram ids of a whole batch of texts: a
few numpy operations per call, whatever the number of chunks. A sentence is flagged when
its probability (or that of the pair it forms with its neighbour) reaches the model's
threshold, chosen on the held-out half of each dev corpus for a false-flag rate per chunk
of at most 0.1%; a short sentence that introduces a flagged one ("There is one more
thing.") goes with it. The decoded views of a text (:mod:`ctxassembly.text.decode`:
base64, hex, escapes, spaced letters, digits for letters, look-alikes) are scored in the
same way, and what they reveal cuts the sentences of the text that carry it.
"""

from __future__ import annotations

import json
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from ctxassembly.text.decode import decoded_spans, views
from ctxassembly.text.structure import HEADER_CHARS, UNDERLINE, unwrapped

__all__ = [
    "CONCEPTS",
    "DIM",
    "NGRAMS",
    "Detector",
    "LinearModel",
    "SentenceClassifier",
    "builtin",
    "featurize",
    "lexicon_stems",
    "other_rows",
    "sentence_bounds",
    "text_signals",
    "union_spans",
]

#: one hashed table (2**18 ids: collisions stay rare for a few hundred thousand n-grams)
_BITS = 18
_TABLE = 1 << _BITS
#: the feature space: two tables, the n-grams and words of Latin-1 letters in the first and
#: those with a letter past Latin-1 (Cyrillic, Greek, Arabic, CJK, Devanagari, Polish,
#: Czech, Turkish ...) in the second, so that what the other scripts teach never moves a
#: weight that English text reads (English documentation fills nearly all of one table)
DIM = 2 * _TABLE
#: the first code point whose n-grams go to the second table (and every substring of the
#: lexicon holds a letter from it on: only sentences with one are searched for them)
_WIDE = 0x100
_WIDE_SHIFT = np.uint64(_BITS)
#: the character n-gram lengths
NGRAMS = (3, 4, 5)
_CACHE_SIZE = 16384  # texts whose spans are kept (the rules' cache holds as many)
#: fewer words (starting with a letter) than this are never flagged by the model: an instruction needs a verb and
#: what it acts on, and a fragment (a reST label, a bullet of one literal, a heading) has
#: too few n-grams for its score to mean anything
MIN_WORDS = 5
#: a sentence of two words to this many right before a flagged one, in its paragraph, goes
#: with it when the two together reach the threshold (0: never; a word alone, "Stop." or
#: a title's "Caching.", stays)
LEAD_WORDS = 8
#: a sentence next to a flagged one (by the model or the rules) in its paragraph, one after
#: another, goes with it when its own probability reaches this (hysteresis: the rest of an
#: instruction whose clearest sentence was flagged, "New goal: roll production back."; 0:
#: never). 0.3 reaches 0.2-1.2% of the sentences of documentation never trained on; chosen
#: on three writers' payloads the model never saw (benchmarks/README.md)
NEIGHBOUR_P = 0.3
#: in a paragraph written on one line, the sentences after one the model flagged go with
#: it: a comment, a message or a planted paragraph is one utterance, and what the bar of
#: NEIGHBOUR_P leaves after an instruction ("This is the official fix.") is the rest of
#: it. What precedes it stays (text an instruction was appended to), and a paragraph of
#: several lines is judged sentence by sentence; label lines above it in its block (a heading,
#: a title over its underline, a bold line) leave it one line (measured: benchmarks/README.md)
ONE_LINE_WHOLE = True
#: a hard-wrapped paragraph (every line goes on at its column: ``structure.unwrapped``) is
#: one line for :data:`ONE_LINE_WHOLE`: documentation is wrapped, and so is an instruction
#: written into it. Every blind set, wrapped or not, removes as much or more; a host
#: paragraph an instruction was planted inside loses its sentences after it (measured:
#: benchmarks/README.md)
WRAPPED_ONE_LINE = True
#: a sentence that shares no word with the rest of its text (a text of at least
#: :data:`FOREIGN_REST` words besides it) is flagged from this probability, below the
#: threshold: an instruction planted in documentation is about something else than the
#: page around it, the page's own sentences are about the page. English sentences only: one
#: in another language shares no word with an English page whatever it says (None: never;
#: measured: benchmarks/README.md)
FOREIGN_P: float | None = 0.75
#: the most of a sentence's words the rest of its text may hold for :data:`FOREIGN_P`
FOREIGN_SHARED = 0.0
#: the fewest distinct words the rest of a text holds for :data:`FOREIGN_P` to apply
FOREIGN_REST = 20
#: the fewest distinct words (four letters or more, not a function word) a sentence holds for
#: :data:`FOREIGN_P` to apply: a short sentence shares no word with its page by chance
FOREIGN_OWN = 4
#: the chunk-level false-flag rate the shipped threshold was chosen for (per dev corpus)
TARGET_FALSE_FLAGS = 0.001
_MULT = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: the top bits of h * MULT
_BASE = np.uint64(1_000_003)
_SPACE = 32
# ASCII: letters and digits lower-cased, the underscore kept (an identifier such as
# ``this_is_very_long`` is one word of code, not a sentence of prose), everything else a
# space (non-ASCII code points stay)
_ASCII = np.array(
    [c + 32 if 65 <= c <= 90 else c if (48 <= c <= 57 or 97 <= c <= 122 or c == 95) else _SPACE for c in range(128)],
    dtype=np.uint64,
)
# between the texts of a batch, and around each: as many line breaks as the longest n-gram
# less one, so that no n-gram joins two texts and each text is scored as it is alone
_SEP = "\n" * (max(NGRAMS) - 1)

# --- intents: what a family's held-out members share with the other families ---
#
# Character n-grams learn the words of the families they were trained on; a family left
# out (or a payload nobody here wrote) brings its own words. What instructions share is
# their parts: a reader addressed (a model named, "your answer"), an act on the reader's
# output or rules (dismiss, disclose, say), a must or a now, a secret and where it goes.
# Each word of a small lexicon (these seven languages here, 22 more in
# ``data/injection_lexicon.json``; a word of five characters or more is matched by its
# first five, a shorter one whole, a substring of a script without spaces anywhere) has
# its concepts; a sentence's intent
# features are a few conjunctions of them (each concept alone is everywhere in docs:
# "you", "must", "send", "password"; tried as features of their own, they and all their
# pairs raised the benign tail more than the payloads, see benchmarks/README.md). A
# conjunction that only one family has gets no weight when that family is left out: the
# acts are therefore one feature (``intent``), and the speech act (an imperative that
# opens a sentence, on an object of the reader's context) another, both shared.
_LEXICON: dict[str, str] = {
    "you": "you your yours yourself du dich dir dein deine deinen deiner ihr euch euer tu toi ton ta tes vous votre "
    "vos tus usted ustedes tuo tua tuoi voi vostro você voce vocês teu jij jou jouw je uw",
    "model": "ai llm llms chatbot chatbots bot bots gpt chatgpt assis agent agents ki ia sprac model modele modèle "
    "modelo modello taalm assistente asistente assistent crawl summa",
    "prior": "previ prior earli above prece origi initi forme befor bishe vorhe früh fruh obige préc prec antér "
    "anter prima eerde vorig voorg",
    "rules": "instr direc guida guide rules rule prompt const polic order comma setup task tasks progr anwei vorga "
    "regel consi règle regle regla regol regra",
    "dismiss": "ignor disre forge drop disca skip aband overr bypas cance void withd lift suspe super aside vergi "
    "verge missa oubli olvid dimen esque desco negee negle",
    "disclose": "send reveal share print outpu paste leak post forwa email uploa inclu list expos discl dump copy "
    "trans exfil appen embed encod show displ repea write sende schic schick gib zeig verra envoi affic révè reve "
    "envía envia muest revel invia mostr rivel envie stuur toon kopie copie copia",
    "secret": "passw keys key token crede secre cooki api priva env envir sessi zugan schlü schlu passe clé cle "
    "contr clave chiav senha senhas wacht sleut",
    "say": "say says tell tells state claim menti answe reply respo repor insis asser recom sag sage antwo behau dis "
    "répon repon affir resp afirm rispo affer diga zeg vertel",
    "output": "answe reply repli respo outpu summa messa antwo répon repon respu rispo",
    "must": "must always only every never requi ought shall need immer jede jeden muss musst toujo chaqu doit "
    "siemp cada debe debes sempr ogni deve devi altij elk moet moeten",
    "now": "now hence immed onwar hereb jetzt sofor désor desor maint ahora adela ora agora nu voort",
    "dest": "http https www url link webho pastebin",
}
CONCEPTS = tuple(_LEXICON)

# English's commonest function words (that other languages' text rarely holds): a sentence
# with a letter past Latin-1 in which fewer than one word in ten is one of them is read as
# another language, and flagged from the model's threshold for other languages
# (``LinearModel.other_threshold``): its n-grams (the second table) are trained on far less
# text than English's, and the lexicon's concepts decide more of its score
_ENGLISH = (
    "the of and is are was were be been this that these those with from by you your we our they their it its can "
    "will would should could may must have has had not or if when which what how there then than also only all any "
    "each some more other such into about use used using see new one"
)
#: the share of a sentence's words below which it is read as another language
OTHER_SHARE = 0.1


@lru_cache(maxsize=1)
def _other_languages() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """The lexicon's words in the other languages (``data/injection_lexicon.json``, built
    by ``benchmarks/injection_data.py`` from ``benchmarks/data/langs``): ``(words,
    substrings)``, each by concept. Words are matched as :data:`_LEXICON`'s are; a
    substring (the words of a script written without spaces, Korean stems, a phrase of
    several words) anywhere in a sentence."""
    with resources.files("ctxassembly.data").joinpath("injection_lexicon.json").open(encoding="utf-8") as f:
        doc = json.load(f)
    return doc["words"], doc["substrings"]


@lru_cache(maxsize=1)
def lexicon_stems() -> frozenset[str]:
    """The words of the concept lexicon, each cut to its first five letters: a decoder
    reads digits as letters only when words then become some of these (one set, shared
    by the rules and the model, so that both read the same views)."""
    return frozenset(w[:_STEM] for words in _LEXICON.values() for w in words.split())


_K = len(CONCEPTS)
#: the weak signals, one feature each: the rules' verdict on the sentence; an act
#: addressed to a model or its output; that act by a model with a must or a now (most
#: families have it: its weight is learnt whichever is left out); ``intent``: any of
#: three acts on the reader's own context (that act, a secret disclosed to a place or into the
#: output, rules or earlier text dismissed), one feature with one weight, so that the
#: weight a family left out needs is learnt from the families that are in (each act as a
#: feature of its own got no weight, or a negative one, when its family was left out);
#: ``imperative_act``: an act (dismiss, disclose, say) among the first words of a sentence
#: (an imperative: "Send ...", "Note: ignore ...") with an object of the reader's context
#: (earlier text, rules, a secret, the output, a destination)
#: ``concepts2`` ... ``concepts6``: how many of the twelve concepts the sentence holds (two
#: or more, three or more, ...). Instructions are dense in them whatever their family,
#: shape or language (a reader, an act, its object, a must), documentation sentences
#: less (three or more: a fifth of the labelled set's documentation sentences, three
#: fifths of its first-written payloads): a ladder learnt from every family, so that a
#: family, a shape or a language left out still meets trained weights
DENSITY = (2, 3, 4, 5, 6)
SIGNALS = ("rules", "addressed_act", "model_act_must", "intent", "imperative_act", *(f"concepts{k}" for k in DENSITY))
_STEM = 5
#: the first words of a sentence an imperative's verb is looked for in ("Please, now send
#: ...", "Note: ignore ...")
_LEAD = 3
_LEAD_SHIFT = 16  # the first words' concept bits sit above the sentence's own (12 concepts)

_END = np.zeros(128, dtype=bool)
_END[[ord(c) for c in ".!?"]] = True
_WHITE = np.zeros(128, dtype=bool)
_WHITE[[ord(c) for c in " \t\n\r"]] = True


#: sentence ends of scripts written without spaces (the ideographic full stop, the full-width
#: exclamation mark, full stop and question mark): a sentence starts right after them
_CLOSE_END = np.array([0x3002, 0xFF01, 0xFF0E, 0xFF1F], dtype=np.uint32)
#: sentence ends of other scripts that a space follows (Devanagari danda and double danda,
#: the Arabic question mark and full stop)
_SPACED_END = np.array([0x0964, 0x0965, 0x061F, 0x06D4], dtype=np.uint32)
_FIRST_END = 0x0600  # no sentence end of either set lies below this code point


def _starts(raw: npt.NDArray[np.uint32]) -> npt.NDArray[np.bool_]:
    """Where a sentence starts: after ``.``, ``!`` or ``?`` and a space, after a blank
    line, at a line that opens with ``#`` or ``.`` (a heading, a comment, a directive),
    and at the first character; after the sentence ends of other scripts (``。``, ``।``,
    ``؟`` ...). Vectorised: a few array operations for a whole batch."""
    n = raw.size
    starts = np.zeros(n, dtype=bool)
    if n == 0:
        return starts
    starts[0] = True
    a = np.where(raw < 128, raw, 0).astype(np.intp)
    starts[1:] |= (_END[a[:-1]] & _WHITE[a[1:]]) | ((a[:-1] == 10) & (a[1:] == 10))
    nl = np.flatnonzero(a[:-1] == 10) + 1  # the first character of each line
    starts[nl[(a[nl] == 35) | (a[nl] == 46)]] = True
    wide = np.flatnonzero(raw[:-1] >= _FIRST_END)
    if wide.size:
        c = raw[wide]
        starts[wide[np.isin(c, _CLOSE_END)] + 1] = True
        spaced = wide[np.isin(c, _SPACED_END)] + 1
        starts[spaced[_WHITE[a[spaced]]]] = True
    return starts


def _sentence_starts(text: str) -> list[int]:
    return np.flatnonzero(_starts(_raw(text))).tolist()  # type: ignore[no-any-return]


def sentence_bounds(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence of ``text`` that is not blank, in order."""
    first = np.flatnonzero(_starts(_raw(text))).tolist()
    ends = [*first[1:], len(text)] if first else []  # an empty text has no sentence
    return [(s, e) for s, e in zip(first, ends, strict=True) if text[s:e].strip()]


def _codes(cp: npt.NDArray[np.uint32]) -> npt.NDArray[np.uint64]:
    """The code points ``cp`` lower-cased (position for position), every character that
    is neither a letter nor a digit a space."""
    out = _ASCII[np.minimum(cp, 127)]
    wide = cp >= 128
    if wide.any():
        uniq, inverse = np.unique(cp[wide], return_inverse=True)
        out[wide] = np.array([_fold(int(c)) for c in uniq], dtype=np.uint64)[inverse]
    return out


@lru_cache(maxsize=4096)
def _fold(code: int) -> int:
    ch = chr(code)
    # a combining mark (a Devanagari or Thai vowel sign, a virama) is part of its word:
    # folded to a space, it would cut "निर्देश" into four fragments
    if not (ch.isalnum() or unicodedata.category(ch)[0] == "M"):
        return _SPACE
    lower = ch.lower()
    return ord(lower) if len(lower) == 1 else code


def _raw(text: str) -> npt.NDArray[np.uint32]:
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def _grams(cp: npt.NDArray[np.uint64]) -> list[tuple[int, npt.NDArray[np.bool_], npt.NDArray[np.int64]]]:
    """Per n-gram length the text is long enough for: the length, which positions start an
    n-gram worth counting (not two spaces), and the hashed id of each position's n-gram
    (in the second table when it holds a letter past Latin-1)."""
    n = cp.size
    out = []
    h = np.zeros(n, dtype=np.uint64)
    space = cp == _SPACE
    single = np.ones(n, dtype=bool)
    single[:-1] = ~(space[:-1] & space[1:])  # not two spaces in a row
    wide = cp >= _WIDE
    held = np.zeros(n, dtype=np.uint64) if wide.any() else None  # 1 where the n-gram holds one
    for k in range(min(max(NGRAMS), n)):
        m = n - k  # how many n-grams of length k + 1
        h[:m] = h[:m] * _BASE + cp[k:]
        if held is not None:
            held[:m] |= wide[k:]
        if k + 1 not in NGRAMS:
            continue
        keep = single[:m] if k else np.ones(m, dtype=bool)
        ids = ((h[:m] + np.uint64(k + 1)) * _MULT) >> np.uint64(64 - _BITS)
        if held is not None:
            ids |= held[:m] << _WIDE_SHIFT
        out.append((k + 1, keep, ids))
    return out


def featurize(text: str | npt.NDArray[np.uint32]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """``(positions, ids)`` of the hashed n-grams of ``text`` worth counting: the character
    n-grams, then the words and word pairs (:func:`_word_grams`)."""
    cp = _codes(_raw(text) if isinstance(text, str) else text)
    pos_parts, id_parts = [], []
    for _, keep, ids in _grams(cp):
        idx = np.flatnonzero(keep)
        pos_parts.append(idx)
        id_parts.append(ids[idx].astype(np.int64))
    for pos, ids in _word_grams(_word_hashes(cp)):
        pos_parts.append(pos)
        id_parts.append(ids)
    if not pos_parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(pos_parts).astype(np.int64), np.concatenate(id_parts)


_POW = np.cumprod(np.full(64, _BASE, dtype=np.uint64)) // _BASE  # BASE ** k, k < 64 (wrapping)
_POW[0] = 1
_BITS_K = np.arange(_K, dtype=np.uint32)


_Words = tuple[
    npt.NDArray[np.int64], npt.NDArray[np.uint64], npt.NDArray[np.uint64], npt.NDArray[np.int64], npt.NDArray[np.uint64]
]


def _word_hashes(codes: npt.NDArray[np.uint64]) -> _Words:
    """``(starts, hashes, prefix hashes, lengths, tables)`` of the words of ``codes`` (a
    word: a run of letters and digits; the prefix: its first five characters; the table: 1
    for a word with a letter past Latin-1, else 0)."""
    n = codes.size
    is_ch = codes != _SPACE
    ws = is_ch.copy()
    ws[1:] &= ~is_ch[:-1]
    wstart = np.flatnonzero(ws)
    if wstart.size == 0:
        empty = np.zeros(0, dtype=np.uint64)
        return wstart.astype(np.int64), empty, empty, wstart.astype(np.int64), empty
    wid = np.maximum(np.cumsum(ws) - 1, 0)
    pos = np.arange(n) - wstart[wid]
    vals = (codes + np.uint64(1)) * _POW[np.clip(pos, 0, 63)]
    vals[~is_ch] = 0
    full = np.add.reduceat(vals, wstart)
    prefix = np.add.reduceat(np.where(pos < _STEM, vals, np.uint64(0)), wstart)
    length = np.add.reduceat(is_ch.astype(np.int64), wstart)
    wide = codes >= _WIDE
    table = np.logical_or.reduceat(wide, wstart).astype(np.uint64) if wide.any() else np.zeros(wstart.size, np.uint64)
    return wstart.astype(np.int64), full, prefix, length, table


_WORD_SALT = np.uint64(101)
_PAIR_SALT = np.uint64(202)
_STEM_SALT = np.uint64(303)
_STEM_PAIR_SALT = np.uint64(404)


def _word_grams(words: _Words) -> list[tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]]:
    """``(positions, ids)`` of the hashed words and of the pairs of words one separator
    apart (a space, a hyphen: not across a sentence end or a line of a batch), each at the
    start of its (first) word. Beside the character n-grams they carry which words go
    together ("your reply", "the task"), which three to five characters do not."""
    wstart, full, prefix, length, table = words
    if wstart.size == 0:
        return []
    shift = np.uint64(64 - _BITS)
    second = table << _WIDE_SHIFT  # a word's (or a pair's) table, as the n-grams' is
    out = [(wstart, ((((full + _WORD_SALT) * _MULT) >> shift) | second).astype(np.int64))]
    near = np.flatnonzero(wstart[1:] - (wstart[:-1] + length[:-1]) == 1)
    if near.size:
        pair = (((full[near] * _MULT + full[near + 1] + _PAIR_SALT) * _MULT) >> shift) | second[near] | second[near + 1]
        out.append((wstart[near], pair.astype(np.int64)))
    long = np.flatnonzero(length > _STEM)
    if long.size:  # the stem of a longer word: "disregarded" and "disregard" share "disre"
        stem = (((prefix[long] + _STEM_SALT) * _MULT) >> shift) | second[long]
        out.append((wstart[long], stem.astype(np.int64)))
    if near.size:  # pairs of stems: "previously instructed" and "previous instructions" share one
        stems = ((prefix[near] * _MULT + prefix[near + 1] + _STEM_PAIR_SALT) * _MULT) >> shift
        out.append((wstart[near], (stems | second[near] | second[near + 1]).astype(np.int64)))
    return out


def _words(
    codes: npt.NDArray[np.uint64], words: _Words | None = None
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint32]]:
    """``(starts, concepts)``: where each word starts and the concept bits of each word
    (0 for a word of no concept). A word of fewer than five characters is looked up
    whole, a longer one by its first five."""
    wstart, full, prefix, length, _ = words if words is not None else _word_hashes(codes)
    if wstart.size == 0:
        return wstart, np.zeros(0, dtype=np.uint32)
    exact_keys, exact_bits, stem_keys, stem_bits = _lexicon()
    bits = _lookup(exact_keys, exact_bits, full)
    long = length >= _STEM
    bits[long] |= _lookup(stem_keys, stem_bits, prefix[long])
    return wstart, bits


def _lookup(
    keys: npt.NDArray[np.uint64], bits: npt.NDArray[np.uint32], x: npt.NDArray[np.uint64]
) -> npt.NDArray[np.uint32]:
    i = np.minimum(np.searchsorted(keys, x), keys.size - 1)
    return np.where(keys[i] == x, bits[i], np.uint32(0)).astype(np.uint32)


def _word_key(word: str) -> int:
    """``word`` hashed as :func:`_word_hashes` hashes a word of a text."""
    cp = _codes(_raw(word))
    return int(np.sum((cp + np.uint64(1)) * _POW[: cp.size], dtype=np.uint64))


@lru_cache(maxsize=1)
def _lexicon() -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint32], npt.NDArray[np.uint64], npt.NDArray[np.uint32]]:
    """The lexicon hashed as :func:`_words` hashes words: whole words, and stems."""
    exact: dict[int, int] = {}
    stem: dict[int, int] = {}
    other = _other_languages()[0]
    for bit, (concept, words) in enumerate(_LEXICON.items()):
        for w in [*words.split(), *other.get(concept, ())]:
            h = _word_key(w[:_STEM])
            table = stem if len(w) >= _STEM else exact
            table[h] = table.get(h, 0) | (1 << bit)
    ek, sk = sorted(exact), sorted(stem)
    return (
        np.array(ek, dtype=np.uint64),
        np.array([exact[k] for k in ek], dtype=np.uint32),
        np.array(sk, dtype=np.uint64),
        np.array([stem[k] for k in sk], dtype=np.uint32),
    )


def _concepts(
    codes: npt.NDArray[np.uint64], first: npt.NDArray[np.int64], words: _Words | None = None
) -> npt.NDArray[np.uint32]:
    """Per sentence (``first`` its starts): the bits of the concepts its words hold and,
    shifted by :data:`_LEAD_SHIFT`, those of its first :data:`_LEAD` words (and of the
    lexicon's substrings it holds, :func:`_substring_concepts`)."""
    wstart, bits = _words(codes, words)
    if first.size == 0:
        return np.zeros(0, np.uint32)
    held = np.zeros(first.size, np.uint32)
    if wstart.size:
        at = np.zeros(codes.size, dtype=np.uint32)
        at[wstart] = bits
        sentence = np.searchsorted(first, wstart, side="right") - 1
        rank = np.arange(wstart.size) - np.searchsorted(wstart, first)[np.maximum(sentence, 0)]
        lead = (sentence >= 0) & (rank < _LEAD)
        at[wstart[lead]] |= bits[lead] << np.uint32(_LEAD_SHIFT)
        held = np.bitwise_or.reduceat(at, first)
    _substring_concepts(codes, first, held)
    return held


#: the characters from a sentence's start within which a substring counts as one of its
#: first words (a script without spaces has no words to count)
_LEAD_CHARS = 8


@lru_cache(maxsize=1)
def _substring_index() -> tuple[re.Pattern[str] | None, dict[str, int]]:
    """One pattern of every substring of the lexicon (longest first), and the concept bits
    of each, both as :func:`_codes` folds text (lower case, punctuation a space)."""
    bits: dict[str, int] = {}
    substrings = _other_languages()[1]
    for bit, concept in enumerate(CONCEPTS):
        for w in substrings.get(concept, ()):
            key = _codes(_raw(w)).astype(np.uint32).tobytes().decode("utf-32-le")
            bits[key] = bits.get(key, 0) | 1 << bit
    bits.pop("", None)
    if not bits:
        return None, bits
    return re.compile("|".join(map(re.escape, sorted(bits, key=lambda k: (-len(k), k))))), bits


def _substring_concepts(
    codes: npt.NDArray[np.uint64], first: npt.NDArray[np.int64], held: npt.NDArray[np.uint32]
) -> None:
    """``held`` (per sentence) with the concepts of the lexicon's substrings each sentence
    holds, and those within its first :data:`_LEAD_CHARS` characters as lead bits. Only
    the sentences with a letter past Latin-1 are searched: English text costs one
    comparison per character."""
    wide = np.flatnonzero(codes >= _WIDE)  # every substring of the lexicon holds such a letter
    if wide.size == 0:
        return
    pattern, bits = _substring_index()
    if pattern is None:
        return
    text = codes.astype(np.uint32).tobytes().decode("utf-32-le")
    ends = [*first[1:].tolist(), codes.size]
    for row in np.unique(np.searchsorted(first, wide, side="right") - 1).tolist():
        s = int(first[row])
        got = 0
        for m in pattern.finditer(text, s, ends[row]):
            b = bits[m.group()]
            got |= b | (b << _LEAD_SHIFT if m.start() - s < _LEAD_CHARS else 0)
        held[row] |= got


def _signal_rows(rules: npt.NDArray[np.float32], held: npt.NDArray[np.uint32]) -> npt.NDArray[np.float32]:
    """The rows of :data:`SIGNALS` from the rules' verdict and the concept bits."""
    has = ((held[:, None] >> _BITS_K) & 1).astype(np.float32)
    c = {name: has[:, k] for k, name in enumerate(CONCEPTS)}
    lead = ((held[:, None] >> (_BITS_K + np.uint32(_LEAD_SHIFT))) & 1).astype(np.float32)
    f = {name: lead[:, k] for k, name in enumerate(CONCEPTS)}
    act = np.maximum(np.maximum(c["dismiss"], c["disclose"]), c["say"])
    addr = np.maximum(c["model"], c["you"] * c["output"])
    must = c["model"] * act * np.maximum(c["must"], c["now"])
    intent = np.maximum.reduce(
        [
            must,
            c["disclose"] * c["secret"] * np.maximum(c["dest"], c["output"]),
            c["dismiss"] * np.maximum(c["prior"], c["rules"]),
        ]
    )
    lead_act = np.maximum(np.maximum(f["dismiss"], f["disclose"]), f["say"])
    context = np.maximum.reduce([c["prior"], c["rules"], c["secret"], c["output"], c["dest"]])
    count = has.sum(axis=1)
    ladder = [(count >= k).astype(np.float32) for k in DENSITY]
    return np.stack([rules, addr * act, must, intent, lead_act * context, *ladder], axis=1)


def text_signals(texts: Sequence[str], rules: Sequence[bool]) -> npt.NDArray[np.float32]:
    """One row of :data:`SIGNALS` per text, each text read as one sentence (the training
    rows; the detector computes the same per sentence and per pair)."""
    out = np.zeros((len(texts), len(SIGNALS)), dtype=np.float32)
    for i, text in enumerate(texts):
        codes = _codes(_raw(text))
        held = _concepts(codes, np.zeros(1, dtype=np.int64))
        out[i] = _signal_rows(np.array([float(rules[i])], np.float32), held)[0]
    return out


def _rule_rows(
    first: npt.NDArray[np.int64], row_of: npt.NDArray[np.int64], rule_spans: Sequence[tuple[int, int, str]]
) -> npt.NDArray[np.float32]:
    out = np.zeros(first.size, dtype=np.float32)
    for s, e, _ in rule_spans:
        out[row_of[s] : row_of[max(s, e - 1)] + 1] = 1.0
    return out


@dataclass(frozen=True)
class LinearModel:
    """Weights of the linear model: one per hashed n-gram id, one per signal, a bias, and
    the probability from which a sentence is flagged."""

    weights: npt.NDArray[np.float32]
    signal_weights: npt.NDArray[np.float32]
    bias: float
    threshold: float
    #: the threshold of a sentence in another language (:data:`OTHER_SHARE`); None: ``threshold``
    other_threshold: float | None = None
    #: the signal weights of a sentence in another language (fitted with the second table);
    #: None: ``signal_weights``
    other_signal_weights: npt.NDArray[np.float32] | None = None
    # spans by (text, rule spans): retrieved chunks repeat across calls, as the rules' cache knows
    _cache: dict[tuple[str, tuple[tuple[int, int, str], ...]], tuple[tuple[int, int, str], ...]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def __post_init__(self) -> None:
        if self.weights.shape != (DIM,):
            raise ValueError(f"weights: expected {DIM} (one per hashed n-gram), got {self.weights.size}")
        if self.signal_weights.shape != (len(SIGNALS),):
            raise ValueError(
                f"signal_weights: expected {len(SIGNALS)} (one per signal), got {self.signal_weights.size}"
            )
        if self.other_signal_weights is not None and self.other_signal_weights.shape != (len(SIGNALS),):
            raise ValueError(
                f"other_signal_weights: expected {len(SIGNALS)} (one per signal), got {self.other_signal_weights.size}"
            )

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        # the shipped model travels as a reference to itself (an assembler pickles small),
        # any other as its weights; the span cache never travels
        if self is builtin():
            return (builtin, ())
        return (
            LinearModel,
            (
                self.weights,
                self.signal_weights,
                self.bias,
                self.threshold,
                self.other_threshold,
                self.other_signal_weights,
            ),
        )

    def clear(self) -> None:
        """Forget the spans found so far (the next call sees its texts for the first time)."""
        self._cache.clear()

    @classmethod
    def load(cls, path: str | Path) -> LinearModel:
        with np.load(path) as z:
            weights = z["weights"].astype(np.float32)
            if weights.size == _TABLE:  # a model from before the second table: none of its weights
                weights = np.concatenate([weights, np.zeros(_TABLE, np.float32)])
            return cls(
                weights,
                z["signal_weights"].astype(np.float32),
                float(z["bias"]),
                float(z["threshold"]),
                float(z["other_threshold"]) if "other_threshold" in z else None,
                z["other_signal_weights"].astype(np.float32) if "other_signal_weights" in z else None,
            )

    def save(self, path: str | Path) -> None:
        arrays: dict[str, Any] = {
            "weights": self.weights.astype(np.float16),
            "signal_weights": self.signal_weights.astype(np.float32),
            "bias": np.float32(self.bias),
            "threshold": np.float32(self.threshold),
        }
        if self.other_threshold is not None:
            arrays["other_threshold"] = np.float32(self.other_threshold)
        if self.other_signal_weights is not None:
            arrays["other_signal_weights"] = self.other_signal_weights.astype(np.float32)
        np.savez_compressed(path, **arrays)

    def _logits(
        self, text: str, rule_spans: Sequence[tuple[int, int, str]], breaks: Sequence[int] = ()
    ) -> tuple[
        npt.NDArray[np.int64],
        npt.NDArray[np.float64],
        npt.NDArray[np.float64],
        npt.NDArray[np.float32],
        npt.NDArray[np.float32],
        npt.NDArray[np.bool_],
    ]:
        """``(starts, single, pair, words, rules, other)``: where each sentence starts, the
        logit of each sentence alone and of each sentence with the next (``-inf`` across a
        text break: ``breaks`` are the offsets where the texts of a batch start), its words,
        whether a rule flagged it and whether it reads as another language (only with an
        ``other_threshold`` or ``other_signal_weights``; else False)."""
        raw = _raw(text)
        starts = _starts(raw)
        if len(breaks):
            starts[np.asarray(breaks)] = True  # each text of a batch starts a sentence
        first = np.flatnonzero(starts)
        if first.size == 0:
            return first, np.zeros(0), np.zeros(0), np.zeros(0, np.float32), np.zeros(0, np.float32), np.zeros(0, bool)
        total = np.zeros(raw.size, dtype=np.float32)
        count = np.zeros(raw.size, dtype=np.float32)
        codes = _codes(raw)
        for _, keep, ids in _grams(codes):
            m = ids.size
            total[:m] += self.weights[ids] * keep
            count[:m] += keep
        hashes = _word_hashes(codes)
        for pos, ids in _word_grams(hashes):  # one word (or pair) a position: no index repeats
            total[pos] += self.weights[ids]
            count[pos] += 1
        t, n = np.add.reduceat(total, first), np.add.reduceat(count, first)
        words = _sentence_words(raw, codes, first)
        rules = _rule_rows(first, np.cumsum(starts) - 1, rule_spans)
        held = _concepts(codes, first, hashes)
        other = (
            _other_language(codes, first, hashes, words)
            if self.other_threshold is not None or self.other_signal_weights is not None
            else np.zeros(first.size, dtype=bool)
        )
        single = self.bias + t / np.sqrt(np.maximum(n, 1)) + self._signals(_signal_rows(rules, held), other)
        single[words < MIN_WORDS] = -np.inf
        pair = np.full(first.size, -np.inf)
        if first.size > 1:
            pair[:-1] = self.bias + (t[:-1] + t[1:]) / np.sqrt(np.maximum(n[:-1] + n[1:], 1))
            both = _signal_rows(np.maximum(rules[:-1], rules[1:]), held[:-1] | held[1:])
            pair[:-1] += self._signals(both, other[:-1] & other[1:])
            pair[:-1][(words[:-1] + words[1:]) < MIN_WORDS] = -np.inf
            if len(breaks):
                owner = np.searchsorted(np.asarray(breaks), first, side="right")
                pair[:-1][owner[:-1] != owner[1:]] = -np.inf
        return first, single, pair, words, rules, other

    def _signals(self, rows: npt.NDArray[np.float32], other: npt.NDArray[np.bool_]) -> npt.NDArray[np.float32]:
        """The signals' share of each logit: a row in another language (``other``) reads
        :attr:`other_signal_weights` when the model has them, every other row
        :attr:`signal_weights`."""
        own = self.other_signal_weights
        if own is None or not other.any():
            return rows @ self.signal_weights
        return np.where(other, rows @ own, rows @ self.signal_weights)

    def probabilities(self, texts: Sequence[str], batch: int = 256) -> npt.NDArray[np.float64]:
        """The highest probability of any sentence or pair of sentences, per text (0 for a
        text of no sentence the model scores), ``batch`` texts scored in one pass."""
        out = np.zeros(len(texts))
        for b in range(0, len(texts), batch):
            part = texts[b : b + batch]
            offsets = np.cumsum([len(_SEP), *(len(t) + len(_SEP) for t in part[:-1])])
            first, single, pair, _, _, _ = self._logits(_SEP + _SEP.join(part) + _SEP, (), offsets.tolist())
            owner = np.maximum(np.searchsorted(offsets, first, side="right") - 1, 0)
            best = np.full(len(part), -np.inf)
            np.maximum.at(best, owner, np.maximum(single, pair))
            with np.errstate(over="ignore"):
                out[b : b + len(part)] = 1.0 / (1.0 + np.exp(-best))
        return out

    def spans(self, text: str, rule_spans: Sequence[tuple[int, int, str]] = ()) -> tuple[tuple[int, int, str], ...]:
        """Spans ``(start, end, "learned")`` of the sentences the model flags."""
        return self.spans_many([text], [rule_spans])[0]

    def spans_many(
        self, texts: Sequence[str], rule_spans: Sequence[Sequence[tuple[int, int, str]]] | None = None
    ) -> list[tuple[tuple[int, int, str], ...]]:
        """:meth:`spans` for each of ``texts``, scored in one pass (a few numpy operations
        for the whole batch instead of a few per text). A sentence is flagged when its own
        probability reaches the threshold; two neighbours are flagged together when their
        pair reaches it and neither does alone (an instruction split over two sentences)."""
        if not texts:
            return []
        given = [tuple(r) for r in rule_spans] if rule_spans is not None else [() for _ in texts]
        keys = list(zip(texts, given, strict=True))
        cache = self._cache
        missing = [i for i, k in enumerate(keys) if k not in cache]
        if not missing:
            return [cache[k] for k in keys]
        scored = self._spans_many([texts[i] for i in missing], [given[i] for i in missing])
        fresh = dict(zip([keys[i] for i in missing], scored, strict=True))
        out = [fresh[k] if k in fresh else cache[k] for k in keys]  # read before a full cache is emptied
        if len(cache) > _CACHE_SIZE:
            cache.clear()
        cache.update(fresh)
        return out

    def _spans_many(
        self, texts: Sequence[str], rule_spans: Sequence[Sequence[tuple[int, int, str]]]
    ) -> list[tuple[tuple[int, int, str], ...]]:
        """The spans of each text, and of its decoded views (:func:`with_views`)."""
        return with_views(texts, lambda batch: self._score(batch, [() for _ in batch]), self._score(texts, rule_spans))

    def _score(
        self, texts: Sequence[str], rule_spans: Sequence[Sequence[tuple[int, int, str]]]
    ) -> list[tuple[tuple[int, int, str], ...]]:
        offsets, at = [], len(_SEP)
        for text in texts:
            offsets.append(at)
            at += len(text) + len(_SEP)
        big = _SEP + _SEP.join(texts) + _SEP
        shifted = [(offsets[t] + s, offsets[t] + e, c) for t, spans in enumerate(rule_spans or ()) for s, e, c in spans]
        first, single, pair, words, rules, other = self._logits(big, shifted, offsets)
        # the logit each sentence is flagged from: the threshold's, or in another language the other's
        english = float(np.log(self.threshold / (1.0 - self.threshold)))
        cut = np.full(first.size, english)
        if self.other_threshold is not None:
            cut[other] = float(np.log(self.other_threshold / (1.0 - self.other_threshold)))
        hit = single >= cut
        if FOREIGN_P is not None:
            low = float(np.log(FOREIGN_P / (1.0 - FOREIGN_P)))
            for r in np.flatnonzero((single >= low) & ~hit & ~other).tolist():
                if _foreign(big, first, r, offsets, texts):
                    hit[r] = True
        rows = set(np.flatnonzero(hit).tolist())
        pair_cut = np.maximum(cut, np.roll(cut, -1))  # a pair: the stricter of its two sentences'
        for r in np.flatnonzero((pair >= pair_cut) & ~hit & ~np.roll(hit, -1)).tolist():
            rows.update((r, r + 1))
        if LEAD_WORDS:
            rows.update(_leads(big, first=first, pair=pair, flagged=hit | (rules > 0), words=words, cut=pair_cut))
        if self.other_threshold is not None and (hit & other).any():
            rows.update(_neighbours(big, first=first, reach=other & (single >= english), flagged=hit & other))
        seeds = hit | (rules > 0)
        if NEIGHBOUR_P and seeds.any():
            near = float(np.log(NEIGHBOUR_P / (1.0 - NEIGHBOUR_P)))
            rows.update(_neighbours(big, first=first, reach=single >= near, flagged=seeds))
        if ONE_LINE_WHOLE and rows:  # the model's findings: a rule's stays the span it found
            # only in a text of more than one line: a label ("Caching. <an order>") keeps its clean part
            lines = np.array(["\n" in t.strip() for t in texts])
            owner = np.searchsorted(np.array(offsets), first, side="right") - 1
            flagged = np.zeros(first.size, dtype=bool)
            flagged[list(rows)] = True
            flagged &= lines[np.clip(owner, 0, len(texts) - 1)]
            rows.update(_one_line_paragraphs(big, first=first, flagged=flagged))
        out: list[list[tuple[int, int, str]]] = [[] for _ in texts]
        ends = [*first[1:].tolist(), len(big)]
        for row in sorted(rows):
            s = int(first[row])
            t = bisect_right(offsets, s) - 1
            lo, hi = s - offsets[t], min(ends[row] - offsets[t], len(texts[t]))
            if texts[t][lo:hi].strip():
                out[t].append((lo, hi, "learned"))
        return [tuple(x) for x in out]


# scripts written without spaces between words: each of their characters counts as part
# of a word (Han and kana: half of one, about a two-character word; Thai, Lao, Myanmar and
# Khmer: a third, about a three-letter syllable a word), so that a sentence of theirs
# reaches MIN_WORDS where an English sentence of the same content does
_UNSPACED = (
    (0x0E00, 0x0F00, 1 / 3),  # Thai, Lao
    (0x1000, 0x10A0, 1 / 3),  # Myanmar
    (0x1780, 0x1800, 1 / 3),  # Khmer
    (0x3040, 0x3100, 0.5),  # Hiragana, Katakana
    (0x31F0, 0x3200, 0.5),  # Katakana phonetic extensions
    (0x3400, 0x4DC0, 0.5),  # CJK extension A
    (0x4E00, 0xA000, 0.5),  # CJK unified ideographs
    (0xF900, 0xFB00, 0.5),  # CJK compatibility ideographs
    (0xFF66, 0xFFA0, 0.5),  # half-width Katakana
    (0x20000, 0x30000, 0.5),  # CJK extensions B and on
)
# each range's first code point and the first past it, and the share of a word of the
# characters from one edge to the next
_RUN_EDGES = np.array([edge for lo, hi, _ in _UNSPACED for edge in (lo, hi)], dtype=np.uint32)
_RUN_SHARE = np.array([x for _, _, share in _UNSPACED for x in (share, 0.0)], dtype=np.float32)


def _sentence_words(
    raw: npt.NDArray[np.uint32], codes: npt.NDArray[np.uint64], first: npt.NDArray[np.int64]
) -> npt.NDArray[np.float32]:
    """Per sentence, its words that start with a letter (a run of version numbers or a
    table of figures is no sentence, however many "words" it has), and its characters'
    shares of a word in a script without spaces."""
    letter = (codes != _SPACE) & ((codes < 48) | (codes > 57))
    word_start = np.zeros(raw.size, dtype=np.float32)
    word_start[0] = letter[0]
    word_start[1:] = letter[1:] & (codes[:-1] == _SPACE)
    _add_unspaced(raw, word_start)
    return np.add.reduceat(word_start, first)


@lru_cache(maxsize=1)
def _english_keys() -> npt.NDArray[np.uint64]:
    """The function words of :data:`_ENGLISH` hashed as :func:`_word_hashes` hashes words."""
    return np.array(sorted(_word_key(w) for w in _ENGLISH.split()), dtype=np.uint64)


def other_rows(text: str, *, whole: bool = False) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """``(starts, other)``: where each sentence of ``text`` starts, and whether it reads as
    another language than English (:data:`OTHER_SHARE`), as a model with an
    ``other_threshold`` reads it. ``whole``: ``text`` read as one sentence (a training row)."""
    raw = _raw(text)
    first = np.zeros(min(raw.size, 1), dtype=np.int64) if whole else np.flatnonzero(_starts(raw))
    codes = _codes(raw)
    return first, _other_language(codes, first, _word_hashes(codes), _sentence_words(raw, codes, first))


def _other_language(
    codes: npt.NDArray[np.uint64], first: npt.NDArray[np.int64], words: _Words, counted: npt.NDArray[np.float32]
) -> npt.NDArray[np.bool_]:
    """Per sentence: it holds a letter past Latin-1 (its n-grams read the second table) and
    fewer than :data:`OTHER_SHARE` of its words (``counted``) are English function words.
    A sentence of Latin-1 letters keeps the English threshold whatever its language: the
    first stage was trained on German, French, Spanish, Italian, Portuguese and Dutch, and
    read with the other threshold their payloads passed (blind3's authority 50.0 -> 35.4%,
    blind2's answer forcing 79.7 -> 70.6%; benchmarks/README.md)."""
    wide = codes >= _WIDE
    if not wide.any():
        return np.zeros(first.size, dtype=bool)
    wstart, full = words[0], words[1]
    english = np.zeros(codes.size, dtype=np.float32)
    if wstart.size:
        keys = _english_keys()
        i = np.minimum(np.searchsorted(keys, full), keys.size - 1)
        english[wstart[keys[i] == full]] = 1.0
    held = np.logical_or.reduceat(wide, first)
    return held & (np.add.reduceat(english, first) < OTHER_SHARE * np.maximum(counted, 1.0))


def _add_unspaced(raw: npt.NDArray[np.uint32], word_start: npt.NDArray[np.float32]) -> None:
    """``word_start`` (a word's first letter 1, else 0) plus each character's share of a
    word in a script written without spaces."""
    wide = np.flatnonzero(raw >= _RUN_EDGES[0])
    if wide.size:
        word_start[wide] += _RUN_SHARE[np.searchsorted(_RUN_EDGES, raw[wide], side="right") - 1]


_CONTENT = re.compile(r"[^\W\d_]{4,}")
#: English words of four letters or more that say nothing of what a text is about
_FUNCTION_TEXT = (
    "this that with from have will your they their there which when what into about would could should "
    "been were also only more than then them these those each other such some just like make made very "
    "over most much must here upon does done being"
)
_FUNCTION_WORDS = frozenset(_FUNCTION_TEXT.split())


def _content(text: str) -> set[str]:
    return {w.lower() for w in _CONTENT.findall(text)} - _FUNCTION_WORDS


def _foreign(big: str, first: npt.NDArray[np.int64], r: int, offsets: Sequence[int], texts: Sequence[str]) -> bool:
    """Sentence row ``r`` shares at most :data:`FOREIGN_SHARED` of its words (four letters
    or more, not a function word; :data:`FOREIGN_OWN` or more) with the rest of its text,
    which holds :data:`FOREIGN_REST` words or more."""
    s = int(first[r])
    t = bisect_right(offsets, s) - 1
    lo = s - offsets[t]
    hi = min((int(first[r + 1]) if r + 1 < first.size else len(big)) - offsets[t], len(texts[t]))
    own = _content(texts[t][lo:hi])
    if len(own) < FOREIGN_OWN:
        return False
    rest = _content(texts[t][:lo]) | _content(texts[t][hi:])
    return len(rest) >= FOREIGN_REST and len(own & rest) <= FOREIGN_SHARED * len(own)


def _parted(big: str, first: npt.NDArray[np.int64], r: int) -> bool:
    """A blank line (or a text's end: the batch's separator) lies between sentence row
    ``r - 1`` and row ``r``. The slice runs one past row ``r``'s start: a sentence after a
    blank line starts at its second "\n", so the slice up to it alone misses the blank line."""
    return "\n\n" in big[int(first[r - 1]) : int(first[r]) + 1]


def _leads(
    big: str,
    *,
    first: npt.NDArray[np.int64],
    pair: npt.NDArray[np.float64],
    flagged: npt.NDArray[np.bool_],
    words: npt.NDArray[np.float32],
    cut: npt.NDArray[np.float64],
) -> list[int]:
    """The short sentences that introduce a flagged one ("There is one more thing.",
    "New task."): two words to :data:`LEAD_WORDS`, right before a sentence the model or
    the rules flagged, in the same paragraph of the same text (a pair across texts is
    ``-inf``), the two together reaching the threshold."""
    out = []
    for r in np.flatnonzero(flagged[1:]).tolist():  # r: the row before a flagged one
        if flagged[r] or not (1 < words[r] <= LEAD_WORDS) or pair[r] < cut[r]:
            continue
        if not _parted(big, first, r + 1) and big[int(first[r]) : int(first[r + 1])].rstrip()[-1:] in ".!?:":
            out.append(r)
    return out


def _one_line_paragraphs(big: str, *, first: npt.NDArray[np.int64], flagged: npt.NDArray[np.bool_]) -> list[int]:
    """In a paragraph written on one line (no line break inside, a blank line or a text's
    end around it) of two sentences or more, the sentences from the first one the model
    flagged (``flagged``, only in texts of more than one line) to the paragraph's end: what
    follows an instruction in one utterance (a comment, a message, an unwrapped paragraph)
    is the rest of it; what precedes it is the host's (see :data:`ONE_LINE_WHOLE`)."""
    n = first.size
    out: set[int] = set()
    seen: set[int] = set()
    for f in np.flatnonzero(flagged).tolist():  # only the paragraphs that hold a flagged row
        if f in seen:
            continue
        lo, hi = f, f + 1
        while lo > 0 and not _parted(big, first, lo):
            lo -= 1
        while hi < n and not _parted(big, first, hi):
            hi += 1
        seen.update(range(lo, hi))
        end = int(first[hi]) if hi < n else len(big)
        if hi - lo > 1 and _one_line(big[int(first[lo]) : end]):
            out.update(range(lo + int(np.argmax(flagged[lo:hi])), hi))
    return sorted(out)


def _one_line(paragraph: str) -> bool:
    """``paragraph`` is written on one line, after any label lines: a Markdown heading, a
    title over its underline (and the underline), a line in bold alone; hard-wrapped, it
    is one line too (:data:`WRAPPED_ONE_LINE`). A heading written in the block it heads is
    no reason to read its paragraph sentence by sentence."""
    text = unwrapped(paragraph.strip("\n"), sentences=False) if WRAPPED_ONE_LINE else paragraph.strip()
    lines = text.split("\n")
    return all(_is_label(ln, lines[k + 1]) for k, ln in enumerate(lines[:-1]))


_LABEL_LINE = re.compile(r"^\s{0,3}(?:#{1,6}\s+\S.*|(\*\*|__)[^*_\n]+\1:?)\s*$")


def _is_label(line: str, below: str) -> bool:
    s = line.strip()
    if len(s) > HEADER_CHARS:
        return False
    return bool(_LABEL_LINE.match(line) or UNDERLINE.match(s) or (UNDERLINE.match(below.strip()) and s))


def _neighbours(
    big: str, *, first: npt.NDArray[np.int64], reach: npt.NDArray[np.bool_], flagged: npt.NDArray[np.bool_]
) -> list[int]:
    """The sentences next to a flagged one in the same paragraph, one after another, that
    are in ``reach``: the rest of an instruction whose clearest sentence was flagged (a
    payload of two or three sentences). In another language, those that reach the English
    threshold (the other threshold keeps a lone sentence of a language the model knows
    less from being flagged on little evidence, not the rest of an instruction that has
    been); in any language, those whose probability reaches :data:`NEIGHBOUR_P`."""
    out: set[int] = set()
    for start in np.flatnonzero(flagged).tolist():
        for step in (-1, 1):
            r = start
            while 0 <= r + step < first.size and reach[r + step] and r + step not in out and not flagged[r + step]:
                if _parted(big, first, max(r, r + step)):
                    break  # a blank line (or a text's end) between the two
                r += step
                out.add(r)
    return sorted(out)


@lru_cache(maxsize=1)
def builtin() -> LinearModel:
    """The model shipped with the package (loaded once)."""
    with resources.as_file(resources.files("ctxassembly.data") / "injection_model.npz") as path:
        return LinearModel.load(path)


class Detector(Protocol):
    """What the safety stage asks a learned detector: flagged sentence spans per text."""

    def spans_many(
        self, texts: Sequence[str], rule_spans: Sequence[Sequence[tuple[int, int, str]]] | None = None
    ) -> list[tuple[tuple[int, int, str], ...]]: ...


@dataclass(frozen=True)
class SentenceClassifier:
    """A detector from any sentence classifier: ``score(sentences) -> probabilities`` (one
    per sentence, in [0, 1]); a sentence is flagged from ``threshold`` on. The sentences
    are cut as the shipped model cuts them (:func:`sentence_bounds`)."""

    score: Callable[[list[str]], Sequence[float]]
    threshold: float = 0.5

    def spans_many(
        self, texts: Sequence[str], rule_spans: Sequence[Sequence[tuple[int, int, str]]] | None = None
    ) -> list[tuple[tuple[int, int, str], ...]]:
        """The flagged sentences of each text and of its decoded views (:func:`with_views`)."""
        return with_views(texts, self._spans, self._spans(texts))

    def _spans(self, texts: Sequence[str]) -> list[tuple[tuple[int, int, str], ...]]:
        bounds = [sentence_bounds(t) for t in texts]
        flat = [t[s:e].strip() for t, b in zip(texts, bounds, strict=True) for s, e in b]
        if not flat:
            return [() for _ in texts]
        probs = [float(p) for p in self.score(flat)]
        if len(probs) != len(flat):
            raise ValueError(f"injection_model: expected {len(flat)} scores, one per sentence, got {len(probs)}")
        out, i = [], 0
        for b in bounds:
            out.append(
                tuple(
                    (s, e, "learned") for (s, e), p in zip(b, probs[i : i + len(b)], strict=True) if p >= self.threshold
                )
            )
            i += len(b)
        return out


def with_views(
    texts: Sequence[str],
    scan: Callable[[list[str]], list[tuple[tuple[int, int, str], ...]]],
    found: list[tuple[tuple[int, int, str], ...]],
) -> list[tuple[tuple[int, int, str], ...]]:
    """``found`` (the spans of each text) with what ``scan`` finds in the decoded views of
    the texts (:mod:`ctxassembly.text.decode`, all views of the batch in one call),
    mapped back to the sentences of each text that carry them."""
    known = lexicon_stems()
    decoded = sorted({v.text for t in texts for v in views(t, known)})
    if not decoded:
        return found
    spans = dict(zip(decoded, scan(decoded), strict=True))
    out = list(found)
    for i, t in enumerate(texts):
        extra = decoded_spans(t, lambda v: spans[v.text], known, _sentence_starts, "learned")
        if extra:
            out[i] = union_spans([*out[i], *extra])
    return out


def union_spans(
    spans: Iterable[tuple[int, int, str]], *, key: Callable[[tuple[int, int, str]], Any] | None = None
) -> tuple[tuple[int, int, str], ...]:
    """Overlapping spans merged into one, in order: sorted by ``key`` (default: start, end,
    class), each merged span takes the class of the first one in that order."""
    merged: list[tuple[int, int, str]] = []
    for s, e, c in sorted(spans, key=key):
        if merged and s < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], e), merged[-1][2])
        else:
            merged.append((s, e, c))
    return tuple(merged)


def combine(
    text: str, rules: Sequence[tuple[int, int, str]], learned: Sequence[tuple[int, int, str]]
) -> tuple[tuple[int, int, str], ...]:
    """The rules' spans of ``text`` and the learned ones, in order. A learned span that
    overlaps a rule's joins it (one span over both, named by the first rule's class inside
    it): a rule that found a clause of a sentence the model flagged does not leave the rest
    of the sentence. Joined, the learned span counts from its first to its last visible
    character (the space a sentence starts with is not the model's finding)."""
    if not learned:
        return tuple(rules)
    spans = list(rules)
    for s, e, c in learned:
        if any(s < re_ and rs < e for rs, re_, _ in rules):
            piece = text[s:e]
            spans.append((s + len(piece) - len(piece.lstrip()), s + len(piece.rstrip()), c))
        else:
            spans.append((s, e, c))
    return tuple((s, e, next((rc for rs, re_, rc in rules if rs < e and s < re_), c)) for s, e, c in union_spans(spans))
