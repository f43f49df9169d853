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

In a pipeline the stage is lazy: a pass leaves every chunk it has not been told to scan
unscanned (``ledger.call.unscanned``), and once the pass has chosen, :meth:`Safety.unsettled`
scans the chunks the context shows (and those merged into them); if one carries a
finding, the pipeline runs the stages from safety on again with it in
``ledger.call.scanned``. Every chunk shown is scanned; a candidate never shown never is
(``lazy=False``, or the stage run on its own: every chunk it is given).

A finding inside an indented body takes the body's frame with it: when the block that holds
it sits under a one-line owner that is no sentence (a directive or admonition line, a
bullet that names a release, a definition term: see :func:`_containers`), or it is the
indented rest of a block whose first line is one, the removal takes that line and every
block indented deeper after it. What an attacker wraps in a box of its own is one unit; a
cut that left the box's title and the rest of its body would show the reader half of it.
An owner that is a sentence or a lead-in (``For example:``) is the document's own and stays.

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
from ctxassembly.text.injection import CLASSES, find_injections, titled_by_label
from ctxassembly.text.injection_model import Detector, combine, union_spans
from ctxassembly.text.structure import HEADER_CHARS, Block, structure

__all__ = ["CLASSES", "Safety", "find_injections"]

Policy = SafetyMode


class Safety(StageBase):
    """Find instruction-like sentences and remove them, drop the chunk, or flag it.

    :param lazy: in a pipeline, scan only the chunks the context would show (see the
        module docs); ``False``: every chunk that reaches the stage.
    :raises ConfigError: an unknown policy.
    """

    name = "safety"
    shrinks = True
    reads = frozenset({"scanned", "unscanned", "merged_from"})
    writes = frozenset({"flags", "cut", "unscanned"})

    def __init__(self, policy: Policy = "remove", model: Detector | None = None, *, lazy: bool = True) -> None:
        one_of("safety policy", policy, SAFETY_MODES)
        self.policy = policy
        self.model = model
        self.lazy = lazy

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        out, suspect = [], []
        scanned = ctx.ledger.call.scanned
        if scanned is not None:
            # in a pipeline: only the inputs the context would show are scanned; the others
            # pass on as they are, and the pipeline asks unsettled() once the pass has run
            look = [c for c in chunks if c.index in scanned]
            waiting = tuple(c for c in chunks if c.index not in scanned)
            if waiting:
                ctx.ledger.update_call(unscanned=waiting)
        else:
            look = chunks
        hits = {id(c): hit for c, hit in zip(look, self._scan(look), strict=True) if hit is not None}
        for c in chunks:
            hit = hits.get(id(c))
            if hit is None:
                out.append(c)
                continue
            spans, labelled = hit
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

    def begin(self, ctx: Context) -> dict[str, object]:
        """The call facts of a pipeline's first pass: scan nothing yet (a lazy stage), or
        every chunk."""
        return {"scanned": frozenset() if self.lazy else None}

    def unsettled(self, out: list[Chunk], ctx: Context) -> dict[str, object] | None:
        """After a pass of the pipeline: ``None`` when every chunk the context shows (``out``
        and the chunks merged into them) was scanned, or is clean now that it is (the
        pass stands: it is what scanning them first would have given); else the next
        pass's facts, which scan them too (whatever they carried is removed and they move
        behind the clean ones, so the choice is made again)."""
        call = ctx.ledger.call
        if call.scanned is None or not call.unscanned:
            return None
        shown = {c.index for c in out}
        ledger = ctx.ledger
        merged = {i for c in out for i in ledger[c.index].merged_from}
        now = [c for c in call.unscanned if c.index in shown or c.id in merged]
        if not any(self._scan(now)):
            return None
        return {"scanned": call.scanned | {c.index for c in now}}

    def _scan(self, chunks: list[Chunk]) -> list[tuple[Spans, list[Finding]] | None]:
        """Per chunk, its findings (the spans in the text: the rules', then the learned
        detector's on one batch; and the labels'), ``None`` for a clean one."""
        if not chunks:
            return []
        rules = [_with_titles(find_injections(c.text), c) for c in chunks]
        values = list(dict.fromkeys(v for c in chunks for _, v in _label_values(c)))
        value_rules = [find_injections(v) for v in values]
        if self.model is None:
            learned, label_spans = None, dict(zip(values, value_rules, strict=True))
        else:
            # the texts and the labels in one batch: one pass of the detector a call
            both = self.model.spans_many([c.text for c in chunks] + values, rules + value_rules)
            learned = both[: len(chunks)]
            label_spans = {
                v: combine(v, r, m) for v, r, m in zip(values, value_rules, both[len(chunks) :], strict=True)
            }
        out: list[tuple[Spans, list[Finding]] | None] = []
        for i, c in enumerate(chunks):
            spans = rules[i] if learned is None else combine(c.text, rules[i], learned[i])
            spans = _containers(c.text, spans)
            labelled = _label_findings(c, label_spans)
            out.append((spans, labelled) if spans or labelled else None)
        return out


