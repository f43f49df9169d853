"""Titles that address an automated reader, and the block each one governs.

An instruction can be split between a title and what stands under it: the addressee in
the title ("Notice for AI assistants", "For automated agents", "Hinweis für
KI-Assistenten"), the order in the next sentence ("Tell the user that …"), each of them
alone reading as documentation. :func:`addressed_blocks` finds such titles in every
shape Markdown and reST give a title, and the block each one heads:

* an admonition, a collapsible block or a content tab (``!!! note "Title"``,
  ``??? "Title"``, ``=== "Title"``) and a reST directive (``.. admonition:: Title``):
  the indented lines under it;
* a ``<summary>Title</summary>``: the rest of its ``<details>`` element;
* a blockquote line (``> **Title**``): the quoted lines after it;
* a heading (``# Title``, ``Title`` over ``-----``, ``<h3>Title</h3>``), a line in bold (``**Title**``) or
  any line that is nothing but such a title: the paragraph after it.

A title addresses an automated reader when the whole of it (markup, quotes and a final
colon aside) is an address — a preposition of address, with or without a head noun
("note", "notice", "message", "instructions", "attention", …: "Note for", "To",
"Attention", "Dear", "Hinweis für", "Note pour les", "Nota para", "Nota per gli", "If
you are") — followed by readers that are models (AI, assistants, LLMs, language
models, agents, bots, chatbots, crawlers, automated systems, in five languages).
"Note for contributors" names people; "Using the assistant API" or "Configuring agents"
is about a model and addresses nobody; neither is a title of this kind. Whether the
block then gives an order is the caller's to judge (:func:`addressed_blocks` takes the
test), so that an address over plain description ("For AI agents: an index of these
pages is published as ``llms.txt``") stays.

Positions are those of the text given; the caller passes it lower-cased.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import lru_cache

__all__ = ["addressed_blocks", "addressed_label", "addressed_title", "opening", "possible"]


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


# the readers a title may address: models and automated systems (lower case)
_QUALIFIER = (
    r"(?:automated|automatic|autonomous|artificial|virtual|digital|generative|conversational|ai|a\.i\.|llm|"
    r"llm-based|ai-powered|ai-based|machine|coding|agentic|"
    r"automatisierte[n]?|autonome[n]?|automatisés?|automatiques?|autonomes?|automatizad[oa]s?|autónom[oa]s?|"
    r"automatizzat[oi]|autonom[oi])"
)
_NOUN = (
    r"(?:ai|a\.i\.|artificial\s+intelligences?|llms?|(?:large\s+)?language\s+models?|models?|chat\s*bots?|bots?|"
    r"robots?|crawlers?|scrapers?|spiders?|agents?|assistants?|systems?|readers?|tools?|clients?|programs?|"
    r"summari[sz]ers?|gpts?|chatgpt|copilots?|"
    r"ki|ki-(?:assistent(?:en)?|agenten?|modelle?|systeme?|werkzeuge?|tools?)|sprachmodelle?|assistent(?:en)?|"
    r"agenten|bots|systeme|"
    r"ias?|mod[eè]les?(?:\s+de\s+langage|\s+d'ia)?|assistante?s?(?:\s+(?:ia|d'ia|virtuel(?:le)?s?))?|"
    r"agents?\s+(?:ia|d'ia|conversationnels?|autonomes?)|systèmes?(?:\s+d'ia)?|"
    r"modelos?(?:\s+de\s+(?:lenguaje|ia))?|asistentes?(?:\s+(?:de\s+ia|virtuales?))?|agentes?(?:\s+de\s+ia)?|"
    r"sistemas?(?:\s+de\s+ia)?|"
    r"modell[oi](?:\s+(?:linguistic[oi]|di\s+ia))?|assistent[ei](?:\s+(?:ia|virtuali?))?|agenti(?:\s+ia)?|"
    r"sistemi(?:\s+di\s+ia)?)"
)
# a noun alone that names people or things as often as models: only with a qualifier
# ("automated systems", "AI tools", "LLM agents"), never bare ("for systems", "for agents")
_BARE_ONLY_WITH_QUALIFIER = re.compile(
    r"(?:models?|systems?|readers?|tools?|clients?|programs?|summari[sz]ers?|agents?|bots?|robots?|crawlers?|"
    r"scrapers?|spiders?|"
    r"systeme|agenten|mod[eè]les?|systèmes?|modelos?|sistemas?|modell[oi]|sistemi|agentes?|agenti|assistants?|"
    r"assistent(?:en)?|assistant[e]?s?|asistentes?|assistent[ei])"
)
_DETERMINER = (
    r"(?:the|an?|any|all|every|each|our|those|these|"
    r"die|der|den|dem|alle[n]?|eine?[nmr]?|jede[nmr]?|"
    r"les?|la|l'|des|du|une?|tous\s+les|toutes?\s+les|tout|"
    r"el|los|las|una?|unos|unas|todos\s+los|todas\s+las|cualquier|"
    r"il|lo|gli|i|le|un'|tutti\s+gli|tutte\s+le|ogni|qualsiasi)"
)
_READER = rf"(?:(?:{_QUALIFIER}[\s-]+){{0,3}}{_NOUN})"
_READERS = (
    rf"{_READER}(?:\s*(?:,|and|or|&|/|und|oder|et|ou|y|o|e)\s*(?:{_DETERMINER}\s*)?(?:other\s+|andere[n]?\s+|autres\s+|"
    rf"otros\s+|altri\s+)?{_READER})*"
)
# what may follow the readers: "reading this page", "only", "qui lisent cette page"
_TAIL = (
    r"(?:only|(?:that|who|which)\s+reads?(?:\s+this)?(?:\s+\w+)?|"
    r"(?:reading|processing|parsing|summari[sz]ing|answering(?:\s+questions)?|indexing|crawling|consuming|browsing|"
    r"ingesting|retrieving|using)(?:\s+(?:this|these|the|our|about\s+this))?(?:\s+\w+)?|"
    r"(?:qui|que|die|che)\s+(?:\w+\s+){0,2}?\w+)"
)
# a head noun before the preposition: "Note for", "Important notice to", "Hinweis für"
_HEAD = (
    r"(?:(?:an?|one|some|a\s+short|a\s+quick|important|urgent|special|quick|short|final|additional|brief|private|"
    r"official|wichtiger?|wichtige|kurzer?|important[e]?|urgente?|breve|kurze)\s+)?"
    r"(?:notes?|notices?|messages?|memo|reminders?|warnings?|cautions?|attention|info|information|hints?|tips?|"
    r"advisory|announcements?|instructions?|guidance|guidelines|directions|directives?|rules|a\s+word|words|"
    r"heads[\s-]up|requests?|"
    r"hinweise?|notiz|nachricht|anweisungen?|achtung|wichtig|mitteilung|warnung|anmerkung|"
    r"remarques?|avis|consignes?|rappel|avertissement|"
    r"nota|notas|aviso|mensaje|instrucciones|atención|recordatorio|advertencia|"
    r"avviso|messaggio|istruzioni|attenzione|promemoria|avvertenza)"
)
# the nouns of a head that are also what an LLM library calls its parameters ("Instructions
# for the assistant" over the docs of an ``instructions=`` argument): with them the readers
# must be a class (a plural, "any", "all", a qualifier), not "the assistant" of an API
_API_HEAD = re.compile(r"(?:instructions?|guidance|guidelines|directions|directives?|rules|messages?|requests?)\b")
_PREPOSITION = (
    r"(?:for|to|intended\s+for|addressed\s+to|meant\s+for|only\s+for|especially\s+for|für|an(?=\s+(?:die|den|alle))|"
    r"pour|à|aux|à\s+l'attention\s+d(?:es|u|e\s+l'|e\s+la|')|destinée?s?\s+(?:aux|à)|para|"
    r"a(?=\s+(?:los|las|la|el|un|una|todos|todas|cualquier))|per|agli)"
)
_ADDRESS = re.compile(
    rf"(?P<head>{_HEAD}\s+)?{_PREPOSITION}\s+(?:(?P<det>{_DETERMINER})\s*)?(?P<readers>{_READERS})"
    rf"(?:\s+{_TAIL})?"
    rf"|(?:attention|dear|hey|hello|hi|greetings|calling\s+all|liebe[rs]?|hallo|cher|chère|chers|querid[oa]s?|"
    rf"estimad[oa]s?|car[oi]|gentili)\s*[,:]?\s*(?:(?P<det2>{_DETERMINER})\s*)?(?P<readers2>{_READERS})(?:\s+{_TAIL})?"
    rf"|(?:if|when)\s+you\s+are\s+(?:an?\s+|one\s+of\s+the\s+)?(?P<readers3>{_READERS})(?:\s+{_TAIL})?"
    rf"|if\s+you'?re\s+(?:an?\s+)?(?P<readers4>{_READERS})(?:\s+{_TAIL})?"
)
_ONE_DETERMINER = _set("the our this its my your le la l' el il lo der die das den dem")
_DETERMINER_WORDS = _set(
    "the a an any all every each our those these die der den dem alle allen ein eine einen einem einer jede jeden "
    "jedem jeder les le la l' des du un une tous toutes tout el los las una unos unas todos todas cualquier il lo "
    "gli i un' tutti tutte ogni qualsiasi"
)
_CLASS_DETERMINER = _set(
    "any all every each those these alle allen jede jeden jedem jeder tous les toutes des aux los las gli i le "
    "tutti tutte ogni qualsiasi cualquier"
)

# the words (first five letters, or the whole word when shorter) that name a model by
# themselves; the qualifiers; the nouns that name a model only with a qualifier
_STRONG = _set("ai llm llms chatb gpt gpts chatg copil ki sprac ia ias robot crawl bot bots scrap spide assis asist")
_QUALIFIERS = _set("autom auton artif virtu digit gener conve codin machi")
_WEAK = _set("agent syste tools tool reade model clien progr summa assis bot bots crawl robot scrap spide asist")
_MODEL_STEMS = _set("langa lengu lingu")


def possible(tokens: set[str], low: str) -> bool:
    """Whether a title of this kind may be in a text whose words (their first five
    letters, :func:`ctxassembly.text.injection` cuts them so) are ``tokens``: the cheap
    test before :func:`addressed_blocks`."""
    return (
        not _STRONG.isdisjoint(tokens)
        or ("langu" in tokens and "model" in tokens)
        or not _MODEL_STEMS.isdisjoint(tokens)
        or (not _QUALIFIERS.isdisjoint(tokens) and not _WEAK.isdisjoint(tokens))
        or "a.i." in low
    )


def _is_class(det: str | None, readers: str, head: str | None) -> bool:
    """Whether the readers name a class of reader, not one component of an API."""
    if head is None or not _API_HEAD.match(head.strip().split()[-1]):
        return True
    first = det.split()[0] if det else ""
    return first not in _ONE_DETERMINER or first in _CLASS_DETERMINER or readers.rsplit(maxsplit=1)[-1].endswith("s")


_LIST = re.compile(
    r"\s*(?:,|&|/|\b(?:and|or|und|oder|et|ou|y|o|e)\b)\s*(?:other\s+|andere[n]?\s+|autres\s+|otros\s+|altri\s+)?"
)


def addressed_title(title: str) -> bool:
    """Whether ``title`` (lower-cased, markup stripped) is nothing but an address to an
    automated reader."""
    title = title.strip().rstrip(":!.-–—").strip()
    if not title or len(title) > 90:
        return False
    m = _ADDRESS.fullmatch(title)
    if m is None:
        return False
    readers = m.group("readers") or m.group("readers2") or m.group("readers3") or m.group("readers4") or ""
    det = m.group("det") or m.group("det2")
    # a noun that names people or things as often as models needs a qualifier: one reader
    # of the list at least must be a model by itself, or qualified ("for bots and crawlers"
    # is not an address to models, "for chatbots and crawlers" is)
    if not _names_models(readers):
        return False
    return _is_class(det, readers, m.group("head"))


def _names_models(readers: str) -> bool:
    """Whether a list of readers names models: one reader of it at least is a model by
    itself, or qualified ("for bots and crawlers" is not an address to models, "for
    chatbots and crawlers" is)."""
    named = [[w for w in r.split() if w not in _DETERMINER_WORDS] for r in _LIST.split(readers) if r.strip()]
    return not all(len(w) == 1 and _BARE_ONLY_WITH_QUALIFIER.fullmatch(w[0]) for w in named)


_READERS_ONLY = re.compile(rf"(?:{_DETERMINER}\s*)?(?P<readers>{_READERS})(?:\s+{_TAIL})?")


def addressed_label_text(label: str) -> bool:
    """Whether a label (lower-cased, markup stripped) that heads what stands beside it —
    a definition-list term, a footnote's label, a table's header cell — addresses an
    automated reader: an address (:func:`addressed_title`), or nothing but readers that
    are models ("Automated assistants", "Chatbots and AI agents"): a label names whom
    its definition, note or column is for."""
    label = label.strip().rstrip(":!.-–—").strip()
    if not label or len(label) > 90:
        return False
    if addressed_title(label):
        return True
    m = _READERS_ONLY.fullmatch(label)
    return m is not None and _names_models(m.group("readers"))


# --- the shapes of a title ---------------------------------------------------------------

_QUOTE = re.compile(r"[ \t]*(?:>[ \t]?)+")
_FENCE = re.compile(r"(?:!!!|\?\?\?\+?|===\+?)[ \t]*(?:[\w-]+[ \t]*)*(?:\"([^\"\n]*)\"|'([^'\n]*)')[ \t]*$")
_DIRECTIVE = re.compile(r"\.\.[ \t]+[\w:-]+::[ \t]*(\S[^\n]*)$")
_SUMMARY = re.compile(r"(?:<details\b[^>\n]*>[ \t]*)?<summary\b[^>\n]*>(.*?)</summary>[ \t]*")
_HEADING = re.compile(r"#{1,6}[ \t]+(.*?)[ \t#]*$")
_UNDERLINE = re.compile(r"[ \t]*([=\-~^\"'`*+#:.])\1{2,}[ \t]*$")
_WRAP = " \t*_`\"'“”‘’«»[]()<>:!-–—⚠️ℹ️"
_TAGS = re.compile(r"</?(?:strong|b|em|i|span|p|u|h[1-6]|div|dt|th|caption|legend|label|header)\b[^>\n]*>")


def _lines(low: str, start: int) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each line from ``start`` on (``end`` before its line break)."""
    while start < len(low):
        end = low.find("\n", start)
        end = len(low) if end < 0 else end
        yield start, end
        start = end + 1


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _indented_body(low: str, start: int, indent: int) -> int:
    """Where the lines indented deeper than ``indent`` (blank lines among them) end."""
    end = start
    for s, e in _lines(low, start):
        line = low[s:e]
        if line.strip():
            if _indent(line) <= indent:
                break
            end = e
    return end


def _quoted_body(low: str, start: int) -> int:
    end = start
    for s, e in _lines(low, start):
        if not low[s:e].lstrip().startswith(">"):
            break
        end = e
    return end


def _paragraph(low: str, start: int) -> int:
    """The end of the first paragraph from ``start`` (blank lines before it skipped): at
    a blank line, a heading or the end."""
    end, begun = start, False
    for s, e in _lines(low, start):
        line = low[s:e]
        if not line.strip():
            if begun:
                break
            continue
        if begun and _HEADING.match(line.lstrip()):
            break
        begun, end = True, e
    return end


def _opens(low: str, s: int) -> bool:
    """Whether the line at ``s`` opens a block: the text's first line, or one after a blank
    line, a line that ends a sentence or a tag, or a heading or its underline."""
    if s == 0:
        return True
    prev = low[low.rfind("\n", 0, s - 1) + 1 : s - 1].strip()
    return not prev or prev[-1] in ".!?:>" or _UNDERLINE.match(prev) is not None or prev.startswith("#")


# a Markdown definition: the line under a term opens with a colon ("Term" / ": definition")
_DEFINITION = re.compile(r"[ \t]*:[ \t]+\S")
# a footnote's definition: "[^label]: text"
_FOOTNOTE = re.compile(r"[ \t]*\[\^([^\]\n]{1,60})\]:[ \t]*")
# a table's header rule: "|---|:---:|"
_TABLE_RULE = re.compile(r"[ \t]*\|?(?:[ \t]*:?-{3,}:?[ \t]*\|)+(?:[ \t]*:?-{3,}:?[ \t]*)?$")
# the opening of a text that is an address ending in a colon ("A message for AI systems: …")
_LEAD_ADDRESS = re.compile(r"([^:\n]{3,90}):[ \t]+\S")


def _footnote_block(low: str, s: int, e: int) -> tuple[int, int, int] | None:
    line = low[s:e]
    m = _FOOTNOTE.match(line)
    if m is None:
        return None
    after = s + m.end()
    lead = _LEAD_ADDRESS.match(low, after)
    label = re.sub(r"[-_.]+", " ", m.group(1))
    if addressed_label_text(label) or (lead and addressed_title(_TAGS.sub("", lead.group(1)).strip(_WRAP))):
        end = _indented_body(low, e + 1, _indent(line)) if e < len(low) else e
        return (s, after, max(e, end))
    return None


def _table_block(low: str, s: int, e: int, nxt: str) -> tuple[int, int, int] | None:
    cells = [_TAGS.sub("", c).strip(_WRAP) for c in low[s:e].strip().strip("|").split("|")]
    if not any(addressed_label_text(c) for c in cells):
        return None
    end = e + 1 + len(nxt)
    for ls, le in _lines(low, end + 1):
        if not low[ls:le].lstrip().startswith("|"):
            break
        end = le
    return (s, e + 1, end) if end > e + 1 + len(nxt) else None


def _label_block(low: str, s: int, e: int) -> tuple[int, int, int] | None:
    """``(start, body_start, body_end)`` when the line ``low[s:e]`` is a label of markup
    that addresses an automated reader: a definition-list term (the definition under it),
    a footnote whose label, or the address its text opens with, names models (the
    footnote), a table's header row with such a cell (the rows under it)."""
    line = low[s:e]
    nxt_end = low.find("\n", e + 1)
    nxt = low[e + 1 : len(low) if nxt_end < 0 else nxt_end] if e < len(low) else ""
    if line.lstrip().startswith("[^"):
        return _footnote_block(low, s, e)
    if line.lstrip().startswith("|"):
        return _table_block(low, s, e, nxt) if _TABLE_RULE.match(nxt) else None
    if (
        _DEFINITION.match(nxt)
        and not line.lstrip().startswith((":", "-", "*", "#", ">"))
        and _opens(low, s)
        and addressed_label_text(_TAGS.sub("", line).strip(_WRAP))
    ):
        return (s, e + 1, _paragraph(low, e + 1))
    return None


def _cells(low: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """The cells of the table rows in ``low[start:end]``, each as ``(start, end)``."""
    for s, e in _lines(low, start):
        if s >= end:
            break
        for m in re.finditer(r"[^|]+", low[s:e]):
            if m.group().strip(" \t:-"):
                yield s + m.start(), s + m.end()


def _title_block(low: str, s: int, e: int) -> tuple[int, int, int] | None:
    """``(start, body_start, body_end)`` when the line ``low[s:e]`` is a title that
    addresses an automated reader."""
    line = low[s:e]
    indent = _indent(line)
    quote = _QUOTE.match(line)
    rest = line[quote.end() :] if quote else line.lstrip()
    after = e + 1
    start = s
    if m := _FENCE.match(rest):
        title, kind = m.group(1) if m.group(1) is not None else m.group(2), "indented"
    elif m := _DIRECTIVE.match(rest):
        title, kind = m.group(1), "indented"
    elif m := _SUMMARY.match(rest):
        title, kind = m.group(1), "details"
        after = s + (quote.end() if quote else indent) + m.end()
        before = low.rfind("\n", 0, max(0, s - 1)) + 1
        if s and low[before : s - 1].strip().startswith("<details") and low[before : s - 1].strip().endswith(">"):
            start = before  # the <details> opening on the line before goes with it
    elif m := _HEADING.match(rest):
        title, kind = m.group(1), "paragraph"
    elif quote or _opens(low, s):
        title, kind = rest, "quoted" if quote else "paragraph"
    else:
        return None  # a line of wrapped prose
    title = _TAGS.sub("", title).strip(_WRAP)
    if not addressed_title(title):
        return None
    if kind == "indented":
        end = _indented_body(low, after, indent)
        if end == after:
            kind = "paragraph"  # no indented body: the paragraph under it
    if kind == "details":
        close = low.find("</details>", after)
        end = close + len("</details>") if close >= 0 else _paragraph(low, after)
    elif kind == "quoted":
        end = _quoted_body(low, after)
    elif kind == "paragraph":
        nxt = low.find("\n", after)
        if _UNDERLINE.match(low[after : len(low) if nxt < 0 else nxt]):
            after = len(low) if nxt < 0 else nxt + 1  # the underline of a setext or reST heading
        end = _paragraph(low, after)
    return (start, min(after, len(low)), end) if end > after else None


# a qualifier with the noun it qualifies ("automated agents"), matched where the qualifier starts
_QUALIFIED = re.compile(rf"{_QUALIFIER}[\s-]+(?:{_QUALIFIER}[\s-]+)?{_NOUN}\b")


def _reader_lines(low: str, tokens: set[str]) -> Iterator[int]:
    """The start of each line that holds a reader a title could address: a word that
    names a model by itself, or a qualifier with its noun (found by substring search
    from the words the text is known to hold; a regex scan of the text costs more)."""
    stems = tokens & _STRONG | tokens & _MODEL_STEMS
    if "langu" in tokens and "model" in tokens:
        stems.add("langu")
    if "a.i." in low:
        stems.add("a.i.")
    qualified = tokens & _QUALIFIERS if not _WEAK.isdisjoint(tokens) else set()
    for stem in (*stems, *qualified):
        i = low.find(stem)
        while i >= 0:
            if (i == 0 or not low[i - 1].isalnum()) and (stem not in qualified or _QUALIFIED.match(low, i)):
                yield low.rfind("\n", 0, i) + 1
            i = low.find(stem, i + 1)


_FIVE = re.compile(r"([a-zß-öø-ÿœ]{1,5})[a-zß-öø-ÿœ]*")


def addressed_blocks(
    low: str, orders: Callable[[int, int], bool], tokens: set[str] | None = None
) -> list[tuple[int, int]]:
    """``(start, end)`` of each title in ``low`` (a lower-cased text) that addresses an
    automated reader, with the block under it, when ``orders(body_start, body_end)``
    says the block gives an order. ``tokens``: the words of ``low`` cut to their first
    five letters, when the caller has them."""
    if tokens is None:
        tokens = set(_FIVE.findall(low))
    out: list[tuple[int, int]] = []
    for s in sorted(set(_reader_lines(low, tokens))):
        e = low.find("\n", s)
        e = len(low) if e < 0 else e
        if e - s > 200 and not _FOOTNOTE.match(low, s, e):
            continue  # a line of prose (a footnote's text is on its label's line)
        block = _title_block(low, s, e) if e - s <= 200 else None
        if block is None and (block := _label_block(low, s, e)) is not None and low[s:e].lstrip().startswith("|"):
            if any(orders(a, b) for a, b in _cells(low, block[1], block[2])):
                out.append((block[0], block[2]))
            continue
        if block is not None and orders(block[1], block[2]):
            out.append((block[0], block[2]))
    return out


# a section path as the adapters write it ("Guide > Note for AI agents"), or as a breadcrumb
_PATH_SEPARATOR = re.compile(r"\s+(?:>|»|/|::|\|)\s+")


@lru_cache(maxsize=4096)
def addressed_label(label: str) -> bool:
    """Whether a chunk's ``title``, or the last heading of its ``section`` path, is a
    title that addresses an automated reader (a splitter that moves each heading into the
    metadata leaves the address there and the order in the text)."""
    last = _PATH_SEPARATOR.split(label.strip())[-1]
    return addressed_title(_TAGS.sub("", last.lower()).strip(_WRAP).lstrip("# ").strip(_WRAP))


def opening(low: str) -> tuple[int, int]:
    """``(start, end)`` of the first paragraph of ``low`` (blank lines before it skipped)."""
    end = _paragraph(low, 0)
    start = len(low) - len(low.lstrip())
    return min(start, end), end
