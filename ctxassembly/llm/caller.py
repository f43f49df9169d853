"""What the LLM-assisted stages share: bounded async calls and the bypass rules.

* :class:`LLMCaller` accepts any LLM :func:`~ctxassembly.llm.readers.as_reader` accepts
  (a callable ``prompt -> str``, a LangChain chat model, a LlamaIndex LLM, the local
  :class:`~ctxassembly.llm.readers.SmolLM2Reader`) and runs many prompts concurrently,
  at most ``concurrency`` at a time (``asyncio.Semaphore``). Native async is used when
  the object has it (``ainvoke``, ``acomplete``, an ``async def``); a blocking reader
  runs in worker threads.
* :class:`Bypass` says when not to call the model at all (short precise candidate sets,
  a latency budget) and which chunks to leave alone (verbatim-required text, tables,
  short chunks).
"""

from __future__ import annotations

import asyncio
import inspect
import math
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.llm.readers import as_reader, reply_text
from ctxassembly.text.tables import find_tables

if TYPE_CHECKING:
    from ctxassembly.pipeline import Context

__all__ = ["Bypass", "LLMCaller", "Reply", "run_sync"]

T = TypeVar("T")


def run_sync(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine from synchronous code, also when this thread already runs a loop
    (a notebook, an async web handler): then it runs on a fresh loop in one worker thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


@dataclass(frozen=True, slots=True)
class Reply:
    """One model call: its text, or the error it raised, and its wall time."""

    text: str | None
    error: str | None
    seconds: float


class LLMCaller:
    """Any LLM behind one async, bounded, timed call.

    :param llm: a callable ``prompt -> str`` (``async def`` too), a LangChain chat model
        or LLM, a LlamaIndex LLM or a :class:`~ctxassembly.llm.readers.SmolLM2Reader`.
    :param concurrency: at most this many calls in flight.
    :param timeout: seconds one call may take before it counts as failed (``None``: no limit).
    :raises ConfigError: an ``llm`` that is none of these, a concurrency below 1 or a
        non-positive timeout.
    """

    def __init__(self, llm: object, *, concurrency: int = 4, timeout: float | None = None) -> None:
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise ConfigError(f"concurrency must be a positive int, got {concurrency!r}")
        if timeout is not None and not timeout > 0:
            raise ConfigError(f"timeout must be > 0 seconds or None, got {timeout!r}")
        self.llm = llm
        self.concurrency = concurrency
        self.timeout = timeout
        native = _native_async(llm)
        if native is None:
            reader = as_reader(llm)

            def native(prompt: str) -> Awaitable[object]:
                return asyncio.to_thread(reader, prompt)

        self._call = native
        self.seconds_per_call: float | None = None  # running mean of measured calls

    async def acall(self, prompt: str) -> Reply:
        t0 = time.perf_counter()
        try:
            pending = self._call(prompt)
            raw = await (pending if self.timeout is None else asyncio.wait_for(pending, self.timeout))
            text = reply_text(raw, f"LLM {type(self.llm).__name__}")
        except TimeoutError:
            return Reply(None, f"timeout after {self.timeout} s", time.perf_counter() - t0)
        except Exception as e:
            return Reply(None, f"{type(e).__name__}: {e}", time.perf_counter() - t0)
        seconds = time.perf_counter() - t0
        prev = self.seconds_per_call
        self.seconds_per_call = seconds if prev is None else 0.7 * prev + 0.3 * seconds
        return Reply(text, None, seconds)

    async def amap(self, prompts: Sequence[str]) -> list[Reply]:
        """All ``prompts``, at most ``concurrency`` at a time; replies in prompt order."""
        gate = asyncio.Semaphore(self.concurrency)

        async def one(p: str) -> Reply:
            async with gate:
                return await self.acall(p)

        return list(await asyncio.gather(*(one(p) for p in prompts)))

    def map(self, prompts: Sequence[str]) -> list[Reply]:
        return run_sync(lambda: self.amap(prompts))


def _native_async(llm: object) -> Callable[[str], Awaitable[object]] | None:
    """The object's own coroutine call, when it has one: a LangChain model's ``ainvoke``,
    a LlamaIndex LLM's ``acomplete``, or the object itself when it is an ``async def``."""
    module = type(llm).__module__ or ""
    method: object = None
    if module.startswith("langchain"):
        method = getattr(llm, "ainvoke", None)
    elif module.startswith("llama_index"):
        method = getattr(llm, "acomplete", None)
    if callable(method):
        return cast("Callable[[str], Awaitable[object]]", method)
    if inspect.iscoroutinefunction(llm) or inspect.iscoroutinefunction(getattr(llm, "__call__", None)):  # noqa: B004
        return cast("Callable[[str], Awaitable[object]]", llm)
    return None


# -- bypass rules ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Bypass:
    """When an LLM stage should not call the model (the articles' rules).

    :param short_chunks: a candidate set of at most this many chunks that already fits
        the budget is short and precise: nothing to gain, a call's latency and risk to
        pay. ``0`` turns the rule off.
    :param verbatim_key: a chunk whose ``meta[verbatim_key]`` is true (contracts,
        regulations, licences) is passed through untouched.
    :param tables: leave chunks that contain a table untouched (a model drops rows and
        loses the header that gives the numbers their units).
    :param min_tokens: leave chunks of at most this many tokens untouched.
    :param latency_budget_ms: skip the model when the estimated time of the calls
        (``ceil(calls / concurrency)`` times the expected time of one call) exceeds it.
    :param call_ms: the expected time of one call; ``None``: the running mean measured
        by the stage (no estimate, so no latency bypass, before the first call).
    :raises ConfigError: negative sizes or a non-positive latency budget.
    """

    short_chunks: int = 3
    verbatim_key: str = "verbatim_required"
    tables: bool = True
    min_tokens: int = 40
    latency_budget_ms: float | None = None
    call_ms: float | None = None

    def __post_init__(self) -> None:
        if self.short_chunks < 0 or self.min_tokens < 0:
            raise ConfigError(
                f"short_chunks and min_tokens must be >= 0, got {self.short_chunks!r} and {self.min_tokens!r}"
            )
        if self.latency_budget_ms is not None and not self.latency_budget_ms > 0:
            raise ConfigError(f"latency_budget_ms must be > 0 or None, got {self.latency_budget_ms!r}")

    def whole_set(self, tokens: Sequence[int], budget: int) -> str | None:
        """Why the whole candidate set skips the model, or ``None``."""
        if self.short_chunks and 0 < len(tokens) <= self.short_chunks and sum(tokens) <= budget:
            return f"short and precise: {len(tokens)} chunks, {sum(tokens)} tokens within the budget {budget}"
        return None

    def latency(self, calls: int, concurrency: int, measured_s: float | None) -> str | None:
        """Why the planned calls would overrun the latency budget, or ``None``."""
        if self.latency_budget_ms is None or calls == 0:
            return None
        per_call = self.call_ms if self.call_ms is not None else None if measured_s is None else measured_s * 1000
        if per_call is None:
            return None
        estimate = math.ceil(calls / concurrency) * per_call
        if estimate > self.latency_budget_ms:
            return f"latency: {calls} calls estimated at {estimate:.0f} ms > budget {self.latency_budget_ms:.0f} ms"
        return None

    def plan(self, stage: str, chunks: list[Chunk], ctx: Context, *, horizon: float, caller: LLMCaller) -> list[int]:
        """Indices of the chunks an LLM stage sends to the model: in rank order until
        ``horizon`` budgets of text are ahead, without the chunks these rules leave
        untouched; empty when the whole set bypasses the model. Every skip is noted
        under ``stage`` in the report."""
        tokens = [ctx.count_tokens(c.text) for c in chunks]
        why = self.whole_set(tokens, ctx.budget)
        if why is not None:
            ctx.report.note(stage, "bypass", scope="all", why=why)
            return []
        todo: list[int] = []
        ahead = 0
        for i, c in enumerate(chunks):
            if ahead > horizon * ctx.budget:
                break
            ahead += tokens[i]
            skip = self.chunk(c, tokens[i])
            if skip is not None:
                ctx.report.note(stage, "bypass", id=c.id, index=c.index, why=skip)
            else:
                todo.append(i)
        why = self.latency(len(todo), caller.concurrency, caller.seconds_per_call)
        if why is not None:
            ctx.report.note(stage, "bypass", scope="all", why=why)
            return []
        return todo

    def chunk(self, chunk: Chunk, tokens: int) -> str | None:
        """Why this chunk is left untouched, or ``None``."""
        if chunk.meta.get(self.verbatim_key):
            return f"verbatim required (meta {self.verbatim_key!r})"
        if self.tables and find_tables(chunk.text):
            return "contains a table"
        if tokens <= self.min_tokens:
            return f"short: {tokens} tokens <= {self.min_tokens}"
        return None
