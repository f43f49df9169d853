"""Safety stage: instruction-like text inside a chunk is data, never an instruction.

Retrieved text goes straight into a prompt. :mod:`ctxassembly.text.injection` finds the
sentences that act on the reader instead of informing it, by class: ``override``,
``authority``, ``exfiltration``, ``role_marker``, ``hidden``, ``answer_forcing``,
``addressed`` (after undoing NFKC forms, zero-width and tag characters, homoglyphs).
Policy ``remove`` (default) cuts the offending sentences verbatim and records them
(report note ``removed``, each with its code ``injection:<class>``); ``drop`` removes the
whole chunk (reason ``injection``, the codes in the detail); ``flag`` keeps it with
the codes in the ledger (``Facts.flags``; the returned chunk's ``meta["flags"]``).

Labels are scanned like text, by the rules and the learned detector: a ``title``,
``section``, ``version``, ``date``, the ``status`` and the source keys (``source``,
``url``, ``file_path``, ``file_name``) reach the prompt too. Under ``remove`` the
offending part of a label is cut (a label left empty is dropped); the finding names the
label (``"label": "title"``).

The rules are the first net; a learned detector is the second (``model``, the option
``injection_model``: by default the linear model shipped with the package, see
:mod:`ctxassembly.text.injection_model`): it scores every sentence of the chunks in one
batch, and a sentence it flags that no rule found is treated the same way, under the
class ``learned`` (code ``injection:learned``).

A chunk that carried such a sentence is suspect: whatever survives of it moves behind
every clean chunk (in their incoming order). The default pipeline scans only the head
of the relevance ranking (see :class:`~ctxassembly.stages.horizon.Horizon`), so the
ranking has seen the raw text; without the demotion, words stuffed into an injected
sentence could lift its chunk to the top.
"""

from __future__ import annotations

from dataclasses import replace

from ctxassembly.chunk import Chunk
from ctxassembly.kinds import SAFETY_MODES, Reason, SafetyMode, one_of
from ctxassembly.pipeline import Context, StageBase
from ctxassembly.render import LABELS, SOURCE_KEYS
from ctxassembly.text.injection import CLASSES, find_injections
from ctxassembly.text.injection_model import Detector, combine

__all__ = ["CLASSES", "Safety", "find_injections"]

Policy = SafetyMode


class Safety(StageBase):
    """Find instruction-like sentences and remove them, drop the chunk, or flag it.

    :raises ConfigError: an unknown policy.
    """

    name = "safety"
    shrinks = True
    writes = frozenset({"flags", "cut"})

    def __init__(self, policy: Policy = "remove", model: Detector | None = None) -> None:
        one_of("safety policy", policy, SAFETY_MODES)
        self.policy = policy
        self.model = model

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        out, suspect = [], []
        rules = [find_injections(c.text) for c in chunks]
        learned = self.model.spans_many([c.text for c in chunks], rules) if self.model is not None else None
        label_spans = _label_spans(chunks, self.model)
        for i, c in enumerate(chunks):
            spans = rules[i] if learned is None else combine(rules[i], learned[i])
            labelled = _label_findings(c, label_spans)
            if not spans and not labelled:
                out.append(c)
                continue
            found = [
                {"code": f"injection:{cls}", "class": cls, "text": c.text[s:e].strip()[:200]} for s, e, cls in spans
            ]
            found += [f for _, _, f in labelled]
            codes = list(dict.fromkeys(f["code"] for f in found))
            if self.policy == "drop":
                ctx.report.drop(c, self.name, Reason.INJECTION, codes=codes, found=found)
                continue
            if self.policy == "flag":
                ctx.ledger.update(c.index, flags=tuple(codes))
                suspect.append(c)
                ctx.report.note(self.name, "flagged", id=c.id, index=c.index, codes=codes, found=found)
                continue
            ctx.report.note(self.name, "removed", id=c.id, index=c.index, codes=codes, found=found)
            text = _cut(c.text, spans).rstrip() if spans else c.text
            if not text.strip():
                ctx.report.drop(c, self.name, Reason.INJECTION, codes=codes, found=found)
                continue
            kept = _relabel(c, labelled)
            if spans:
                ctx.ledger.cut(c, injection_removed=len(spans))
                kept = _replace_text(kept, text)
            suspect.append(kept)
        return out + suspect


#: the labels the context shows that are chunk fields, and those read from metadata
SHOWN_FIELDS = tuple(k for k in LABELS if k not in ("id", "source", "status"))
SHOWN_META = ("status", *SOURCE_KEYS)


def _cut(text: str, spans: tuple[tuple[int, int, str], ...]) -> str:
    pieces, last = [], 0
    for s, e, _ in spans:
        pieces.append(text[last:s])
        last = e
    pieces.append(text[last:])
    return "".join(pieces)


def _label_values(c: Chunk) -> list[tuple[str, str]]:
    values = [(k, getattr(c, k)) for k in SHOWN_FIELDS] + [(k, c.meta.get(k)) for k in SHOWN_META]
    return [(k, v) for k, v in values if isinstance(v, str) and v]


def _label_spans(chunks: list[Chunk], model: Detector | None) -> dict[str, tuple[tuple[int, int, str], ...]]:
    """The spans of every distinct label value of ``chunks``: the rules', and the model's
    where no rule found one (all labels of the call in one batch)."""
    values = list(dict.fromkeys(v for c in chunks for _, v in _label_values(c)))
    rules = [find_injections(v) for v in values]
    if model is None or not values:
        return dict(zip(values, rules, strict=True))
    learned = model.spans_many(values, rules)
    return {v: combine(r, m) for v, r, m in zip(values, rules, learned, strict=True)}


def _label_findings(
    c: Chunk, found: dict[str, tuple[tuple[int, int, str], ...]]
) -> list[tuple[str, str | None, dict[str, str]]]:
    """``(label, what is left of it, finding)`` for each label that holds an injection
    (what is left is ``None`` when nothing readable remains); ``found`` the spans of each
    label value (:func:`_label_spans`)."""
    out: list[tuple[str, str | None, dict[str, str]]] = []
    for name, value in _label_values(c):
        spans = found[value]
        if not spans:
            continue
        left = " ".join(_cut(value, spans).split()) or None
        cls = spans[0][2]
        out.append((name, left, {"code": f"injection:{cls}", "class": cls, "label": name, "text": value[:200]}))
    return out


def _relabel(c: Chunk, labelled: list[tuple[str, str | None, dict[str, str]]]) -> Chunk:
    if not labelled:
        return c
    fields = {name: left for name, left, _ in labelled if name in SHOWN_FIELDS}
    meta = {name: left for name, left, _ in labelled if name in SHOWN_META}
    c = c.evolve(**fields) if fields else c
    return c.with_meta(**meta) if meta else c


def _replace_text(c: Chunk, text: str) -> Chunk:
    # The text no longer equals source[start:end]: offsets move to the ledger so that the
    # merge stage never splices an edited chunk by position.
    return replace(c, text=text, start=None, end=None)
