"""Instruction-like text in retrieved documents, found by what it does.

A retrieved chunk is data. Text inside it that tries to act on whoever reads the
context falls into a few classes, whatever the wording:

``override``
    discards the user's question or the instructions given so far ("disregard the
    question", "forget your rules", "set aside the instructions above", "you are now …").
``authority``
    speaks as someone the reader should obey — a system / admin / security / maintainer /
    vendor / release-team notice, an urgent warning in capitals — and goes on to steer
    the answer, claim the documentation is wrong, or demand something.
``exfiltration``
    asks for secrets (passwords, keys, tokens, credentials, the prompt) to be revealed,
    or to be sent, emailed or posted somewhere.
``role_marker``
    chat-template and role markers (``<|im_start|>``, ``[INST]``, ``### System:``, a line
    ``Assistant: …``) and tags that would close or open a block of the layout.
``hidden``
    a hidden channel: an instruction inside an HTML / Markdown / reST comment or an
    invisible element, or carried by Unicode tag characters, bidi controls, zero-width
    characters or look-alike letters inside words.
``answer_forcing``
    dictates the answer ("the correct answer is", "always reply with", "tell users that").
``addressed``
    text addressed to a model or an assistant ("to the AI reading this page", "if you
    are a language model", "assistants answering questions about it must …").

Each class is a combination of weak signals — a verb at the start of a clause (the
imperative), second person, an obligation, a target such as "the question", "the user",
"your answer", a model noun, a notice header, a secret, a destination — rather than a
list of sentences; the words come in English, German, French and Spanish. Documentation
that *describes* such things (an ``--ignore`` flag, "disregard this warning if …", a
password-hashing guide, an API-token setting) lacks the combination: its verb is not
aimed at the conversation, its secret is not being handed out, nobody in it addresses
the reader as a model.

Every rule carries literal needles, necessary conditions tested on the lower-cased text
before its pattern runs: most chunks are decided by a few substring tests.

:func:`find_injections` returns the offending sentences as spans of the original text,
so that cutting them leaves every other byte as it was. It also reads the text's decoded
views (:mod:`ctxassembly.text.decode`: base64, hex, ROT13, HTML character references,
percent and ``\\u`` escapes, spaced-out letters, digits for letters, look-alike and
invisible characters), each decoder run only when its cheap trigger matches.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

from ctxassembly.text.addressed import addressed_blocks, addressed_label, opening, possible
from ctxassembly.text.decode import CONCEALING, View, decoded_spans, says_something
from ctxassembly.text.injection_model import lexicon_stems
from ctxassembly.text.structure import unwrapped

__all__ = ["CLASSES", "classes_of", "find_injections", "stems", "titled_by_label"]

CLASSES = ("override", "authority", "exfiltration", "role_marker", "hidden", "answer_forcing", "addressed")

# --- undoing obfuscation ---------------------------------------------------------------

_ZERO_WIDTH_CHARS = "\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e\u2061\u2062\u2063\u2064"
_BIDI_CHARS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f"
_INVISIBLE = dict.fromkeys(map(ord, _ZERO_WIDTH_CHARS + _BIDI_CHARS))
# Unicode tag characters (U+E0020-E007E) mirror ASCII and render as nothing: decode them
_TAGS: dict[int, int | None] = {cp: cp - 0xE0000 for cp in range(0xE0020, 0xE007F)}
_TAGS.update({0xE0001: None, 0xE007F: None})
# Cyrillic and Greek letters that look like Latin ones; NFKC leaves them alone.
_LOOKALIKE = "аеорсухіјѕԁɡАВЕКМНОРСТХІЈЅαβεικνορτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ"
_HOMOGLYPHS = str.maketrans(_LOOKALIKE, "aeopcyxijsdgABEKMHOPCTXIJSabeiknoptuxABEZHIKMNOPTYX")
_INSIDE_WORD = re.compile(rf"\w[{_ZERO_WIDTH_CHARS}]+\w")
_WORD = re.compile(r"\w+")


def _unmask(text: str) -> str:
    if text.isascii():
        return text  # no compatibility forms, invisible characters or homoglyphs to undo
    text = unicodedata.normalize("NFKC", text.translate(_TAGS)).translate(_INVISIBLE)
    return text.translate(_HOMOGLYPHS)


_FLAG_EMOJI = re.compile("\U0001f3f4[\U000e0020-\U000e007f]+")


def _tagged(raw: str) -> bool:
    """Unicode tag characters outside an emoji flag sequence (U+1F3F4 followed by tags)."""
    return any(0xE0000 <= ord(ch) <= 0xE007F for ch in _FLAG_EMOJI.sub("", raw))


def _obfuscated(raw: str) -> bool:
    """Characters with no business in prose: tag characters, bidi controls, an invisible
    character between two letters, or a word that mixes Latin letters with look-alikes."""
    if raw.isascii():
        return False
    if _tagged(raw) or any(ch in _BIDI_CHARS for ch in raw):
        return True
    if _INSIDE_WORD.search(raw):
        return True
    return any(
        not w.isascii() and any(ch in _LOOKALIKE for ch in w) and any("a" <= ch <= "z" for ch in w.lower())
        for w in _WORD.findall(raw)
    )


# --- gates: cheap necessary conditions ------------------------------------------------

_LETTERS = re.compile(r"[a-zß-öø-ÿœ]+")
_FIVE = re.compile(r"([a-zß-öø-ÿœ]{1,5})[a-zß-öø-ÿœ]*")


@dataclass(frozen=True)
class _Gate:
    """Needles of which one must occur: words of fewer than five letters exactly, longer
    ones by their first five letters (so ``instr`` stands for "instruction", "instructions",
    "instrucciones"), and phrases with other characters as substrings."""

    words: frozenset[str]
    phrases: tuple[str, ...]
    pairs: tuple[tuple[str, str], ...] = ()  # both words of a pair (first five letters), e.g. "language model"

    @classmethod
    def of(cls, needles: tuple[str, ...]) -> _Gate:
        gate = _GATES.get(needles)
        if gate is None:
            words = frozenset(n[:5] for n in needles if _LETTERS.fullmatch(n))
            gate = _GATES[needles] = cls(words, tuple(n for n in needles if not _LETTERS.fullmatch(n)))
        return gate

    def open(self, tokens: set[str], low: str) -> bool:
        return (
            not self.words.isdisjoint(tokens)
            or any(p in low for p in self.phrases)
            or any(a in tokens and b in tokens for a, b in self.pairs)
        )


_GATES: dict[tuple[str, ...], _Gate] = {}


def _w(words: str, *phrases: str) -> tuple[str, ...]:
    return (*words.split(), *phrases)


def _tokens(low: str) -> set[str]:
    """The words of a lower-cased text, those of five letters or more cut to five."""
    return set(_FIVE.findall(low))


# --- vocabulary (English, German, French, Spanish) --------------------------------------

_MODEL = (
    r"(?:ai|a\.i\.|artificial\s+intelligence|llms?|(?:large\s+)?language\s+models?|ai\s+(?:models?|tools?|systems?)|"
    r"chat\s*bots?|(?:ai\s+|virtual\s+|digital\s+|automated\s+)?(?:(?:code|coding)\s+)?assistants?|"
    r"chatgpt|gpt(?:-\d)?|claude|copilot|"
    r"ki|ki-(?:assistent(?:en)?|modell|systeme?)|sprachmodell(?:e)?|assistent(?:en)?|"
    r"ia|mod[eè]les?\s+de\s+langage|modelos?\s+de\s+lenguaje|asistentes?(?:\s+de\s+ia)?|assistante?s?(?:\s+ia)?|"
    r"(?:ai|llm|autonomous|coding|automated)\s+agents?|modell[oi]\s+linguistic[oi]|assistente(?:\s+ia)?|un'ia|l'ia)"
)
_MODEL_NEEDLES = _w(
    "ai llm llms chatbot chatbots assistant assistants gpt chatgpt claude copilot ki sprachmodell assistent "
    "assistenten ia langage lenguaje asistente asistentes assistante",
    "a.i.",
    "ki-",
)
# model nouns of two words, each of them common alone: both must occur
_MODEL_PAIRS = (
    ("langu", "model"),
    ("chat", "bot"),
    ("chat", "bots"),
    ("artif", "intel"),
    ("agent", "ai"),
    ("agent", "llm"),
    ("agent", "auton"),
    ("agent", "codin"),
    ("model", "lingu"),
)
_MODEL_GATE = _Gate(_Gate.of(_MODEL_NEEDLES).words, _Gate.of(_MODEL_NEEDLES).phrases, _MODEL_PAIRS)
# the model nouns as words: the precise (and dearer) second gate of the addressed rules
_COMM = r"(?:answer|reply|respond|say|state|tell|claim|assert|recommend|insist|mention|output)"
_COMM_NEEDLES = _w("answer reply respond say tell state claim assert recommend insist mention output")
_SPEAK = r"(?:answer|reply|respond|say|state|tell|claim|assert|recommend|insist|mention)"
_SPEAK_NEEDLES = _w("answer reply respond say tell state claim assert recommend insist mention")
#: not an HTTP status code: "respond with 204", "always answer 200 to health checks" is
#: what a server does
_NO_STATUS = (
    r"(?!\s+(?:with\s+)?(?:an?\s+|the\s+)?(?:http\s+)?(?:status\s+)?(?:code\s+)?[1-5]\d\d\b"
    r"(?!\s+(?:is|are|was|means)\b))"
)
#: "that" the pronoun, not the start of a claim: "state that and a maintainer can add the
#: label", "state that in a comment" (where the reader writes it: a contributor's medium)
_THAT_THING = (
    r"(?:(?<!that)|(?!\s*(?:[,;]|and\b|or\b|in\s+(?:a|an|the|your)\s+(?:comment|description|commit|changelog|pr|"
    r"pull\s+request|issue|ticket|thread)s?\b)))"
)

# words after which a verb starts a clause (an imperative), besides punctuation
_LEAD_WORDS = frozenset(
    _w(
        "and then so please kindly now just simply instead rather also therefore und dann bitte et puis alors donc "
        "y luego entonces favor plaît immediately always"
    )
)
_AUXILIARIES = frozenset(
    "will would can could may might is are was were has have had does did wird werden kann peut va".split()  # noqa: SIM905
)
# a model named with others before the modal: "Language models and documentation bots must"
_AND_OTHERS = r"(?:\s*(?:,|and|or|&|/)\s*(?:other\s+)?[\w-]+(?:\s+[\w-]+)?){0,2}"
_OBLIGED = re.compile(
    rf"(?:\byou\s+(?:must|should|shall|need\s+to|have\s+to|are\s+(?:required|instructed|expected)\s+to|will)|"
    rf"\b{_MODEL}{_AND_OTHERS}\s+(?:must|should|shall|needs?\s+to|ha(?:s|ve)\s+to|are\s+to|is\s+to))"
    rf"\s+(?:now\s+|always\s+|also\s+)?$"
)


# where a block starts: after a blank line, or on the line after a Markdown heading or a
# reST under/overline (the line before needs no final punctuation to end a clause)
_NEW_BLOCK = re.compile(
    r"(?:\n[ \t]*\n|(?:^|\n)[ \t]*(?:#{1,6}[ \t][^\n]*|([=\-~^\"'`*+#:.])\1{2,})[ \t]*\n)[ \t>*_\"'`»«“”(]*\Z"
)
# ... or at a comment mark on the first line of a fenced block (``>>> # …`` under
# ```` ```{doctest} ````; past the mark, :func:`_at_lead` already reads a comment mark as a
# clause's start): the line that opens the fence, and the mark
_FENCE_LINE = re.compile(r"(?:^|\n)[ \t]*(?:```|~~~)[^\n`]*\n\Z")
_COMMENT_MARK = re.compile(r"[ \t>.]*(?:#|//)")
# ... or at the first column of the line after a list item or an indented (code) line: a
# wrapped line of an item or of code is indented, so an unindented one starts text of its
# own (a changelog bullet, then "Tell the user ..." on the next line)
_ITEM_OR_CODE_LINE = r"(?:[ \t]*(?:[*+•-]|\d{1,3}[.)])[ \t]+\S|(?: {4}|\t)[ \t]*\S)[^\n]*\n"
_AFTER_ITEM_LINE = re.compile(rf"\n{_ITEM_OR_CODE_LINE}[>*_\"'`»«“”(]*\Z")


def _new_block(low: str, pos: int) -> bool:
    """Whether ``pos`` of the lower-cased ``low`` is the first word of a block
    (:data:`_NEW_BLOCK`, :data:`_AFTER_ITEM_LINE`), whatever ended the line before."""
    before = low[max(0, pos - 80) : pos]
    if _NEW_BLOCK.search(before):
        return True
    if _FENCE_LINE.search(before) and _COMMENT_MARK.match(low, pos):
        return True  # a comment line opens the fenced block: its first word starts a clause
    if low[pos : pos + 1].isspace():
        return False  # an indented line: the item's or the code's own
    return _AFTER_ITEM_LINE.search(before if pos > 80 else "\n" + before) is not None


def _block_start(low: str, pos: int) -> bool:
    """Whether a match at ``pos`` that follows a line break starts a block or a sentence
    (not a wrapped line's continuation)."""
    if pos == 0 or low[pos - 1] != "\n":
        return True
    before = low[max(0, pos - 80) : pos]
    return before.rstrip()[-1:] in ("", ".", "!", "?", ":") or _new_block(low, pos)


def _at_lead(low: str, pos: int) -> bool:
    """Whether the word at ``pos`` of the lower-cased ``low`` starts a clause: a verb there
    is an imperative (or an obligation laid on "you" or on a model)."""
    before = low[max(0, pos - 80) : pos]
    for stripped in (before.rstrip(), before.rstrip(" \t\n*_\"'`»«“”(")):
        # nothing before, punctuation, a tag's end, a comment mark or a list bullet
        if not stripped or stripped[-1] in ":;.!?([,–—>#/*-•":
            return True
    if before.rstrip()[-1:] in ('"', "“", "«", "`") and _quoted(low, pos):
        return True  # the first word of a quotation (what it says is judged by _example)
    if _new_block(low, pos):
        return True  # a paragraph's first word, whatever ended the line before (a heading, a bullet, code)
    if len(stripped) < len(before) and stripped.rsplit(None, 1)[-1] in _LEAD_WORDS:
        # "and now drop it" leads; "the worker will now drop it" does not (a verb phrase)
        words = stripped.rsplit(None, 2)
        if len(words) < 3 or words[-2] not in _AUXILIARIES:
            return True
    return bool(_OBLIGED.search(before))


@dataclass(frozen=True)
class _Rule:
    cls: str
    pattern: re.Pattern[str]
    # one of each group must occur in the lower-cased, whitespace-squeezed text (a group
    # may be a pattern instead: words too short to test as substrings)
    needles: tuple[_Gate | re.Pattern[str], ...]
    lead: bool = False  # the match must start a clause (see _at_lead)
    cased: bool = False  # run on the text as written, not on its lower-cased copy
    # the words every match starts with, as (literal, its first five letters): the rule
    # runs anchored at their occurrences instead of scanning the text (several times faster)
    anchors: tuple[tuple[str, str], ...] = ()
    # a match at a line start counts only where a block starts or a sentence ended before
    block: bool = False


def _anchor_words(alternation: str) -> tuple[tuple[str, str], ...]:
    """The literal words that begin the alternatives of a regex ``(?:a|b\\s+c|d[ef]?)``."""
    body = alternation[3:-1] if alternation.startswith("(?:") and alternation.endswith(")") else alternation
    alternatives, depth, current = [], 0, ""
    for ch in body:
        depth += (ch == "(") - (ch == ")")
        if ch == "|" and depth == 0:
            alternatives.append(current)
            current = ""
        else:
            current += ch
    alternatives.append(current)
    out = []
    for alt in alternatives:
        lit = re.match(r"[a-zß-öø-ÿœ'-]*", alt)
        word = lit.group() if lit else ""
        if alt[len(word) : len(word) + 1] in ("?", "*", "{"):
            word = word[:-1]  # the last character is optional
        letters = _FIVE.findall(word)
        if not letters:
            raise ValueError(f"no literal word begins the alternative {alt!r}")
        out.append((word, letters[0]))
    return tuple(dict.fromkeys(out))


def _rule(
    cls: str,
    pattern: str,
    *needles: tuple[str, ...] | _Gate | re.Pattern[str],
    lead: bool = False,
    cased: bool = False,
    anchors: str = "",
    block: bool = False,
) -> _Rule:
    """Patterns are written in lower case and run on a lower-cased copy of the text
    (without ``re.I``: case-insensitive alternations are several times slower).
    ``anchors``: the alternation every match starts with (see :func:`_anchor_words`)."""
    gates = tuple(g if isinstance(g, (re.Pattern, _Gate)) else _Gate.of(g) for g in needles)
    return _Rule(cls, re.compile(pattern), gates, lead, cased, _anchor_words(anchors) if anchors else (), block)


# --- override -------------------------------------------------------------------------

_OVERRIDE_VERB = (
    r"(?:ignore|ignoring|disregard|forget|override|overrule|skip|bypass|discard|dismiss|abandon|neglect|drop|"
    r"set\s+aside|put\s+aside|leave\s+aside|throw\s+out|pay\s+no\s+(?:attention|heed)\s+to|"
    r"ignorier(?:e|en|t)?|vergiss|vergessen|missachte|missachten|verwirf|verwerfen|übergehe|übergehen|"
    r"ignore[zr]?|oublie[zr]?|ne\s+(?:tiens|tenez)\s+(?:plus\s+|pas\s+)compte\s+d[eu']|fais\s+abstraction\s+d[eu']|"
    r"laisse[zr]?\s+de\s+côté|mets\s+de\s+côté|ignora[rd]?|olvida[rd]?|olvide|descarta[rd]?|omite|"
    r"haz\s+caso\s+omiso\s+(?:a|de)|no\s+tengas\s+en\s+cuenta|deja\s+de\s+lado|dimentica|trascura)"
)
_SUPERSEDE = r"(?:supersedes?|replaces?|cancels?|invalidates?|voids?|overrides?|takes?\s+precedence\s+over)"
_INSTRUCTIONS_TARGET = (
    r"(?:all\s+|any\s+)?(?:the\s+|your\s+)?(?:previous\s+|prior\s+|earlier\s+|original\s+|system\s+)?"
    r"(?:instructions|prompt|guidelines|directions|directives)\b(?:\s+you\s+(?:were\s+given|received|have))?"
)
_REFUSE_VERB = (
    r"(?:(?:do\s+not|don'?t|never)\s+(?:follow|obey|answer|address|respond\s+to|consider)|stop\s+following|"
    r"no\s+longer\s+follow)"
)
_OVERRIDE_VERB_NEEDLES = _w(
    "ignore ignoring disregard forget forgo override overrule skip bypass discard dismiss abandon neglect drop aside "
    "throw heed attention vergiss vergessen missachte verwirf "
    "verwerfen übergehe oublie compte abstraction côté olvida olvide descarta omite omiso cuenta lado dimentica "
    "trascura supersede supersedes replace replaces cancel cancels invalidate invalidates void voids precedence"
)
_CONV = (
    r"(?:previous|prior|above|earlier|preceding|foregoing|original|initial|system|all|any|every|other|your|"
    r"existing|current|old|given|developer'?s?|operator'?s?)"
)
_RULES_NOUN = (
    r"(?:instructions?|prompts?|directions?|rules|guidelines|messages|commands|orders|directives?|constraints|"
    r"guardrails|polic(?:y|ies)|programming|context|conversation|task)"
)
_OVERRIDE_TARGET = (
    rf"(?:{_CONV}\s+(?:\w+\s+){{0,2}}?{_RULES_NOUN}\b|"
    r"(?:the|this|that|their|his|her)\s+(?:original\s+|actual\s+|real\s+|current\s+)?(?:question|prompt)\b|"
    r"(?:the\s+)?user'?s'?\s+(?:question|query|request|prompt|task|message)\b|"
    r"(?:what|whatever|anything)\s+(?:the\s+(?:user|person|human|customer|reader|requester)|you\s+were|they|he|she)\s+"
    r"(?:asked|asks|wants?|said|says|told|requested|typed|types|wrote|writes)|"
    rf"(?:the\s+)?{_RULES_NOUN}\s+(?:you\s+(?:were|have\s+been)\s+given|you\s+received|given\s+(?:to\s+you|above|"
    r"earlier|before)|above|so\s+far)|"
    r"(?:le\s+|tutte\s+le\s+)?istruzioni\s+(?:precedenti|originali|di\s+sistema|ricevute)|la\s+domanda|"
    r"everything\s+(?:above|before|else|you\s+were\s+told|you\s+have\s+been\s+told)|"
    r"(?:vorherigen|bisherigen|obigen|vorigen|alle[n]?|deine[n]?|ihre[n]?|ursprünglichen|früheren)\s+"
    r"(?:\w+\s+)?(?:anweisungen|instruktionen|regeln|vorgaben|befehle)|(?:die|der)\s+(?:frage|anfrage)|"
    r"(?:les\s+|tes\s+|vos\s+|toutes\s+les\s+)?(?:instructions|consignes|règles|directives)\s+"
    r"(?:précédentes|antérieures|ci-dessus|initiales|d'origine|données)|(?:la|sa)\s+question|"
    r"(?:las\s+|tus\s+|sus\s+|todas\s+las\s+)?(?:instrucciones|reglas|indicaciones)\s+(?:anteriores|previas|originales|"
    r"de\s+arriba)|la\s+pregunta)"
)
_OVERRIDE_TARGET_NEEDLES = _w(
    "typed types wrote writes whatever anything instructions prompt directions rules guidelines messages commands "
    "order orders constraints guardrails policy "
    "programming context conversation task question user asked want wants said told everything anweisungen regeln "
    "vorgaben befehle frage anfrage consignes règles instrucciones regla reglas indicaciones pregunta istruzioni "
    "domanda"
)

_ROLE_COLON = ("system:", "assistant:", "user:", "human:", "prompt:", "message:", "instruction:", "response:", "input:")
_RULES: list[_Rule] = [
    # -- override
    _rule(
        "override",
        rf"\b{_OVERRIDE_VERB}\b[^.!?\n]{{0,50}}?\b{_OVERRIDE_TARGET}",
        _OVERRIDE_VERB_NEEDLES,
        _OVERRIDE_TARGET_NEEDLES,
        lead=True,
        anchors=_OVERRIDE_VERB,
    ),
    _rule(
        "override",
        rf"\b{_REFUSE_VERB}\b[^.!?\n]{{0,50}}?\b{_OVERRIDE_TARGET}",
        _w("not never stop longer", "n't"),
        _w("follow following obey answer address respond consider"),
        _OVERRIDE_TARGET_NEEDLES,
        lead=True,
        anchors="(?:do|don|never|stop|no)",
    ),
    _rule(
        "override",
        rf"\b{_SUPERSEDE}\s+(?:(?:all|any|the|your)\s+)?(?:(?:previous|prior|earlier|original|system)\s+"
        r"(?:instructions|prompt|guidelines|directions|directives)|your\s+(?:instructions|prompt|guidelines)|"
        r"(?:the\s+)?(?:instructions|prompt|guidelines)\s+(?:you\s+(?:were\s+given|received|have)|above|given\s+\w+))",
        _w(
            "supersede supersedes replace replaces cancel cancels invalidate invalidates void voids override overrides "
            "precedence"
        ),
        _w("instructions prompt guidelines directions directives"),
    ),
    _rule(
        "override",
        r"\b(?:new|updated|real|actual|revised|true)\s+(?:instructions?|anweisungen|instrucciones)"
        r"(?:\s+for\s+[\w\s]{1,30}?)?\s*:"
        r"|\b(?:neue|nouvelles|nuevas)\s+(?:anweisungen|instructions|consignes|instrucciones)\s*:",
        _w("instructions instruction anweisungen instrucciones consignes"),
        _w("new updated real actual revised true neue nouvelles nuevas"),
        lead=True,
    ),
    _rule(
        "override",
        r"\b(?:previous|prior|above|earlier|original|system|old|the|all|any|those|these|your)\s+(?:\w+\s+)?"
        r"(?:instructions|rules|prompt|guidelines|directions)\s+(?:(?:above|before\s+this|so\s+far|given\s+\w+|"
        r"you\s+(?:were\s+given|received|have))\s+)?(?:no\s+longer\s+apply|(?:are|is)\s+(?:now\s+)?(?:void|obsolete|cancel+ed|revoked|superseded|invalid)|"
        r"(?:have\s+been|were|has\s+been|was)\s+(?:replaced|revoked|superseded|cancel+ed|withdrawn))",
        _w("longer void obsolete cancelled canceled revoked superseded invalid replaced withdrawn"),
        _w("instructions rules prompt guidelines"),
    ),
    _rule(
        "override",
        r"\byou\s+are\s+(?:now|no\s+longer)\s+(?:an?\s+(?:different|new|unrestricted|unfiltered|evil|rogue|free|"
        r"\w+\s+(?:assistant|ai|bot|model|persona|character|pirate|hacker))|in\s+\w+\s+mode|free\b|bound\b|"
        r"unrestricted|unfiltered|jailbroken|my\b|dan\b|called\b|named\b|known\s+as\b)",
        _w("you"),
        _w("now longer"),
    ),
    _rule(
        "override",
        r"\btreat\s+(?:all\s+|any\s+|the\s+|your\s+)?(?:earlier|previous|prior|above|original|system|other|your|"
        r"those)\s+(?:instructions|directions|rules|guidelines|prompts?)\s+as\s+(?:void|invalid|obsolete|cancel+ed|"
        r"irrelevant|optional|superseded|null|withdrawn|suggestions)\b",
        _w("treat"),
        _w("instructions directions rules guidelines prompt prompts"),
        lead=True,
    ),
    _rule(
        "override",
        r"\bact\s+as\s+(?:an?\s+)?(?:different|new|unrestricted|unfiltered|jailbroken|evil|rogue)\b",
        _w("act"),
        _w("different new unrestricted unfiltered jailbroken evil rogue"),
    ),
    _rule(
        "override",
        rf"\bfrom\s+now\s+on,?\s+(?:you|{_MODEL}|{_COMM}|always|only|ignore|never)\b",
        _w("now"),
        _w("from"),
    ),
    _rule(
        "override",
        r"\b(?:your|the)\s+new\s+(?:task|role|instructions?|objective|goal|persona)\s+(?:is|are)\b",
        _w("new"),
        _w("task role instructions instruction objective goal persona"),
    ),
    _rule(
        "override",
        r"\bab\s+(?:jetzt|sofort)\s+(?:bist|antwortest|sagst|ignorierst)\s+du\b|\bdésormais,?\s+(?:tu|vous)\b"
        r"|\ba\s+partir\s+de\s+ahora,?\s+(?:eres|responde|di|ignora)\b",
        _w("jetzt sofort désormais ahora"),
    ),
    # -- role and chat-template markers, tags of the layout
    _rule(
        "role_marker",
        r"<\|\s*(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id|end_header_id|"
        r"begin_of_text)\s*\|?>",
        ("<|",),
    ),
    _rule(
        "role_marker",
        r"\[/?inst\]|<</?sys>>|<\s*/?\s*(?:start_of_turn|end_of_turn)\s*>",
        ("[inst", "[/inst", "<<sys", "<</sys", "start_of_turn", "end_of_turn"),
    ),
    _rule(
        "role_marker",
        r"(?:^|\n)[ \t>*_]*(?:System|SYSTEM|Assistant|ASSISTANT|User|USER|Human|HUMAN)[ \t]*(?:[Pp]rompt|PROMPT|"
        r"[Mm]essage|MESSAGE)?[ \t]*:[ \t]*[^:\s]",
        _w("system assistant user human prompt message"),
        _ROLE_COLON,
        cased=True,
    ),
    _rule(
        "role_marker",
        r"#{1,6}[ \t]*(?:system|assistant|user|human|instruction|response|input)[ \t]*(?:prompt|message)?[ \t]*:",
        _w("system assistant user human prompt message instruction response input"),
        _ROLE_COLON,
    ),
    _rule(
        "role_marker",
        r"</\s*(?:documents?|context|passage|system|instructions?|user|assistant)\s*>|\]\]>"
        r"|<\s*(?:system|instructions?|admin|assistant)\s*>|\[\s*(?:system|assistant)\s*(?:prompt|message)?\s*\]",
        _w("documents document context passage system instructions instruction user assistant admin", "]]>"),
        ("</", "]]>", "<system", "<instruction", "<admin", "<assistant", "[system", "[assistant", "< "),
    ),
    _rule(
        "role_marker",
        r"(?:-{3,}|={3,}|\*{3,}|#{2,}|\[)\s*(?:end|begin|start)\s+(?:of\s+)?(?:the\s+)?(?:documents?|context|"
        r"system\s+prompt|system\s+message|instructions?|retrieved\s+text|user\s+input)\b",
        _w("end begin start"),
        _w("documents document context system instructions instruction retrieved user"),
        ("---", "===", "***", "##", "[end", "[ end", "[begin", "[ begin", "[start", "[ start"),
    ),
    # -- exfiltration
]

_SECRET = (
    r"(?:passwords?|passphrases?|passcodes?|pins?|(?:api|secret|private|ssh|signing|encryption)[\s_-]*keys?|"
    r"(?:access|auth|authentication|bearer|session|refresh|api|csrf)?[\s_-]*tokens?|credentials|"
    r"session\s+(?:cookies?|ids?)|cookies|secrets?|(?:system|hidden|initial|original)\s+(?:prompt|message|instructions)|"
    r"(?:your|the)\s+(?:instructions|prompt)|conversation\s+history|chat\s+history|"
    r"credit\s+card(?:\s+numbers?)?|passw[oö]rt(?:er)?|kennw[oö]rt(?:er)?|schlüssel|zugangsdaten|anmeldedaten|"
    r"mots?\s+de\s+passe|clés?(?:\s+(?:d'api|api|privées?|secrètes?))?|identifiants|jetons?|"
    r"contraseñas?|claves?(?:\s+(?:de\s+api|api|privadas?|secretas?))?|credenciales)"
)
_SECRET_NEEDLES = _w(
    "passwords passphrase passcode pin pins key keys tokens credentials cookies secrets prompt instructions history "
    "environment credit kennwort schlüssel zugangsdaten anmeldedaten passe clé clés identifiants jeton jetons "
    "contraseña claves clave credenciales message"
)
_MODEL_SECRET = (
    r"(?:(?:conversation|chat)\s+history|(?:your\s+)?(?:system|hidden|initial|original|secret)\s+(?:prompt|message|"
    r"instructions)|your\s+(?:instructions|prompt|context|rules|guidelines))"
)
_STRONG_LEAK = (
    r"(?:reveal|leak|disclose|exfiltrate|recite|verrate|verraten|gib\s+(?:\w+\s+)?aus|"
    r"révèle[zr]?|divulgue[zr]?|revela|revele|divulga|filtra)"
)
_STRONG_LEAK_NEEDLES = _w(
    "reveal leak disclose exfiltrate output print dump repeat recite verrate gib révèle révéler divulgue revela "
    "revele filtra"
)
_LEAK = (
    r"(?:reveal|leak|disclose|exfiltrate|output|print|dump|repeat|recite|write\s+out|"
    r"give\s+(?:me|us|out)|tell\s+(?:me|us)|share|send|e-mail|email|mail|post|forward|upload|transmit|paste|"
    r"gib|sende|schicke?|verrate|zeige|teile|poste|übermittle|envoie[zr]?|révèle[zr]?|affiche[zr]?|donne[zr]?|"
    r"partage[zr]?|publie[zr]?|transmets|transmettez|copie[zr]?|envía|envíe|enviar|revela|revele|muestra|muestre|"
    r"comparte|publica|dame|manda|transmite)"
)
_LEAK_NEEDLES = _STRONG_LEAK_NEEDLES + _w(
    "display show list write give tell share send mail email post forward upload transmit paste sende schick "
    "schicke zeige teile übermittle envoie envoyer affiche donne partage publie transmets transmettez copie envía "
    "envíe enviar muestra muestre comparte publica dame manda transmite"
)
_OWNER = (
    r"(?:the\s+)?(?:admin(?:istrator)?'?s?|root|system|master|superuser|production|database|db|server'?s?|deployment|"
    r"user'?s?|users'|all|every|any|stored|saved|their|other\s+users'?|"
    r"des\s+administrators|de\s+l'administrateur|del\s+administrador|admin-|les|tous\s+les|todas\s+las|todos\s+los)"
)
_DESTINATION = (
    r"(?:https?://|\bwww\.|[\w.+-]+@[\w-]+\.\w|\b(?:to|at)\s+(?:this|the\s+following|our|my|an?\s+external)\s+"
    r"(?:url|address|endpoint|server|webhook|e-?mail|inbox|link)|\bin\s+(?:your|the)\s+(?:answer|reply|response|output)\b|"
    r"!\[[^\]]*\]\(|\bas\s+a\s+(?:query|url)\s+parameter\b|\ban\s+(?:die|diese)\s+adresse\b|\bà\s+l'adresse\b|"
    r"\ba\s+la\s+dirección\b|\bdans\s+ta\s+réponse\b|\ben\s+tu\s+respuesta\b|\bin\s+deiner\s+antwort\b)"
)
_DESTINATION_NEEDLES = _w(
    "http https www our my external following answer reply response output parameter adresse dirección réponse "
    "respuesta antwort",
    "@",
    "![",
)

_RULES += [
    _rule(
        "exfiltration",
        rf"\b{_STRONG_LEAK}\s+(?:\w+\s+){{0,3}}?{_SECRET}\b",
        _STRONG_LEAK_NEEDLES,
        _SECRET_NEEDLES,
        lead=True,
        anchors=_STRONG_LEAK,
    ),
    _rule(
        "exfiltration",
        # somebody's secret: the owner before it or after it (one scan for the verb serves both)
        rf"\b{_LEAK}\s+(?:\w+\s+){{0,2}}?(?:{_OWNER}[\s-]+(?:\w+\s+){{0,1}}?{_SECRET}\b|{_SECRET}\s+(?:of|for|from|on)\s+"
        r"(?:the\s+|this\s+|your\s+)?(?:admin\w*|root|system|server|deployment|site|database|production|current\s+user|"
        r"users?|account|project|installation)\b)",
        _LEAK_NEEDLES,
        _SECRET_NEEDLES,
        lead=True,
        anchors=_LEAK,
    ),
    _rule(
        "exfiltration",
        # a destination, and a secret that is somebody's, or the model's own, or "you can see"
        rf"\b{_LEAK}\s+(?:\w+\s+){{0,2}}?(?:{_OWNER}[\s-]+(?:\w+\s+)?{_SECRET}|{_MODEL_SECRET}|"
        rf"{_SECRET}\s+(?:that\s+)?you\s+(?:can\s+see|can\s+access|have|know|hold|were\s+given))\b[^\n]*?{_DESTINATION}",
        _DESTINATION_NEEDLES,
        _LEAK_NEEDLES,
        _SECRET_NEEDLES,
        lead=True,
        anchors=_LEAK,
    ),
    _rule(
        "exfiltration",
        rf"\b{_LEAK}\b[^\n]{{0,80}}?(?:{_SECRET}|environment\s+variables)[^\n]{{0,60}}?\bin\s+your\s+"
        r"(?:answer|reply|response|output|message|summary)",
        _LEAK_NEEDLES,
        _w("your"),
        lead=True,
        anchors=_LEAK,
    ),
    _rule(
        "exfiltration",
        # the model's own secrets: its prompt, its instructions, the conversation
        rf"\b{_LEAK}\s+(?:\w+\s+){{0,2}}?{_MODEL_SECRET}\b",
        _LEAK_NEEDLES,
        _w("history prompt message instructions context rules guidelines"),
        lead=True,
        anchors=_LEAK,
    ),
    _rule(
        "exfiltration",
        r"\b(?:append|add|include|insert|render|embed|put|end\s+with|output|print|show|display|attach)\b[^\n]{0,80}?"
        r"!\[[^\]]*\]\(\s*https?://[^)\s]*[?=#][^)]*\)",
        _w("append add include insert render embed put end output print show display attach"),
        ("![",),
        lead=True,
    ),
    # -- answer forcing
    _rule(
        "answer_forcing",
        r"\b(?:correct|right|real|true|only|actual|official|proper|expected|accepted)\s+(?:answer|response|reply)\b"
        r"[^.!?\n]{0,60}?\b(?:is|should\s+be|must\s+be|will\s+be|here\s+is)\b(?!\s+(?:stored|saved|kept|computed|returned|"
        r"given|shown|marked|defined|selected|determined|checked|compared|validated|not\b|in\s+the\b))",
        _w("answer response reply"),
        _w("correct right real true only actual official proper expected accepted"),
    ),
    _rule(
        "answer_forcing",
        # not "output": in software docs "just output a diff" is what a program does
        rf"\b(?:always|only|just)\s+(?:ever\s+)?{_SPEAK}\b{_NO_STATUS}",
        _w("always only just"),
        _SPEAK_NEEDLES,
        lead=True,
        anchors="(?:always|only|just)",
    ),
    _rule(
        "answer_forcing",
        r"\b(?:answer|reply|respond|state|claim|insist)\s+(?:only\s+|always\s+|simply\s+)?"
        r"(?:that|with|by\s+saying|the\s+following)\b"
        + _NO_STATUS
        + _THAT_THING
        + r"[^.!?\n]{0,120}?(?:\b(?:is|are|was|were|must|should|will|has|have|"
        r"does|do|can|cannot|never|always|no\s+longer|only)\b|\d|[\"“'`])",
        _w("answer reply respond state claim insist"),
        _w("that with saying following"),
        lead=True,
        anchors="(?:answer|reply|respond|state|claim|insist)",
    ),
    _rule(
        "answer_forcing",
        r"\b(?:tell|inform|assure|remind)\s+(?:the\s+|all\s+|any\s+|your\s+)?(?:users|readers?|people|everyone|anyone|"
        r"customers|whoever\s+asks|them)\s+(?:who\s+asks?\s+)?(?:that|it\s+is)\b"
        r"|\b(?:you\s+(?:must|should|will|need\s+to|have\s+to)|always|never)\s+(?:\w+\s+)?tell\s+the\s+user\s+that\b",
        _w("tell inform assure remind"),
        _w("user users reader readers people everyone anyone customer customers whoever them"),
        lead=True,
    ),
    _rule(
        "answer_forcing",
        r"\b(?:answer|reply|respond)\s+to\s+(?:every|any|all|each)\s+(?:question|query|message|prompt)s?\b"
        r"|\beven\s+if\s+(?:the\s+)?(?:user|person|reader|documentation|docs|question|source)\s+"
        r"(?:says|quotes|asks|insists|claims|shows|states|disagrees)",
        _w("answer reply respond even"),
        _w("every any all each user person reader documentation docs question source"),
        lead=True,
    ),
    _rule(
        "answer_forcing",
        r"\bla\s+risposta\s+(?:corretta|giusta|vera|esatta)\s+è\b|\brispondi\s+(?:sempre|solo|soltanto|che)\b"
        r"|\bdi'\s+(?:sempre\s+)?(?:all'utente\s+)?che\b",
        _w("risposta rispondi", "di'"),
    ),
    _rule(
        "answer_forcing",
        r"\b(?:whatever|regardless\s+of\s+what|no\s+matter\s+what|irrespective\s+of\s+what)\s+the\s+"
        r"(?:documentation|docs|text|page|source|sources|context|question|user|manual)\s+(?:says|asks|states|shows|claims)\b",
        _w("whatever regardless matter irrespective"),
        _w("documentation docs text page source sources context question user manual"),
    ),
    _rule(
        "answer_forcing",
        r"\b(?:begin|start|end|open|close|prefix|conclude|sign)\s+(?:every|each|all|any|your)\s+(?:reply|replies|answer|"
        r"answers|response|responses|message|messages|summary|summaries)\s+with\b",
        _w("begin start end open close prefix conclude sign"),
        _w("reply replies answer answers response responses message messages summary summaries"),
        lead=True,
    ),
    _rule(
        "answer_forcing",
        r"\byour\s+(?:answer|response|reply|output|summary)\s+(?:must|should|shall|will|needs\s+to|has\s+to)\s+"
        r"(?:only\s+|always\s+)?(?:be|say|state|contain|include|begin|start|end|mention|read|claim)\b",
        _w("your"),
        _w("answer response reply output summary"),
    ),
    _rule(
        "answer_forcing",
        rf"\b(?:regardless\s+of|no\s+matter|irrespective\s+of)\s+(?:what|the|which|how)\b[^.!?\n]{{0,80}}?,\s*"
        rf"(?:always\s+|just\s+|simply\s+)?{_COMM}\b",
        _w("regardless matter irrespective"),
        _COMM_NEEDLES,
    ),
    _rule(
        "answer_forcing",
        r"\b(?:when|if|whenever)\s+(?:you\s+are\s+|you're\s+)?(?:asked|questioned|someone\s+asks|anyone\s+asks|"
        r"(?:the\s+)?users?\s+asks?|people\s+ask)\b[^.!?\n]{0,100}?,\s*(?:always\s+|just\s+|simply\s+)?"
        r"(?:answer|reply|respond|say|state|claim|tell|insist|recommend)\b",
        _w("asked questioned asks ask"),
        _COMM_NEEDLES,
    ),
    _rule(
        "answer_forcing",
        r"\b(?:do\s+not|don'?t|never|must\s+not|should\s+not)\s+(?:ever\s+)?(?:(?:mention|cite|acknowledge)\s+"
        r"(?:this|that|it|these|where|how|anything|any\s+(?:other|newer|older)|``|the\s+(?:\w+\s+)?(?:comment|note|"
        r"instructions?|sources?|documentation|docs|newer|new|older|real|original|previous|current|other|official|api|"
        r"version|setting|option))\b|reveal\s+that|disclose\s+that|tell\s+(?:the\s+)?users?\s+(?:about|that))",
        _w("mention cite acknowledge reveal disclose tell"),
        _w("not never", "n't"),
        lead=True,
    ),
    _rule(
        "answer_forcing",
        r"\b(?:die\s+)?(?:richtige|korrekte|wahre|einzige)\s+antwort\s+(?:ist|lautet)\b"
        r"|\bantworte(?:n\s+sie)?\s+(?:immer|stets|nur|ausschließlich|mit|dass)\b"
        r"|\bsag(?:e|en\s+sie)?\s+(?:immer|stets|nur|dem|den|allen|dass)\b"
        r"|\bla\s+(?:bonne|vraie|seule|véritable)\s+réponse\s+est\b|\bréponds?\s+(?:toujours|uniquement|seulement|que)\b"
        r"|\brépondez\s+(?:toujours|uniquement|seulement|que)\b"
        r"|\b(?:dis|dites)\s+(?:toujours\s+|simplement\s+)?(?:à\s+l'utilisateur\s+|aux\s+utilisateurs\s+)?que\b"
        r"|\bla\s+(?:única\s+)?respuesta\s+(?:correcta|verdadera|real)\s+es\b"
        r"|\b(?:responde|responda|contesta|conteste)\s+(?:siempre|solo|solamente|únicamente|que)\b"
        r"|\b(?:di|diga|dile|dígale|dile)\s+(?:siempre\s+)?(?:al\s+usuario\s+|a\s+los\s+usuarios\s+)?que\b",
        _w(
            "antwort antworte antworten sag sage sagen réponse réponds répondez dis dites respuesta responde responda "
            "contesta conteste di diga dile dígale"
        ),
        _w(
            "ist lautet immer stets nur ausschließlich mit dass dem den allen est toujours uniquement seulement que "
            "es siempre solo solamente únicamente"
        ),
    ),
    # -- addressed to a model
    _rule(
        "addressed",
        # a vocative: at the start of a clause, ending in a colon or a comma ("To the AI reading this page:")
        r"(?:\b(?:to|for|attention|dear|hey|hello|hi|"
        r"(?:[\w'’]+[ \t]+){0,2}?(?:note|message|instructions?)\s+(?:to|for)|"  # ("Maintainers' note for")
        r"if\s+you\s+are|if\s+you'?re|an\s+(?:die|den|das)|f[üu]r\s+(?:die|den|das)|hinweis\s+f[üu]r|"
        r"wenn\s+du|falls\s+du|à|au|aux|pour\s+(?:l'|le|la|les)|note\s+pour|si\s+tu\s+es|si\s+vous\s+[eê]tes|"
        r"para\s+(?:el|la|los|las)|nota\s+para|si\s+eres|mensaje\s+para)\s+(?:the\s+|an?\s+|any\s+|all\s+|every\s+|"
        rf"eine?[nmr]?\s+|une?\s+|la\s+|l'|el\s+|los\s+|las\s+|le\s+|les\s+|die\s+|der\s+|den\s+|un\s+)?{_MODEL}\b"
        r"(?!\s+(?:team|teams|group|lab|department|research|researchers|engineers|act|ethics|policy|working|community))"
        r"[^.!?:,]{0,60}[:,]"
        rf"|\bas\s+an?\s+{_MODEL},\s+you\b"
        r")",
        _MODEL_GATE,
        lead=True,
    ),
    _rule(
        "addressed",
        # the model named first in its sentence, then a comma or a colon: "Assistant, from here on …"
        # (on its line: a term over a definition's colon is a label, judged by what it defines)
        rf"(?:^|(?<=[.!?:;]\s)|(?<=\n)|(?<=[.!?]\s\s))[^\w\n]{{0,8}}{_MODEL}[ \t]*[:,]\s*\w",
        _MODEL_GATE,
        block=True,
    ),
    _rule(
        "addressed",
        rf"\b{_MODEL}\s+(?:reading|processing|parsing|summari[sz]ing|answering|replying|responding|helping|assisting|"
        rf"generating|writing|browsing|retrieving|ingesting|consuming|indexing|crawling|that\s+reads?|"
        rf"who\s+reads?)\s+(?:this|these|the\s+following|my|our)\b"
        rf"|\b{_MODEL}(?:,\s+die\s+diese|\s+qui\s+(?:lit|lisez|lisent|r[ée]pond\w*)|\s+que\s+(?:lee|leen|responde\w*))\b",
        _MODEL_GATE,
    ),
]


_MODEL_MODAL = re.compile(
    rf"\b{_MODEL}\s+(?:(?!must\b|should\b|shall\b|will\b)[\w`'-]+\s+){{0,6}}?(?:must|should|shall|need\s+to|needs\s+to|have\s+to|has\s+to|are\s+to|is\s+to|will|"
    rf"are\s+required\s+to|is\s+required\s+to|müssen|muss|sollen|soll|doivent|doit|deben|debe)\b"
)

# --- authority ------------------------------------------------------------------------

_AUTHORITY = (
    r"(?:system|systems|admin|administrators?|administration|sysadmin|root|security|maintainers?|vendor|"
    r"release[\s-]+(?:team|managers?|engineering)|core[\s-]+(?:team|developers)|developers?|dev\s+team|moderators?|"
    r"operators?|support\s+team|it\s+department|management|compliance|trust\s+(?:and|&)\s+safety|the\s+authors?|"
    r"sicherheitsteams?|entwickler(?:team)?|betreuer|"
    r"système|administrateur|équipe\s+de\s+(?:sécurité|maintenance|publication|développement)|mainteneurs|"
    r"sistema|administrador|equipo\s+de\s+(?:seguridad|mantenimiento|desarrollo|publicación)|mantenedores)"
)
_NOTICE = (
    r"(?:notice|notification|message|announcement|alert|warning|update|bulletin|memo|directive|instruction|advisory|"
    r"note|correction|override|statement|hinweis|mitteilung|nachricht|warnung|avis|annonce|alerte|"
    r"avertissement|aviso|mensaje|anuncio|alerta|advertencia|nota)"
)
_HEADER = re.compile(
    rf"\b{_AUTHORITY}[\s-]+(?:\w+\s+)?{_NOTICE}\b|\bsystemhinweis\b|\bsystemnachricht\b"
    rf"|\b{_NOTICE}\s+(?:from|by|of|vom|von|der|des|du|de\s+l[a']|de\s+la|del|de)\s+"
    rf"(?:the\s+|la\s+|el\s+|los\s+|les\s+|l')?(?:\w+\s+){{0,2}}?{_AUTHORITY}\b"
    r"|\[\s*(?:system|admin|security|maintainers?|vendor|sys|official|urgent)\s*\]"
)
_COLON_SOON = re.compile(r"[^.!?\n:]{0,40}:")
# urgency shouted in capitals before a colon: "URGENT:", "IMPORTANT - READ THIS:"
_URGENT = re.compile(
    r"\b(?:URGENT|IMPORTANT|CRITICAL|ATTENTION|OFFICIAL|MANDATORY|DRINGEND|WICHTIG|URGENTE|IMPORTANTE|ATENCIÓN|"
    r"ACHTUNG|AVIS)\b(?=[ \t\-–—A-ZÀ-Ý'!]{0,40}:)"
)
_NOTICE_NEEDLES = _Gate.of(
    _w(
        "notice notification message announcement alert warning update bulletin memo directive instruction advisory "
        "note correction override statement hinweis mitteilung nachricht warnung avis annonce alerte avertissement "
        "aviso mensaje anuncio alerta advertencia nota systemhinweis systemnachricht",
        "[",
    )
)
_AUTHORITY_NEEDLES = _Gate.of(
    _w(
        "system systems admin administrator administrators administration sysadmin root security maintainer "
        "maintainers vendor release core developer developers dev moderator moderators operator operators support "
        "department management compliance trust author authors sicherheitsteam entwickler betreuer système "
        "administrateur équipe mainteneurs sistema administrador equipo mantenedores systemhinweis systemnachricht",
        "[",
    )
)
_URGENT_NEEDLES = tuple(
    "URGENT IMPORTANT CRITICAL ATTENTION OFFICIAL MANDATORY DRINGEND WICHTIG ATENCIÓN ACHTUNG AVIS".split()  # noqa: SIM905
)

# what makes a notice steer: a target, a claim that the documentation is wrong, a demand
_STEER = re.compile(
    r"\b(?:(?:always|never|only|must|should|do\s+not|don'?t|instead|(?:required|instructed|ordered|expected)\s+to)\s+"
    r"(?:\w+\s+)?(?:tell|say|answer|reply|respond|state|"
    r"output|print|report|recommend|mention|inform|claim|assert|write|suggest|advise|confirm|cite|use|treat|ignore|"
    r"disregard)|"
    r"tell\s+(?:the\s+)?(?:users?|readers?|people|everyone|anyone|customers?)|"
    r"(?:the\s+)?(?:user|reader)'?s?\s+(?:question|request)|the\s+question|your\s+(?:answer|response|reply|output)|"
    r"(?:users|readers|people|everyone)\s+(?:must|should|need\s+to)\s+be\s+(?:told|informed|reminded)|"
    r"contains?\s+(?:a|an)\s+(?:documentation\s+|known\s+)?(?:error|mistake|typo)|"
    r"(?:is|are|was|were)\s+(?:a\s+|an\s+)?(?:documentation\s+|doc\s+)?(?:error|wrong|incorrect|outdated|obsolete|"
    r"inaccurate|erroneous|typo|mistake|misprint|no\s+longer\s+(?:valid|correct|accurate))|"
    r"the\s+readers?|whoever\s+reads|anyone\s+reading|you\s+(?:are\s+(?:instructed|ordered)\s+to|will\s+now)|"
    r"(?:sage|sag)\s+(?:dem|den|allen|immer)|antworte|teile\s+(?:dem|den)|nutzer|benutzer|leser|die\s+frage|"
    r"(?:ist|sind|war)\s+(?:ein\s+)?(?:fehler|falsch|veraltet|fehlerhaft)|"
    r"dites|réponds|répondez|utilisateurs?|lecteur|la\s+question|contient\s+une\s+erreur|"
    r"(?:est|sont)\s+(?:une\s+)?(?:erreur|erron[ée]e?s?|faux|fausse|obsolète|incorrecte?)|"
    r"di\s+(?:al|a\s+los|que)|diga|responde|responda|usuarios?|lector|la\s+pregunta|"
    r"(?:es|son|está|están)\s+(?:un\s+)?(?:error|incorrect[ao]s?|obsolet[ao]s?|fals[ao]))\b"
)
# the text pointing at itself: what a note planted in a page says about "this page"
_DEICTIC = re.compile(
    r"\b(?:this|these|the\s+following)\s+(?:page|pages|document|documentation|doc|docs|file|section|text|site|setting|"
    r"option|module|function|class|api|fixture|chunk|passage|paragraph|article|library|project|content|note|table)\b"
    r"|\babout\s+(?:it|this|them)\b|\b(?:diese[nrs]?|cette|ce|esta|este)\s+\w+"
)
_SECOND_PERSON = re.compile(r"\b(?:you|your|du|tu|vous)\b")


_NOTICE_WORDS = (
    *re.findall(r"[a-zéè]+", _NOTICE),
    *("systemhinweis", "systemnachricht", "[ ", "[system", "[admin", "[secur", "[maint", "[vendor", "[sys]", "[offic"),
    "[urgent",
)


def _header_matches(low: str, tokens: set[str] | None = None) -> Iterator[re.Match[str]]:
    """_HEADER's matches, found in windows around the notice words that occur (scanning
    the whole text for the authority alternation costs several times more)."""
    seen = -1
    words = _NOTICE_WORDS if tokens is None else [w for w in _NOTICE_WORDS if w[:5] in tokens or w[0] == "["]
    for word in words:
        i = low.find(word)
        while i >= 0:
            start = max(0, i - 70, seen)
            for m in _HEADER.finditer(low, start, i + len(word) + 90):
                if m.start() >= seen:
                    seen = m.end()
                    yield m
            i = low.find(word, i + 1)


def _notice(plain: str, low: str, tokens: set[str] | None = None) -> int | None:
    """Where a notice header ends: an authority's notice that looks like one (in capitals,
    in brackets, or followed by a colon), or an urgent word in capitals."""
    for m in _header_matches(low, tokens):
        if plain[m.start() : m.end()].isupper() or m.group().startswith("[") or _COLON_SOON.match(low, m.end()):
            return m.end()
    urgent = _URGENT.search(plain)
    return None if urgent is None else urgent.end()


# --- hidden channels ------------------------------------------------------------------

_COMMENTS = re.compile(
    r"<!--.*?(?:-->|\Z)|\[//\]:\s*#\s*\(.*?\)|\[comment\]:\s*#\s*\(.*?\)"
    r"|(?m:^[ \t]*\.\.[ \t]+(?![\w:.+-]+::|_|\[|\||\w+:\s)[^\n]*(?:\n[ \t]+[^\n]+)*)"
    r"|<(?:span|div|p|font)\b[^>]*(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0|opacity\s*:\s*0|"
    r"color\s*:\s*(?:white|#fff\b|#ffffff)|\shidden(?=[\s>=/]))[^>]*>.*?</(?:span|div|p|font)>"
    # text a page carries but does not show as prose: a Markdown image's alt text, a link's
    # title, an HTML alt or title attribute, each with the element that carries it (a label
    # of a few words is no sentence; a sentence there is read only by whoever reads the source)
    r"|!\[[^\]\n]{24,}\]\([^)\n]*\)|\[[^\]\n]*\]\([^)\s]+[ \t]+\"[^\"\n]{24,}\"\)"
    r"|<(\w+)\b[^>]*\b(?:alt|title)[ \t]*=[ \t]*(?:\"[^\"\n]{24,}\"|'[^'\n]{24,}')[^>]*>(?:[^<]*</\1>)?",
    re.S,
)
_COMMENT_NEEDLES = (
    "<!--",
    "[//]:",
    "[comment]:",
    ".. ",
    "display",
    "visibility",
    "font-size",
    "opacity",
    "color",
    "hidden",
    "![",
    '")',
    "alt",
    "title",
)
# a comment that speaks to its reader: second person or a model noun, plus a verb of answering
_SPEAKS = re.compile(rf"\b(?:you|your|du|tu|vous|users?|readers?|{_MODEL})\b")
# (a style that hides it, or the HTML ``hidden`` attribute: ``<span hidden>``, ``<div hidden="">``)
_INVISIBLE_ELEMENT = re.compile(
    r"<(?:span|div|p|font)\b[^>]*(?:(?:display|visibility|font-size|opacity|color)\s*:|\shidden(?=[\s>=/]))"
)
_TAG = re.compile(r"<[^>]*>")
#: an invisible element is a hidden channel by itself when what it holds (its tags left
#: out) has this many letters, in any script: a sentence, not a version number or an id
#: (``<div hidden id="search-index-version">2026.11.3</div>``). Counted over the whole
#: element, tag included, as it was, a style's own words (``display``, ``none``) passed it.
HIDDEN_LETTERS = 8
_ANSWERING = re.compile(
    r"\b(?:answer|reply|respond|say|tell|state|claim|output|cite|mention|ignore|disregard|forget|recommend|"
    r"antworte|sage|ignoriere|réponds|répondez|dis|dites|responde|di|ignora)\b"
)

# sentence bounds; a comment line or a comment opener also starts a new piece
# (and so does the line after a heading: a Markdown heading, a reST under/overline)
# a sentence ends at its final punctuation and the whitespace after it up to the last line
# break: the next line's indentation stays with the next sentence (an indented code line
# ends no clause the way an unindented line after it starts one, see _NEW_BLOCK)
_SENTENCE_END = re.compile(
    r"(?<=[.!?])[\"')\]]*(?:\s*\n|[ \t]+)|\n\s*\n|(?<=-->)|\n(?=[ \t]*(?:#|//|\.\. |<!--))"
    r"|(?m:^[ \t]*(?:#{1,6}[ \t][^\n]*|([=\-~^\"'`*+#:.])\1{2,})[ \t]*\n)"
)


# the line break after a list item or an indented (code) line that an unindented line
# follows: where _AFTER_ITEM_LINE starts a clause, a piece of its own starts
_AFTER_ITEM = re.compile(rf"(?m)^{_ITEM_OR_CODE_LINE}(?=\S)")


def _lower(text: str) -> str:
    """Lower case, position for position (the few letters whose lower case is longer stay)."""
    low = text.lower()
    return low if len(low) == len(text) else "".join(ch if len(ch.lower()) != 1 else ch.lower() for ch in text)


class _Gates:
    """Every gate of every rule as one bit: a text's open gates are found by one set
    intersection (its words against all needle words) plus the few phrase and pair tests,
    and a rule is live when all its bits are set."""

    def __init__(self, gates: list[_Gate]) -> None:
        self.bit = {id(g): 1 << i for i, g in enumerate(gates)}
        self.words: dict[str, int] = {}
        self.phrases: dict[str, int] = {}
        self.pairs: list[tuple[str, str, int]] = []
        for g in gates:
            b = self.bit[id(g)]
            for w in g.words:
                self.words[w] = self.words.get(w, 0) | b
            for p in g.phrases:
                self.phrases[p] = self.phrases.get(p, 0) | b
            self.pairs += [(x, y, b) for x, y in g.pairs]
        self.vocabulary = frozenset(self.words)
        # phrases by their first character: one test of that character skips them all
        self.by_first: dict[str, list[tuple[str, int]]] = {}
        for p, b in self.phrases.items():
            self.by_first.setdefault(p[0], []).append((p, b))

    def open(self, tokens: set[str], low: str) -> int:
        mask = 0
        for w in self.vocabulary.intersection(tokens):
            mask |= self.words[w]
        for first, phrases in self.by_first.items():
            if first in low:
                for p, b in phrases:
                    if b & ~mask and p in low:
                        mask |= b
        for x, y, b in self.pairs:
            if b & ~mask and x in tokens and y in tokens:
                mask |= b
        return mask

    def need(self, gates: tuple[_Gate | re.Pattern[str], ...]) -> int:
        return sum(self.bit[id(g)] for g in {id(g): g for g in gates if isinstance(g, _Gate)}.values())


def _live_rules(low: str, tokens: set[str]) -> list[_Rule]:
    """The rules whose needles all occur in ``low``: the only ones worth running."""
    mask = _GATE_TABLE.open(tokens, low)
    return [
        r
        for r, need in _NEEDS
        if need & mask == need and all(g.search(low) for g in r.needles if isinstance(g, re.Pattern))
    ]


_TICKS = re.compile(r"`+")


def _in_code(low: str, start: int, end: int) -> bool:
    """Whether ``low[start:end]`` sits in inline code (between backticks on its line:
    an odd number of backtick runs before it, one after it before the line ends)."""
    line_start = low.rfind("\n", 0, start) + 1
    line_end = low.find("\n", end)
    if line_end < 0:
        line_end = len(low)
    if len(_TICKS.findall(low, line_start, start)) % 2 == 1 and "`" in low[end:line_end]:
        return True
    # a string literal in a code sample: "<|im_start|>" or '<|im_end|>'
    return start > 0 and low[start - 1] in "\"'" and low[end : end + 1] == low[start - 1]


# a sentence that talks about such text: attacks, examples, names for it
_DESCRIBES = re.compile(
    r"\b(?:such\s+as|for\s+example|for\s+instance|e\.g\.|like|called|known\s+as|attacks?|attackers?|injections?|"
    r"injected|malicious|adversarial|jailbreaks?|payloads?|phrases?|strings?|example)\b"
)


def _quoted(low: str, start: int) -> bool:
    """Whether position ``start`` is inside a quotation that opened on its line."""
    line = low[low.rfind("\n", 0, start) + 1 : start]
    return (
        line.count('"') % 2 == 1
        or len(_TICKS.findall(line)) % 2 == 1
        or line.count("“") > line.count("”")
        or line.count("«") > line.count("»")
    )


# what a quotation speaks to when it speaks to a model: its instructions or prompt, the
# user, the question, its answer, a model noun
_TO_MODEL = re.compile(
    rf"\b(?:instructions?|prompts?|guidelines|directives|the\s+users?'?s?|users?'s?\s+(?:question|request)|"
    rf"the\s+question|your\s+(?:answer|reply|response|output|rules)|(?:answer|reply|respond)\s+(?:that|with|only)|"
    rf"system|secrets?|passwords?|credentials|api\s+keys?|tokens?|{_MODEL})\b"
)
_QUOTE_CLOSE = {'"': '"', "`": "`", "“": "”", "«": "»"}


def _example(low: str, start: int, end: int) -> bool:
    """Whether the match at ``low[start:end]`` is a quoted example the documentation gives
    its reader: inside a quotation, in a sentence that describes (an attack, an example, a
    phrase), and the quotation speaks to no model (a quoted instruction aimed at the
    model's instructions, its answer or the user goes like any other)."""
    if not _quoted(low, start):
        return False
    lo = max(low.rfind(". ", 0, start), low.rfind("\n", 0, start)) + 1
    hi_dot, hi_nl = low.find(". ", end), low.find("\n", end)
    hi = min(x for x in (hi_dot, hi_nl, len(low)) if x >= 0)
    if not _DESCRIBES.search(low, lo, hi):
        return False
    line = low[lo:start]
    opener = max(_QUOTE_CLOSE, key=line.rfind)
    close = low.find(_QUOTE_CLOSE[opener], end)
    quote = low[lo + line.rfind(opener) + 1 : close if close >= 0 else hi]
    return _TO_MODEL.search(quote) is None


def _candidates(rule: _Rule, plain: str, low: str, tokens: set[str] | None) -> Iterator[re.Match[str]]:
    """The rule's matches: anchored at the occurrences of its first words when it has
    them (and the text's words are known), else by scanning."""
    if not rule.anchors or tokens is None:
        yield from rule.pattern.finditer(plain if rule.cased else low)
        return
    for word, key in rule.anchors:
        if key not in tokens:
            continue
        i = low.find(word)
        while i >= 0:
            if i == 0 or not (low[i - 1].isalnum() or low[i - 1] == "_"):
                m = rule.pattern.match(low, i)
                if m is not None:
                    yield m
            i = low.find(word, i + 1)


def _leaves_quote(low: str, start: int, end: int) -> bool:
    """Whether the match ``low[start:end]`` opens a quotation and runs past its end: a
    quotation's first word starts a clause (:func:`_at_lead`), but the clause is what the
    quotation holds (``emit a "DROP CONSTRAINT" directive for all constraints`` orders
    nothing)."""
    opener = low[:start].rstrip()[-1:]
    if opener not in _QUOTE_CLOSE or not _quoted(low, start):
        return False
    close = low.find(_QUOTE_CLOSE[opener], start)
    return 0 <= close < end


def _matches(rule: _Rule, plain: str, low: str, tokens: set[str] | None = None) -> bool:
    for m in _candidates(rule, plain, low, tokens):
        if rule.lead and (not _at_lead(low, m.start()) or _leaves_quote(low, m.start(), m.end())):
            continue
        if rule.block and not _block_start(low, m.start()):
            continue
        if rule.cls == "role_marker" and _in_code(low, m.start(), m.end()):
            continue  # ``<|im_start|>`` in a page about chat templates
        if rule.cls != "role_marker" and _example(low, m.start(), m.end()):
            continue  # an example quoted for the documentation's reader
        return True
    return False


def _authority_possible(plain: str, low: str, tokens: set[str]) -> bool:
    return (_NOTICE_NEEDLES.open(tokens, low) and _AUTHORITY_NEEDLES.open(tokens, low)) or any(
        n in plain for n in _URGENT_NEEDLES
    )


_GATE_TABLE = _Gates(list({id(g): g for r in _RULES for g in r.needles if isinstance(g, _Gate)}.values()))
_NEEDS = [(r, _GATE_TABLE.need(r.needles)) for r in _RULES]


def _modal_possible(low: str, tokens: set[str]) -> bool:
    return _MODEL_GATE.open(tokens, low) and _MODEL_MODAL.search(low) is not None


def _classes(
    raw: str, plain: str, rules: list[_Rule], authority: bool, modal: bool, *, tokens: set[str] | None = None
) -> list[str]:
    """The classes one sentence belongs to, the most specific first (``tokens``: the
    words of the text it comes from, a superset of its own)."""
    low = _lower(plain)
    found = [r.cls for r in rules if _matches(r, plain, low, tokens)]
    forced = "answer_forcing" in found
    if (
        modal
        and "addressed" not in found
        and _MODEL_MODAL.search(low)
        and (forced or (_STEER.search(low) and _DEICTIC.search(low)))
    ):
        found.append("addressed")
    if authority:
        header = _notice(plain, low)
        if header is not None and (found or _STEER.search(low, header)):
            found.insert(0, "authority")
    if found and _obfuscated(raw):
        found.insert(0, "hidden")
    return sorted(set(found), key=_PRIORITY.index)


# the class a sentence is reported under when it belongs to several: the channel and the
# voice first (they say how the text got there and who it pretends to be), then the act
_PRIORITY = ("role_marker", "hidden", "authority", "override", "exfiltration", "addressed", "answer_forcing")
_DIRECTIVE = re.compile(r"\.\.[ \t]+[\w:-]+::[^\n]*")
_INDENTED = re.compile(r"(?:\n[ \t]*(?=\n)|\n([ \t]+)[^\n]*)*")


def _blocks(text: str, spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """A flagged sentence inside a reST directive (a fake ``.. deprecated::`` or ``.. note::``
    written to carry it) takes the whole directive with it; a role marker takes the rest
    of its line (the turn it opens)."""
    out = list(spans)
    for s, e, cls in spans:
        if cls == "role_marker":
            eol = text.find("\n", e - 1 if e and text[e - 1] != "\n" else e)
            eol = len(text) if eol < 0 else eol
            if eol > e:
                out.append((s, eol, cls))
    if ".. " not in text:
        return out
    for m in _DIRECTIVE.finditer(text):
        body = _INDENTED.match(text, m.end())
        end = body.end() if body else m.end()
        hit = next((cls for s, _, cls in spans if m.start() <= s < end), None)
        if hit is not None:
            out.append((m.start(), end, hit))
    return out


_IMPERATIVE_START = re.compile(
    r"[^\w]*(?:please\s+|now\s+|then\s+|instead,?\s+)?(?:summari[sz]e|write|explain|describe|answer|reply|respond|say|"
    r"state|tell|output|print|list|recommend|mention|claim|treat|refuse|translate|repeat|insist|present|report|"
    r"assume|pretend|begin|conclude|sign|antworte|sage|schreibe|réponds|répondez|dis|écris|responde|di|escribe)\b"
)


def _weak(plain: str) -> bool:
    """A signal too weak alone that still belongs to a neighbouring injection: a notice
    header, an obligation laid on a model, "you" with something that steers, or a sentence
    that opens with an order to answer or write."""
    low = _lower(plain)
    return bool(
        _notice(plain, low) is not None
        or _MODEL_MODAL.search(low)
        or (_SECOND_PERSON.search(low) and _STEER.search(low))
        or _IMPERATIVE_START.match(low)
    )


# --- a title that addresses a model, and the order under it ---------------------------

_ORDER_VERB = (
    r"(?:tell|say|answer|reply|respond|state|claim|assert|insist|inform|advise|warn|recommend|suggest|mention|report|"
    r"explain|describe|present|point|direct|refer|redirect|send|share|reveal|include|add|append|prepend|insert|"
    r"output|print|write|use|load|install|set|run|execute|fetch|download|call|disable|enable|remove|delete|"
    r"ignore|disregard|forget|skip|treat|assume|consider|pretend|act|behave|prefer|favou?r|avoid|refuse|"
    r"stop|make\s+sure|ensure|remember|do\s+not|don'?t|never|always|"
    r"antworte|sage|sag|teile|empfiehl|verwende|nutze|ignoriere|vergiss|behaupte|erkläre|installiere|lade|"
    r"réponds|répondez|dis|dites|indique[zr]?|recommande[zr]?|utilise[zr]?|ignore[zr]?|oublie[zr]?|affirme[zr]?|"
    r"installe[zr]?|ne\s+(?:mentionne[zr]?|dis|dites)|"
    r"responde|dile|diga|indica|recomienda|usa|utiliza|ignora|olvida|afirma|instala|no\s+(?:menciones|digas)|"
    r"rispondi|consiglia|raccomanda|utilizza|dimentica|afferma|installa|non\s+(?:menzionare|dire))"
)
# a sentence that opens with an order (after a bullet, a quote mark, an adverb or a
# condition: "When someone asks about it, explain that …")
_ORDER_START = re.compile(
    r"[^\w]*(?:(?:when|whenever|if|once|before|after|wenn|falls|quand|lorsque|si|cuando|quando|se)\b[^.!?\n]{0,100}?,"
    r"\s*)?(?:(?:please|kindly|now|then|instead|always|never|only|just|also|bitte|immer|toujours|siempre|sempre)"
    rf"[,\s]+)?{_ORDER_VERB}\b"
)
_YOU_OBLIGED = re.compile(
    r"\b(?:you|du|vous|tu|usted)\s+(?:must|should|shall|need\s+to|have\s+to|are\s+to|are\s+required\s+to|musst|"
    r"sollst|solltest|devez|dois|debes|deberías|deve|devi)\b"
)
_OPENING_TAGS = re.compile(r"^(?:\s*</?[a-z][\w-]*(?:\s[^>\n]*)?>)+")  # "<p>Tell …": the tags before the words
# an order in the passive: "users are to be told that …", "readers should be advised to …"
_PASSIVE_ORDER = re.compile(
    r"\b(?:must|should|shall|(?:is|are)\s+to|needs?\s+to|ha(?:s|ve)\s+to)\s+(?:always\s+|only\s+|now\s+)?be\s+"
    r"(?:told|informed|advised|reminded|shown|given|recommended|offered|pointed|directed|sent|warned|assured)\b"
)
_SUPERSEDES = re.compile(rf"\b{_SUPERSEDE}\s+(?:the|this|that|these|everything|all|any|anything)\b")


def _orders(text: str, start: int, end: int) -> bool:
    """Whether a sentence of ``text[start:end]`` (a block under a title that addresses a
    model) gives an order: it opens with one, lays a must on "you", orders in the passive
    ("users are to be told"), claims the documentation is wrong or superseded, or carries
    a weak signal of its own."""
    body = text[start:end]
    bounds = [0, *(m.end() for m in _SENTENCE_END.finditer(body)), len(body)]
    for s, e in pairwise(bounds):
        if not body[s:e].strip():
            continue
        plain = _unmask(_OPENING_TAGS.sub("", body[s:e], count=1))
        low = _lower(plain)
        if (
            _ORDER_START.match(low)
            or _STEER.search(low)
            or _YOU_OBLIGED.search(low)
            or _PASSIVE_ORDER.search(low)
            or _SUPERSEDES.search(low)
            or _weak(plain)
        ):
            return True
    return False


def _titled(text: str, low: str, tokens: set[str]) -> list[tuple[int, int]]:
    """The blocks headed by a title that addresses a model and giving an order, title
    included (:mod:`ctxassembly.text.addressed`); ``low``, ``tokens``: the gate's view."""
    if not possible(tokens, low):
        return []
    return addressed_blocks(_lower(text), lambda s, e: _orders(text, s, e), tokens)


def titled_by_label(text: str, labels: tuple[str | None, ...]) -> tuple[tuple[int, int, str], ...]:
    """The opening block of ``text`` as a span of class ``addressed`` when one of
    ``labels`` (a chunk's title, its section path) is a title that addresses a model
    (:func:`ctxassembly.text.addressed.addressed_label`) and the block gives an order: a
    heading a splitter moved into the metadata still heads the text it came from."""
    if not any(v and addressed_label(v) for v in labels):
        return ()
    start, end = opening(_lower(text))
    return ((start, end, "addressed"),) if end > start and _orders(text, start, end) else ()


def _comment_spans(text: str, low: str) -> list[tuple[int, int]]:
    """Comments and invisible elements that speak to their reader or carry any class."""
    if not any(n in low for n in _COMMENT_NEEDLES):
        return []
    out = []
    for m in _COMMENTS.finditer(low):
        raw = text[m.start() : m.end()]
        body = _unmask(raw)
        body_low = _lower(body)
        tokens = _tokens(body_low)
        invisible = (
            _INVISIBLE_ELEMENT.match(body_low) is not None
            and sum(ch.isalpha() for ch in _TAG.sub(" ", body_low)) >= HIDDEN_LETTERS
        )
        answering = any(
            _ANSWERING.search(body_low, max(0, m.start() - 60), m.end() + 60) for m in _SPEAKS.finditer(body_low)
        )
        if (
            invisible
            or answering
            or _classes(
                raw,
                body,
                _live_rules(body_low, tokens),
                _authority_possible(body, body_low, tokens),
                _modal_possible(body_low, tokens),
            )
        ):
            out.append((m.start(), m.end()))
    return out


@lru_cache(maxsize=16384)
def find_injections(text: str) -> tuple[tuple[int, int, str], ...]:
    """Spans ``(start, end, class)`` of the sentences in ``text`` that act as instructions.

    Spans are in ``text``'s own coordinates (each sentence is analysed on an unmasked
    copy), so cutting them leaves everything else byte-for-byte as it was. A comment that
    speaks to its reader is cut whole; a sentence next to a flagged one, in the same
    paragraph, goes with it when it carries a weak signal of its own (a notice header,
    an obligation laid on a model, "you" with a demand). The decoded views of the text
    (:func:`ctxassembly.text.decode.views`: base64, hex, escapes, entities, spaced or
    broken words, digits for letters, look-alike letters) are scanned too: a finding in
    one cuts the sentences of the original that carry it, as ``hidden``. Results are
    cached by text: retrieved chunks repeat.
    """
    spans = _find(text)
    decoded = decoded_spans(text, _scan_view, _STEMS, _sentence_ends)
    if not decoded:
        return spans
    return _merge([*spans, *decoded])


_PIECE_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")


def _scan_view(view: View) -> list[tuple[int, int, str]]:
    """What the rules find in a decoded view, and, in a channel nobody writes prose in for
    a human reader (:data:`~ctxassembly.text.decode.CONCEALING`), every decoded sentence
    that says something (:func:`~ctxassembly.text.decode.says_something`), whatever it
    says: an instruction encoded to pass a reader unseen needs no word of an attack."""
    found = list(_find(view.text))
    if view.channel in CONCEALING:
        for lo, hi in view.decoded():
            for m in _PIECE_SENTENCE.finditer(view.text, lo, hi):
                if says_something(m.group(), _STEMS, view.channel):
                    found.append((m.start(), m.end(), "hidden"))
    return found


def stems() -> frozenset[str]:
    """The stems the decoders know (:func:`~ctxassembly.text.injection_model.lexicon_stems`)."""
    return _STEMS


def _sentence_ends(text: str) -> list[int]:
    return [m.end() for m in _SENTENCE_END.finditer(text)]


def _merge(spans: list[tuple[int, int, str]]) -> tuple[tuple[int, int, str], ...]:
    merged: list[tuple[int, int, str]] = []
    for s, e, cls in sorted(spans, key=lambda x: (x[0], -x[1])):
        if merged and s < merged[-1][1]:
            ps, pe, pc = merged[-1]
            merged[-1] = (ps, max(pe, e), min(pc, cls, key=_PRIORITY.index))
        else:
            merged.append((s, e, cls))
    return tuple(merged)


def _find(text: str) -> tuple[tuple[int, int, str], ...]:
    """:func:`find_injections` on the text as it is (no decoded views)."""
    whole = _unmask(text)
    low = _lower(whole)
    hidden = not text.isascii() and _obfuscated(text)
    tokens = _tokens(low)
    # The gates read every line break as a space (a phrase may be wrapped); the rules read
    # the breaks that only wrap a sentence so. The text is unwrapped only where anything
    # below can find something: a rule is live, a notice or a model noun may be there.
    gate = low.replace("\n", " ")
    live = _live_rules(gate, tokens)
    if live or hidden or _authority_possible(whole, gate, tokens) or _MODEL_GATE.open(tokens, gate):
        one_line = unwrapped(text)  # position for position: the pieces below are cut from both
    else:
        one_line = text
    if one_line is not text:
        whole = _unmask(one_line)
        low = _lower(whole)
    rules = [r for r in live if _matches(r, whole, low, tokens)]
    authority = _authority_possible(whole, low, tokens) and _notice(whole, low, tokens) is not None
    modal = _modal_possible(low, tokens)
    comments = _comment_spans(text, _lower(text))
    titled = _titled(text, low, tokens)
    if not (rules or hidden or comments or authority or modal or titled):
        return ()  # the common case, decided by substring tests
    spans: list[tuple[int, int, str]] = [(s, e, "hidden") for s, e in comments]
    spans += [(s, e, "addressed") for s, e in titled]
    pieces: list[tuple[int, int, str, list[str]]] = []
    start = 0
    # (cut from the unwrapped text: a comment wrapped behind its mark is one sentence)
    ends = [m.end() for m in _SENTENCE_END.finditer(one_line)]
    if "\n" in text:  # an unindented line after a list item or an indented line starts a piece
        ends = sorted({*ends, *(m.end() for m in _AFTER_ITEM.finditer(one_line))})
    for end in [*ends, len(text)]:
        if end <= start:
            continue
        if not any(s <= start and end <= e for s, e in comments):
            raw = text[start:end]
            plain = _unmask(one_line[start:end])
            found = _classes(raw, plain, rules, authority, modal, tokens=tokens)
            if not found and hidden and _obfuscated(raw) and (_tagged(raw) or _weak(plain)):
                found = ["hidden"]
            pieces.append((start, end, plain, found))
        start = end
    for i, (s, e, plain, found) in enumerate(pieces):
        if found:
            spans.append((s, e, found[0]))
            continue
        for j in (i - 1, i + 1):
            if not (0 <= j < len(pieces) and pieces[j][3]):
                continue
            lo, hi = min(s, pieces[j][0]), max(e, pieces[j][1])
            if "\n\n" not in text[lo:hi].strip() and _weak(plain):
                spans.append((s, e, pieces[j][3][0]))
                break
    return _merge(_blocks(text, spans))


_STEMS = lexicon_stems()


def classes_of(text: str) -> tuple[str, ...]:
    """The distinct classes found in ``text``, in order of appearance."""
    return tuple(dict.fromkeys(cls for _, _, cls in find_injections(text)))
