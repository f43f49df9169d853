"""Query-focused summary with provenance — off by default, for users who accept rewriting.

A model writes a short summary of what each chunk says about the question. A summary
can be wrong in ways a verbatim extract cannot, so it never travels alone: the chunk's
block carries

* the label ``status="summary"`` (appended to an existing status: ``current; summary``),
  so the rendered context says it is a summary;
* a first line naming its provenance: ``[model-written summary of <id> · <section> ·
  version <v>]``;
* the summary;
* ``[original excerpt, verbatim]`` and the chunk's sentences that best match the
  question, copied from the source (the deterministic extractor's segmentation and
  choice, at most ``excerpt_tokens``), so a reader can check the summary against it.

the ledger's ``summary`` (the returned chunk's ``meta["summary"]``; its status gains
"summary") holds the summary, the excerpt, its offsets in the chunk and the
provenance (id, section, version). A chunk the model fails on, or that a bypass rule
covers (verbatim-required text, tables, short chunks, short precise sets, latency
budget), stays as it was and the report says why.
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.llm.caller import Bypass, LLMCaller, Reply, run_sync
from ctxassembly.pipeline import Context, StageBase
from ctxassembly.text.lexical import Lexical
from ctxassembly.text.segments import segment
from ctxassembly.text.selection import choose_units, write_units
from ctxassembly.text.sentences import segmenter

__all__ = ["PROMPT", "Summarize"]

PROMPT = """Summarise in at most {words} words what the document below says that helps answer the
question. Keep every number, version, negation and condition exactly. Reply with the summary only.

Document {id}:
{text}

Question: {question}"""

SUMMARY_STATUS = "summary"


class Summarize(StageBase):
    """Replace chunks by a labelled, query-focused summary plus the original excerpt.

    :param llm: any LLM :class:`~ctxassembly.llm.caller.LLMCaller` accepts.
    :param concurrency: calls in flight at most.
    :param timeout: seconds per call (``None``: no limit); a timed-out chunk stays as it was.
    :param words: the summary's length asked of the model.
    :param excerpt_tokens: the verbatim excerpt kept beside the summary (tokens, at most).
    :param reach: summarise chunks (in rank order) until this many budgets of text are ahead.
    :param bypass: the :class:`~ctxassembly.llm.caller.Bypass` rules; by default chunks of at
        most ``2 * excerpt_tokens`` tokens are left whole (a summary would not be shorter).
    :param prompt: a template with ``{id}``, ``{text}``, ``{question}`` and ``{words}``.
    :raises ConfigError: bad sizes, reach or prompt.
    """

    name = "summarize"
    reads = frozenset({"version", "cut"})
    writes = frozenset({"summary", "status_note", "cut"})
    uses_model = True

    def __init__(
        self,
        llm: object,
        *,
        concurrency: int = 4,
        timeout: float | None = None,
        words: int = 50,
        excerpt_tokens: int = 80,
        reach: float = 2.0,
        bypass: Bypass | None = None,
        prompt: str = PROMPT,
    ) -> None:
        if isinstance(words, bool) or not isinstance(words, int) or words < 5:
            raise ConfigError(f"words must be an int >= 5, got {words!r}")
        if isinstance(excerpt_tokens, bool) or not isinstance(excerpt_tokens, int) or excerpt_tokens < 10:
            raise ConfigError(f"excerpt_tokens must be an int >= 10, got {excerpt_tokens!r}")
        if not reach >= 1:
            raise ConfigError(f"reach must be >= 1 (budgets of text), got {reach!r}")
        missing = [k for k in ("{id}", "{text}", "{question}", "{words}") if k not in prompt]
        if missing:
            raise ConfigError(f"prompt must contain {', '.join(missing)}")
        self.caller = LLMCaller(llm, concurrency=concurrency, timeout=timeout)
        self.words = words
        self.excerpt_tokens = excerpt_tokens
        self.reach = reach
        self.bypass = Bypass(min_tokens=2 * excerpt_tokens) if bypass is None else bypass
        self.prompt = prompt
        segmenter()  # fail at construction, not mid-call, when pysbd is missing

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        return run_sync(lambda: self.arun(chunks, ctx))

    async def arun(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        todo = self.bypass.plan(self.name, chunks, ctx, horizon=self.reach, caller=self.caller)
        if not todo:
            return chunks
        prompts = [
            self.prompt.format(id=chunks[i].id, text=chunks[i].text, question=ctx.question, words=self.words)
            for i in todo
        ]
        replies: list[Reply] = await self.caller.amap(prompts)
        out = list(chunks)
        for i, reply in zip(todo, replies, strict=True):
            c = chunks[i]
            summary = "" if reply.text is None else _clean(reply.text)
            if not summary:
                why = reply.error if reply.text is None else "empty summary"
                ctx.report.note(self.name, "llm_failed", id=c.id, index=c.index, why=why, kept="as it was")
                continue
            out[i] = self.labelled(c, summary, ctx)
        return out

    def excerpt(self, chunk: Chunk, ctx: Context) -> tuple[str, tuple[tuple[int, int], ...]]:
        """The chunk's best-matching units, verbatim, within ``excerpt_tokens``."""
        text = chunk.text
        units = segment(text)
        scores = np.asarray(Lexical([text[u.start : u.end] for u in units]).scores(ctx.question), dtype=np.float64)
        kept = choose_units(text, units, scores, self.excerpt_tokens, ctx.count_tokens) if units else None
        if kept is None:
            return text.strip(), ((0, len(text)),)
        return write_units(text, units, kept, "[…]")

    def labelled(self, chunk: Chunk, summary: str, ctx: Context) -> Chunk:
        excerpt, spans = self.excerpt(chunk, ctx)
        where = " · ".join(
            x for x in (chunk.id, chunk.section, None if chunk.version is None else f"version {chunk.version}") if x
        )
        text = f"[model-written summary of {where}]\n{summary}\n\n[original excerpt, verbatim]\n{excerpt}"
        info = {
            "summary": summary,
            "excerpt": excerpt,
            "excerpt_spans": spans,
            "provenance": {"id": chunk.id, "section": chunk.section, "version": chunk.version},
        }
        ctx.note_cut(self.name, "summarized", chunk, text)
        ctx.ledger.update(chunk.index, summary=info, status_note=SUMMARY_STATUS)
        ctx.ledger.cut(chunk)
        return replace(chunk, text=text, start=None, end=None)


def _clean(reply: str) -> str:
    text = re.sub(r"^\s*(?:summary|answer)\s*:\s*", "", reply.strip(), flags=re.IGNORECASE)
    return re.sub(r"\n{3,}", "\n\n", text).strip()
