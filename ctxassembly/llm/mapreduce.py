"""Map-then-reduce for questions that aggregate over many chunks ("compare", "list all",
"across versions").

One prompt over forty chunks makes a model skim; an aggregate question needs something
from each of them. So:

* **map**: per-chunk evidence, one call per chunk, concurrently and bounded — exactly
  :class:`~ctxassembly.llm.extract.LLMExtract` (verbatim-verified, conditions
  restored, failures and inventions recorded);
* **reduce**: one call over the short list of extracts, which names the extracts needed
  to answer, in the order to read them: ``{"chunk_ids": ["...", ...]}``. Ids that are not
  among the extracts are discarded and recorded; the extracts it leaves out are dropped
  (reason ``not_selected``); a reply that names no known id changes nothing (noted).
  The reduce step only selects and orders — it writes no text into the context.

Which path runs is decided per call by :func:`aggregate_cue` (a small detector of
aggregate wording) unless the caller fixes it with ``aggregate=True``/``False``; the
report notes the path (``event="path"``, ``path="map_reduce"`` or ``"extract"``) and why.
On the ``extract`` path only the map step runs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.kinds import Reason
from ctxassembly.llm.caller import LLMCaller, run_sync
from ctxassembly.llm.extract import LLMExtract
from ctxassembly.llm.parsing import parse_json
from ctxassembly.pipeline import Context, StageBase

__all__ = ["REDUCE_PROMPT", "MapReduce", "aggregate_cue"]

_AGGREGATE = re.compile(
    r"\b(?:compare[sd]?|comparison|contrast|differences?|differ|versus|vs\.?|"
    r"list (?:all|every|each)|all (?:the )?(?:\w+ )?(?:options|settings|versions|ways|changes|methods|fields)|"
    r"every|each (?:of|version)|across (?:\w+ )?(?:versions|releases|documents|backends)|"
    r"between (?:versions|releases|[\w.]+ and [\w.]+)|what changed|changes? (?:between|since|across)|"
    r"history of|over time|enumerate|summari[sz]e)\b",
    re.IGNORECASE,
)

REDUCE_PROMPT = """Below are extracts from several documents. Question: {question}
Which extracts are needed to answer the question? Reply with JSON only, listing their ids
in the order to read them: {{"chunk_ids": ["id1", "id2"]}}

{extracts}

