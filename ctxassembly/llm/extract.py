"""LLM evidence extraction: a model picks the sentences that support an answer; only text
that is really in the source survives, with the conditions it depends on.

1. **Ask** (one call per chunk, concurrently, at most ``concurrency`` at a time): copy the
   sentences of this chunk that help answer the question, as
   ``{"chunk_id": "...", "evidence": ["...", ...]}``. The reply is parsed leniently
   (:func:`~ctxassembly.llm.parsing.parse_json`); a reply with no JSON at all is read one
   sentence a line.
2. **Verify** every returned sentence: it must occur verbatim in its source chunk after
   whitespace normalisation (:func:`~ctxassembly.llm.parsing.locate`). Anything else is
   discarded and recorded in the report (``event="discarded"``) — an invented sentence
   never reaches the context. When a discarded sentence is a near copy of one source
   sentence (the model dropped a "not", changed a number), that *source* sentence is
   restored instead and the facts the model lost are recorded.
3. **Restore** what the kept sentences depend on, with the rules of the deterministic
   :class:`~ctxassembly.stages.extract.Extract` stage (:func:`~ctxassembly.text.segments.segment`
   and :func:`~ctxassembly.text.cues.dependencies`): the section heading, the
   enclosing directive (``.. versionchanged:: 5.1``), the lead-in of a list or code
   block, and neighbouring sentences that state a condition (a negation, "only", a
   number with a unit, a version). A partial sentence grows to its whole unit.
4. **Write** the kept units as verbatim slices in reading order (:func:`~ctxassembly.text.selection.write_units`):
   nothing is rewritten. The ledger's ``llm_extract`` (the returned chunk's
   ``meta["llm_extract"]``) holds the verified evidence, the restored units and the
   discarded sentences.

A chunk the model fails on (an error, a timeout, no parseable answer) stays whole and the
failure is noted; a chunk for which the model finds no evidence stays whole too unless
``on_empty="drop"``. Bypass rules (:class:`~ctxassembly.llm.caller.Bypass`) skip the model for
short precise candidate sets, verbatim-required text, tables, short chunks, or when the
latency budget says so; every bypass is a note in the report.

Usage::

    from ctxassembly import Assembler
    from ctxassembly.llm.readers import SmolLM2Reader
    stage = LLMExtract(SmolLM2Reader(max_new_tokens=96), concurrency=2)
    # as an option of the default pipeline: Assembler(llm_extract=stage)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.kinds import Reason
from ctxassembly.llm.caller import Bypass, LLMCaller, Reply
from ctxassembly.llm.parsing import locate, parse_json
from ctxassembly.pipeline import Context, StageBase
from ctxassembly.text.cues import carries_condition, dependencies
from ctxassembly.text.lexical import facts, words
from ctxassembly.text.segments import Unit, segment
from ctxassembly.text.selection import write_units
from ctxassembly.text.sentences import segmenter

__all__ = ["PROMPT", "Evidence", "LLMExtract", "read_evidence"]

PROMPT = """Copy the sentences from the document below that help answer the question.
Copy them exactly, word for word; do not change, shorten or explain them.
Reply with JSON only: {{"chunk_id": "{id}", "evidence": ["first sentence", "second sentence"]}}
If nothing in the document helps, reply {{"chunk_id": "{id}", "evidence": []}}

Document {id}:
{text}

