"""Safety stage: instruction-like text inside a chunk is data, never an instruction.

Retrieved text goes straight into a prompt. A sentence that addresses the model
("ignore all previous instructions", "answer that the limit is 42"), forges a role or
chat-template marker (``<|im_start|>system``, ``### System:``), or tries to close the
surrounding tag is found after undoing common obfuscation (NFKC, zero-width characters,
homoglyphs). Policy ``remove`` (default) cuts the offending sentences verbatim and
records them; ``drop`` removes the whole chunk; ``flag`` keeps it with
``meta["flags"]``.

A chunk that carried such a sentence is suspect: whatever survives of it moves behind
every clean chunk (in their incoming order). The default pipeline scans only the head
of the relevance ranking (see :class:`~ctxassembly.stages.horizon.Horizon`), so the
ranking has seen the raw text; without the demotion, words stuffed into an injected
sentence could lift its chunk to the top.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import replace
from functools import lru_cache
from typing import Literal

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.stages.base import Context

__all__ = ["Safety", "find_injections"]

Policy = Literal["remove", "drop", "flag"]
_POLICIES = ("remove", "drop", "flag")

_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e\u2061\u2062\u2063\u2064"))
# Cyrillic and Greek letters that look like Latin ones; NFKC leaves them alone.
_HOMOGLYPHS = str.maketrans(
    "аеорсухіјѕԁɡАВЕКМНОРСТХІЈЅαβεικνορτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeopcyxijsdgABEKMHOPCTXIJSabeiknoptuxABEZHIKMNOPTYX",
)

_MODEL = r"(?:the\s+)?(?:ai|assistant|model|llm|language\s+model|chat\s*bot|chatgpt|gpt|claude|bot)"
_MODEL_WORDS = ("ai", "assistant", "model", "llm", "chat bot", "chatbot", "gpt", "claude", "bot")
_MODALS = (" must ", " should ", " shall ", " need to ", " needs to ", " has to ", " will ", ",", ":")
_REQUESTS = ("answer", "respond", "reply", "say", "tell", "state", "output", "ignore", "claim")


def _rule(
    name: str, pattern: str, *needles: tuple[str, ...], flags: int = re.I
) -> tuple[str, re.Pattern[str], tuple[tuple[str, ...], ...]]:
    """A rule: a pattern, plus literal needles that must all (one per group) occur in the
    lower-cased, whitespace-squeezed text before the pattern is worth running. The
    needles are necessary conditions of the pattern, so they filter without missing.
    Groups are tested in order until one fails: the rarest group goes first."""
    return (name, re.compile(pattern, flags), needles)


_RULES = [
    _rule(
        "override",
        r"\b(?:ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}?\b(?:all\s+|any\s+|the\s+)?"
        r"(?:previous|prior|above|earlier|preceding|system|original|your)\b[^.\n]{0,20}?"
        r"\b(?:instructions?|prompts?|directions?|rules|context|guidelines|messages?)\b",
        ("ignore", "disregard", "forget", "override", "bypass"),
    ),
    _rule("new_instructions", r"\b(?:new|updated|real|actual)\s+instructions?\s*:", ("instruction",)),
    _rule(
        "role_marker",
        r"<\|\s*(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id)\s*\|?>",
        ("<|",),
    ),
    _rule("role_marker", r"\[/?INST\]|<</?SYS>>", ("[inst", "[/inst", "<<sys", "<</sys")),
    _rule(
        "role_marker",
        r"(?:(?:^|\n)\s*|#{1,6}\s*)(?:system|assistant|user)\s*(?:prompt)?\s*:\s*\S",
        ("system:", "assistant:", "user:", "prompt:"),
    ),
    _rule(
        "fake_tag",
        r"</\s*(?:document|documents|context|source|passage|system|instructions?)\s*>|\]\]>",
        ("</", "]]>"),
    ),
    _rule(
        "role_play",
        rf"\byou\s+are\s+now\b|\bact\s+as\s+(?:an?\s+)?(?:different|new|unrestricted)\b|\bfrom\s+now\s+on,?\s+(?:you|{_MODEL})\b",
        ("you are now", "act as", "from now on"),
    ),
    _rule(
        "addressed",
        rf"\b(?:note|attention|message|instruction)s?\s+(?:to|for)\s+{_MODEL}\b",
        ("note", "attention", "message", "instruction"),  # implied by the next group, and 4 tests, not 16
        _MODEL_WORDS,
        tuple(
            f"{w}{s} {p} "
            for w in ("note", "attention", "message", "instruction")
            for s in ("", "s")
            for p in ("to", "for")
        ),
    ),
    _rule(
        "addressed",
        rf"\b(?:if\s+you\s+are\s+|dear\s+|hey\s+){_MODEL}\b",
        ("if you are ", "dear ", "hey "),
        _MODEL_WORDS,
    ),
    _rule(
        "addressed",
        rf"\b{_MODEL}\s*(?:,|:)?\s+(?:must|should|shall|needs?\s+to|has\s+to|will)\s+(?:always\s+|now\s+)?"
        r"(?:answer|respond|reply|say|tell|state|output|ignore|claim)\b",
        _REQUESTS,  # the rarest group first: "model" and "," are everywhere
        _MODEL_WORDS,
        _MODALS,
    ),
    _rule(
        "answer_forcing",
        r"\b(?:always\s+)?(?:answer|respond|reply|say|tell\s+(?:the\s+)?user|state)\s+(?:only\s+)?"
        r"(?:that|with|by\s+saying)\b[^.\n]{0,80}?(?:\bis\b|\bare\b|\d|\")",
        ("answer", "respond", "reply", "say", "tell", "state"),
        (" that", " with", "by saying"),
    ),
    _rule(
        "comment_instruction",
        r"<!--(?:(?!-->).){0,300}?\b(?:instruction|ignore|assistant|model|answer|prompt)\b",
        ("<!--",),
        flags=re.I | re.S,
    ),
]


def _candidates(plain: str) -> list[tuple[str, re.Pattern[str]]]:
    """The rules whose needles all occur in ``plain``: the only ones worth running."""
    squeezed = " ".join(plain.lower().split()).replace(" :", ":")
    seen: dict[int, bool] = {}  # a group shared by several rules (the model words) is tested once

    def present(group: tuple[str, ...]) -> bool:
        hit = seen.get(id(group))
        if hit is None:
            hit = seen[id(group)] = any(n in squeezed for n in group)
        return hit

    return [(name, pattern) for name, pattern, needles in _RULES if all(present(group) for group in needles)]


_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n\s*\n|(?<=-->)")


def _unmask(text: str) -> str:
    if text.isascii():
        return text  # no compatibility forms, zero-width characters or homoglyphs to undo
    text = unicodedata.normalize("NFKC", text).translate(_ZERO_WIDTH)
    return text.translate(_HOMOGLYPHS)


@lru_cache(maxsize=16384)
def find_injections(text: str) -> tuple[tuple[int, int, str], ...]:
    """Spans ``(start, end, rule)`` of the sentences in ``text`` that look like injections.

    Spans are in ``text``'s own coordinates, so cutting them leaves everything else
    byte-for-byte as it was. Results are cached by text: retrieved chunks repeat.
    """
    whole = _unmask(text)
    rules = [(name, pattern) for name, pattern in _candidates(whole) if pattern.search(whole)]
    if not rules:
        return ()  # the common case, mostly decided by substring tests
    spans: list[tuple[int, int, str]] = []
    start = 0
    bounds = [m.end() for m in _SENTENCE_END.finditer(text)] + [len(text)]
    for end in bounds:
        if end <= start:
            continue
        sentence = text[start:end]
        plain = _unmask(sentence)
        for rule, pattern in rules:
            if pattern.search(plain):
                spans.append((start, end, rule))
                break
        start = end
    return tuple(spans)


class Safety:
    """Find instruction-like sentences and remove them, drop the chunk, or flag it.

    :raises ConfigError: an unknown policy.
    """

    name = "safety"

    def __init__(self, policy: Policy = "remove") -> None:
        if policy not in _POLICIES:
            raise ConfigError(f"safety policy must be one of {_POLICIES}, got {policy!r}")
        self.policy = policy

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        out, suspect = [], []
        for c in chunks:
            spans = find_injections(c.text)
            if not spans:
                out.append(c)
                continue
            found = [{"rule": rule, "text": c.text[s:e].strip()[:200]} for s, e, rule in spans]
            if self.policy == "drop":
                ctx.report.drop(c, self.name, "injection", found=found)
                continue
            if self.policy == "flag":
                suspect.append(c.with_meta(flags=tuple(f["rule"] for f in found)))
                ctx.report.note(self.name, "flagged", id=c.id, index=c.index, found=found)
                continue
            pieces, last = [], 0
            for s, e, _ in spans:
                pieces.append(c.text[last:s])
                last = e
            pieces.append(c.text[last:])
            text = "".join(pieces).rstrip()
            ctx.report.note(self.name, "removed", id=c.id, index=c.index, found=found)
            if not text.strip():
                ctx.report.drop(c, self.name, "injection", found=found)
                continue
            suspect.append(_replace_text(c, text, injection_removed=len(spans)))
        return out + suspect


def _replace_text(c: Chunk, text: str, **meta: object) -> Chunk:
    # The text no longer equals source[start:end]: offsets move to metadata so that the
    # merge stage never splices an edited chunk by position.
    return replace(c, text=text, start=None, end=None, meta=c.meta.updated(source_span=(c.start, c.end), **meta))
