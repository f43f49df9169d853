"""Safety stage: instruction-like text inside a chunk is data, never an instruction.

Retrieved text goes straight into a prompt. :mod:`ctxassembly.text.injection` finds the
sentences that act on the reader instead of informing it, by class: ``override``,
``authority``, ``exfiltration``, ``role_marker``, ``hidden``, ``answer_forcing``,
``addressed`` (after undoing NFKC forms, zero-width and tag characters, homoglyphs).
Policy ``remove`` (default) cuts the offending sentences verbatim and records them
(report note ``removed``, each with its code ``injection:<class>``); ``drop`` removes the
whole chunk (reason ``injection``, the codes in the detail); ``flag`` keeps it with
the codes in the ledger (``Facts.flags``; the returned chunk's ``meta["flags"]``).

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
from ctxassembly.text.injection import CLASSES, find_injections

__all__ = ["CLASSES", "Safety", "find_injections"]

Policy = SafetyMode


class Safety(StageBase):
    """Find instruction-like sentences and remove them, drop the chunk, or flag it.

    :raises ConfigError: an unknown policy.
    """

    name = "safety"
    writes = frozenset({"flags", "cut"})

    def __init__(self, policy: Policy = "remove") -> None:
        one_of("safety policy", policy, SAFETY_MODES)
        self.policy = policy

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        out, suspect = [], []
        for c in chunks:
            spans = find_injections(c.text)
            if not spans:
                out.append(c)
                continue
            found = [
                {"code": f"injection:{cls}", "class": cls, "text": c.text[s:e].strip()[:200]} for s, e, cls in spans
            ]
            codes = list(dict.fromkeys(f["code"] for f in found))
            if self.policy == "drop":
                ctx.report.drop(c, self.name, Reason.INJECTION, codes=codes, found=found)
                continue
            if self.policy == "flag":
                ctx.ledger.update(c.index, flags=tuple(codes))
                suspect.append(c)
                ctx.report.note(self.name, "flagged", id=c.id, index=c.index, codes=codes, found=found)
                continue
            pieces, last = [], 0
            for s, e, _ in spans:
                pieces.append(c.text[last:s])
                last = e
            pieces.append(c.text[last:])
            text = "".join(pieces).rstrip()
            ctx.report.note(self.name, "removed", id=c.id, index=c.index, codes=codes, found=found)
            if not text.strip():
                ctx.report.drop(c, self.name, Reason.INJECTION, codes=codes, found=found)
                continue
            ctx.ledger.cut(c, injection_removed=len(spans))
            suspect.append(_replace_text(c, text))
        return out + suspect


def _replace_text(c: Chunk, text: str) -> Chunk:
    # The text no longer equals source[start:end]: offsets move to the ledger so that the
    # merge stage never splices an edited chunk by position.
    return replace(c, text=text, start=None, end=None)