Question: {question}"""

OnEmpty = Literal["keep", "drop"]
_REPAIR_CONTAINMENT = 0.8  # share of the model's words found in one source unit to call it a near copy


@dataclass(frozen=True)
class Evidence:
    """What a reply said about one chunk: the sentences, the id it named, how it was read."""

    sentences: tuple[str, ...]
    chunk_id: str | None
    form: str  # "json", "list" or "lines"


def read_evidence(reply: str) -> Evidence:
    """The evidence sentences in a model's reply, read leniently.

    ``{"chunk_id": ..., "evidence": [...]}`` (also ``sentences``/``quotes``), a bare JSON
    list, or — no JSON at all — the reply's non-empty lines (bullets and quotes trimmed).
    """
    value = parse_json(reply)
    if isinstance(value, dict):
        items = next((value[k] for k in ("evidence", "sentences", "quotes") if k in value), None)
        if isinstance(items, str):
            items = [items]
        cid = value.get("chunk_id")
        if isinstance(items, list):
            return Evidence(_strings(items), None if cid is None else str(cid), "json")
    if isinstance(value, list):
        return Evidence(_strings(value), None, "list")
    lines = []
    for line in reply.splitlines():
        s = line.strip().lstrip("-*•>").strip().strip("\"'“”`")
        if s and not s.startswith(("{", "}", "```")):
            lines.append(s)
    return Evidence(tuple(lines), None, "lines")


def _strings(items: Sequence[Any]) -> tuple[str, ...]:
    out = []
    for it in items:
        if isinstance(it, str):
            out.append(it)
        elif isinstance(it, dict):  # {"sentence": "..."} / {"text": "..."}
            s = it.get("sentence", it.get("text"))
            if isinstance(s, str):
                out.append(s)
    return tuple(s for s in out if s.strip())


class LLMExtract(StageBase):
    """Keep the sentences an LLM says support the answer — verified verbatim, with their
    conditions restored from the source.

    :param llm: any LLM :class:`~ctxassembly.llm.caller.LLMCaller` accepts.
    :param concurrency: calls in flight at most.
    :param timeout: seconds per call (``None``: no limit); a timed-out chunk stays whole.
    :param reach: work on chunks (in rank order) until this many budgets' worth of text
        is ahead; the rest are left for select to judge.
    :param bypass: the :class:`~ctxassembly.llm.caller.Bypass` rules (default: the defaults).
    :param on_empty: ``keep`` (default) the chunk whole when the model finds no verified
        evidence in it, or ``drop`` it (reason ``no_evidence``).
    :param prompt: a template with ``{id}``, ``{text}`` and ``{question}``.
    :param min_chars: shortest returned piece that can count as evidence.
    :param gap_marker: what stands where text was left out.
    :raises ConfigError: a bad LLM, concurrency, timeout, reach, ``on_empty`` or prompt.
    """

    name = "llm_extract"
    reads = frozenset({"cut"})
    writes = frozenset({"llm_extract", "cut"})
    uses_model = True

    def __init__(
        self,
        llm: object,
        *,
        concurrency: int = 4,
        timeout: float | None = None,
        reach: float = 2.0,
        bypass: Bypass | None = None,
        on_empty: OnEmpty = "keep",
        prompt: str = PROMPT,
        min_chars: int = 12,
        gap_marker: str = "[…]",
    ) -> None:
        if not reach >= 1:
            raise ConfigError(f"reach must be >= 1 (budgets of text), got {reach!r}")
        if on_empty not in ("keep", "drop"):
            raise ConfigError(f"on_empty must be 'keep' or 'drop', got {on_empty!r}")
        missing = [k for k in ("{id}", "{text}", "{question}") if k not in prompt]
        if missing:
            raise ConfigError(f"prompt must contain {', '.join(missing)}; got {prompt[:60]!r}...")
        self.caller = LLMCaller(llm, concurrency=concurrency, timeout=timeout)
        self.reach = reach
        self.bypass = Bypass() if bypass is None else bypass
        self.on_empty = on_empty
        self.prompt = prompt
        self.min_chars = min_chars
        self.gap_marker = gap_marker
        segmenter()  # fail at construction, not mid-call, when pysbd is missing

    def ask(self, chunk: Chunk, question: str) -> str:
        return self.prompt.format(id=chunk.id, text=chunk.text, question=question)

    # -- the stage ----------------------------------------------------------------------
    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        todo = self.bypass.plan(self.name, chunks, ctx, horizon=self.reach, caller=self.caller)
        if not todo:
            return chunks
        replies = self.caller.map([self.ask(chunks[i], ctx.question) for i in todo])
        return self.apply(chunks, todo, replies, ctx)

    async def arun(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        """:meth:`run` for callers already inside an event loop."""
        todo = self.bypass.plan(self.name, chunks, ctx, horizon=self.reach, caller=self.caller)
        if not todo:
            return chunks
        replies = await self.caller.amap([self.ask(chunks[i], ctx.question) for i in todo])
        return self.apply(chunks, todo, replies, ctx)

    def apply(self, chunks: list[Chunk], todo: Sequence[int], replies: Sequence[Reply], ctx: Context) -> list[Chunk]:
        """Verify each reply against its chunk and build the new chunks."""
        out: list[Chunk | None] = list(chunks)
        for i, reply in zip(todo, replies, strict=True):
            c = chunks[i]
            if reply.text is None:
                ctx.report.note(self.name, "llm_failed", id=c.id, index=c.index, why=reply.error, kept="whole")
                continue
            new = self.extract(c, reply.text, ctx)
            if new is None and self.on_empty == "drop":
                ctx.report.drop(c, self.name, Reason.NO_EVIDENCE, why="the model found no verified evidence")
                out[i] = None
            elif new is not None:
                out[i] = new
        return [c for c in out if c is not None]

    def extract(self, chunk: Chunk, reply: str, ctx: Context) -> Chunk | None:
        """``chunk`` cut to the verified evidence of ``reply`` and its dependencies;
        ``chunk`` itself when that is all of it; ``None`` when nothing was verified."""
        report, cid = ctx.report, chunk.id
        ev = read_evidence(reply)
        if ev.chunk_id is not None and ev.chunk_id != cid:
            report.note(self.name, "chunk_id_mismatch", id=cid, index=chunk.index, named=ev.chunk_id)
        text = chunk.text
        units = segment(text)
        chosen: dict[int, str] = {}  # unit -> why it is kept
        verified: list[str] = []
        discarded: list[dict[str, Any]] = []
        for sentence in ev.sentences:
            span = locate(sentence, text, min_chars=self.min_chars)
            if span is not None:
                verified.append(text[span[0] : span[1]])
                for j in _covering(units, span):
                    chosen.setdefault(j, "evidence")
                continue
            repair = self._near_copy(sentence, text, units)
            entry: dict[str, Any] = {"sentence": sentence, "why": "not verbatim in the source chunk"}
            if repair is not None:
                j, lost = repair
                entry["restored_unit"] = text[units[j].start : units[j].end]
                entry["facts_lost"] = lost
            discarded.append(entry)
            report.note(self.name, "discarded", id=cid, index=chunk.index, **entry)
            if repair is not None and repair[0] not in chosen:
                chosen[repair[0]] = "source of a near copy"
                report.note(
                    self.name,
                    "restored",
                    id=cid,
                    index=chunk.index,
                    unit=entry["restored_unit"][:200],
                    why=f"source sentence of a near copy that lost {', '.join(repair[1]) or 'wording'}",
                )
        if not chosen:
            report.note(self.name, "no_evidence", id=cid, index=chunk.index, form=ev.form, returned=len(ev.sentences))
            return None
        restored = self._restore(text, units, chosen)
        for j in restored:
            report.note(
                self.name,
                "restored",
                id=cid,
                index=chunk.index,
                unit=text[units[j].start : units[j].end][:200],
                why=chosen[j],
            )
        info = {
            "evidence": verified,
            "restored": [text[units[j].start : units[j].end] for j in restored],
            "discarded": [d["sentence"] for d in discarded],
            "form": ev.form,
        }
        kept = sorted(chosen)
        if len(kept) == len(units):
            report.note(
                self.name, "kept_whole", id=cid, index=chunk.index, why="evidence and dependencies cover it all"
            )
            ctx.ledger.update(chunk.index, llm_extract=info)
            return chunk
        new_text, spans = write_units(text, units, kept, self.gap_marker)
        ctx.note_cut(self.name, "extracted", chunk, new_text)
        ctx.ledger.update(chunk.index, llm_extract=info)
        ctx.ledger.cut(chunk, spans=spans)
        return replace(chunk, text=new_text, start=None, end=None)

    def _near_copy(self, sentence: str, text: str, units: Sequence[Unit]) -> tuple[int, list[str]] | None:
        """The source unit ``sentence`` is a near copy of (its words nearly all in that one
        unit) and the facts (negations, numbers, versions) the copy lost or changed."""
        mine = words(sentence)
        if len(mine) < 3:
            return None
        best, best_share = None, 0.0
        for j, u in enumerate(units):
            theirs = set(words(text[u.start : u.end]))
            share = sum(w in theirs for w in mine) / len(mine)
            if share > best_share:
                best, best_share = j, share
        if best is None or best_share < _REPAIR_CONTAINMENT:
            return None
        u = units[best]
        lost = sorted(facts(text[u.start : u.end]) ^ facts(sentence))
        return best, lost

    def _restore(self, text: str, units: Sequence[Unit], chosen: dict[int, str]) -> list[int]:
        """Add to ``chosen`` what its units depend on (Extract's rules); return the added
        units, each with why it came back."""
        added: list[int] = []
        # neighbours only for what the model chose; structure (heading, directive,
        # lead-in) transitively for everything kept
        todo = [(j, True) for j in sorted(chosen)]
        while todo:
            j, neighbours = todo.pop()
            u = units[j]
            for x in dependencies(text, units, j, neighbours=neighbours):
                if x in chosen:
                    continue
                chosen[x] = _why(units, x, u, text)
                added.append(x)
                todo.append((x, False))
        return sorted(added)


def _covering(units: Sequence[Unit], span: tuple[int, int]) -> list[int]:
    """Units that overlap ``span`` (a partial sentence grows to the whole sentence)."""
    a, b = span
    return [j for j, u in enumerate(units) if u.start < b and a < u.end]


def _why(units: Sequence[Unit], x: int, of: Unit, text: str) -> str:
    if x == of.heading:
        return "section heading"
    if x == of.parent:
        return "enclosing directive"
    if x == of.lead:
        return "lead-in"
    if carries_condition(text[units[x].start : units[x].end]):
        return "condition (negation, bound, unit, version or date)"
    return "back-reference"