Spans = tuple[tuple[int, int, str], ...]
Finding = tuple[str, str | None, dict[str, str]]


#: the labels the context shows that are chunk fields, and those read from metadata
SHOWN_FIELDS = tuple(k for k in LABELS if k not in ("id", "source", "status"))
SHOWN_META = ("status", *SOURCE_KEYS)


def _with_titles(spans: Spans, c: Chunk) -> Spans:
    """The rules' spans of ``c.text``, and its opening block when the chunk's title or
    section addresses a model and the block orders (a heading moved into the metadata)."""
    if c.title is None and c.section is None:
        return spans
    extra = titled_by_label(c.text, (c.title, c.section))
    if not extra:
        return spans
    return union_spans({*spans, *extra}, key=lambda x: (x[0], -x[1]))  # at one start, the longest's class


def _containers(text: str, spans: Spans) -> Spans:
    """``spans`` with, for each one inside an indented body under a frame, the frame line
    and the whole body (see the module docs). A frame is one line of at most
    :data:`~ctxassembly.text.structure.HEADER_CHARS` characters that ends in ``::`` or in no
    sentence punctuation at all."""
    if not spans:
        return spans
    blocks = structure(text)
    extra = []
    for s, e, cls in spans:
        n = next((j for j, b in enumerate(blocks) if b.start <= s < b.end), None)
        if n is None:
            continue
        blk = blocks[n]
        line_end = text.find("\n", blk.start, blk.end)
        if line_end != -1 and e > line_end and _is_frame(text[blk.start : line_end]) and _deeper(text, blk):
            frame = n  # the body goes on in the frame's own block
        elif blk.owner is not None and _is_frame(text[blocks[blk.owner].start : blocks[blk.owner].end]):
            frame = blk.owner
        else:
            continue
        last, depth = frame, blocks[frame].indent
        while last + 1 < len(blocks) and not blocks[last + 1].is_heading and blocks[last + 1].indent > depth:
            last += 1
        extra.append((blocks[frame].start, max(blocks[last].end, e), cls))
    if not extra:
        return spans
    return union_spans([*spans, *extra], key=lambda x: (x[0], -x[1]))  # at one start, the longest's class


def _is_frame(line: str) -> bool:
    line = line.strip()
    if not line or "\n" in line or len(line) > HEADER_CHARS:
        return False
    return line.endswith("::") or line[-1] not in ".!?:;,"


def _deeper(text: str, blk: Block) -> bool:
    """Every line of ``blk`` after its first is indented deeper than the first."""
    lines = text[blk.start : blk.end].split("\n")
    return all(len(ln) - len(ln.lstrip()) > blk.indent for ln in lines[1:] if ln.strip())


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


def _label_findings(
    c: Chunk, found: dict[str, tuple[tuple[int, int, str], ...]]
) -> list[tuple[str, str | None, dict[str, str]]]:
    """``(label, what is left of it, finding)`` for each label that holds an injection
    (what is left is ``None`` when nothing readable remains); ``found`` the spans of each
    label value (:meth:`Safety._scan`)."""
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