Question: {question}"""


def aggregate_cue(question: str) -> str | None:
    """The wording that makes ``question`` an aggregate one ("compare", "list all",
    "across versions", "between 4.2 and 5.1" ...), or ``None``."""
    m = _AGGREGATE.search(question)
    return None if m is None else m.group(0)


class MapReduce(StageBase):
    """Per-chunk extracts (map), then one selecting call over them (reduce) for aggregate
    questions; the plain extraction otherwise.

    :param llm: any LLM :class:`~ctxassembly.llm.caller.LLMCaller` accepts (used for both steps
        unless ``extract`` brings its own).
    :param aggregate: ``None`` (default): :func:`aggregate_cue` decides per question;
        ``True``/``False``: the caller's flag decides.
    :param extract: the map stage (default: ``LLMExtract(llm, concurrency=concurrency)``).
    :param concurrency: map calls in flight at most.
    :param max_extracts: at most this many extracts go to the reduce call (in rank order);
        the rest pass through unselected but kept.
    :param reduce_prompt: a template with ``{question}`` and ``{extracts}``.
    :raises ConfigError: a bad LLM, flag, prompt or ``max_extracts``.
    """

    name = "mapreduce"
    reads, writes = LLMExtract.reads, LLMExtract.writes  # its map step is an LLMExtract
    uses_model = True

    def __init__(
        self,
        llm: object,
        *,
        aggregate: bool | None = None,
        extract: LLMExtract | None = None,
        concurrency: int = 4,
        max_extracts: int = 12,
        reduce_prompt: str = REDUCE_PROMPT,
    ) -> None:
        if aggregate is not None and not isinstance(aggregate, bool):
            raise ConfigError(f"aggregate must be True, False or None (detect), got {aggregate!r}")
        if isinstance(max_extracts, bool) or not isinstance(max_extracts, int) or max_extracts < 2:
            raise ConfigError(f"max_extracts must be an int >= 2, got {max_extracts!r}")
        missing = [k for k in ("{question}", "{extracts}") if k not in reduce_prompt]
        if missing:
            raise ConfigError(f"reduce_prompt must contain {', '.join(missing)}")
        self.extract = LLMExtract(llm, concurrency=concurrency) if extract is None else extract
        self.reducer = LLMCaller(llm, concurrency=1)
        self.aggregate = aggregate
        self.max_extracts = max_extracts
        self.reduce_prompt = reduce_prompt

    def path(self, question: str) -> tuple[str, str]:
        """``(path, why)`` for ``question``."""
        if self.aggregate is not None:
            return ("map_reduce" if self.aggregate else "extract"), f"caller flag aggregate={self.aggregate}"
        cue = aggregate_cue(question)
        if cue is None:
            return "extract", "no aggregate wording in the question"
        return "map_reduce", f"aggregate wording {cue!r}"

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        return run_sync(lambda: self.arun(chunks, ctx))

    async def arun(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        path, why = self.path(ctx.question)
        ctx.report.note(self.name, "path", path=path, why=why)
        mapped = await self.extract.arun(chunks, ctx)
        if path == "extract" or len(mapped) < 2:
            return mapped
        head, tail = mapped[: self.max_extracts], mapped[self.max_extracts :]
        prompt = self.reduce_prompt.format(question=ctx.question, extracts=self.listing(head))
        reply = await self.reducer.acall(prompt)
        if reply.text is None:
            ctx.report.note(self.name, "reduce_failed", why=reply.error, kept="all extracts")
            return mapped
        return self.select(head, reply.text, ctx) + tail

    @staticmethod
    def listing(chunks: Sequence[Chunk]) -> str:
        parts = []
        for c in chunks:
            label = ", ".join(x for x in (c.section, None if c.version is None else f"version {c.version}") if x)
            parts.append(f"[{c.id}]{' (' + label + ')' if label else ''}\n{c.text}")
        return "\n\n".join(parts)

    def select(self, chunks: list[Chunk], reply: str, ctx: Context) -> list[Chunk]:
        """The extracts the reduce reply names, in its order; the others dropped."""
        by_id: dict[str, Chunk] = {}
        for c in chunks:
            by_id.setdefault(c.id, c)
        named = _ids(reply)
        unknown = [i for i in named if i not in by_id]
        for i in unknown:
            ctx.report.note(self.name, "discarded", named=i, why="not the id of an extract")
        order = list(dict.fromkeys(i for i in named if i in by_id))
        if not order:
            ctx.report.note(self.name, "reduce_unparsed", reply=reply[:200], kept="all extracts")
            return chunks
        chosen = {id(by_id[i]) for i in order}
        for c in chunks:
            if id(c) not in chosen:
                ctx.report.drop(c, self.name, Reason.NOT_SELECTED, why="the reduce step did not name this extract")
        ctx.report.note(self.name, "reduced", selected=order, of=len(chunks))
        return [by_id[i] for i in order]


def _ids(reply: str) -> list[str]:
    value = parse_json(reply)
    items: object = None
    if isinstance(value, dict):
        items = next((value[k] for k in ("chunk_ids", "ids", "extracts", "evidence") if k in value), None)
    elif isinstance(value, list):
        items = value
    if isinstance(items, list):
        out = []
        for it in items:
            if isinstance(it, (str, int)) and not isinstance(it, bool):
                out.append(str(it))
            elif isinstance(it, dict) and isinstance(it.get("chunk_id"), (str, int)):
                out.append(str(it["chunk_id"]))
        return out
    return re.findall(r"\[([^\[\]\s]+)\]", reply)  # no JSON: ids written as in the listing
