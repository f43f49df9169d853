"""Deterministic LLM test doubles and helpers for the LLM-assisted stages.

A remote LLM cannot exist on these machines, so the unit tests use test doubles, named
as such: :class:`ScriptedLLMDouble` answers each prompt with a function of the chunk it
names (deterministic, no model), :class:`AsyncLLMDouble` does the same with
``async def`` and records how many calls were in flight at once. The real local model
(SmolLM2-135M) is used by the integration test in this folder.
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
from collections.abc import Callable
from typing import Any

import pytest

from ctxassembly.chunk import Chunk
from ctxassembly.pipeline import Context
from ctxassembly.report import Report
from ctxassembly.tokens import get_counter

os.environ.setdefault("HF_HUB_OFFLINE", "1")

_ID = re.compile(r"^Document (\S+?):$", re.MULTILINE)


def prompt_id(prompt: str) -> str:
    """The chunk id a prompt of the extraction / summary templates asks about."""
    m = _ID.search(prompt)
    if m is None:
        raise AssertionError(f"no 'Document <id>:' line in prompt {prompt[:80]!r}")
    return m.group(1)


class ScriptedLLMDouble:
    """Test double for a remote LLM: ``replies`` maps a chunk id to the reply text (or a
    callable ``prompt -> reply``); ``default`` answers the rest. Records every prompt."""

    def __init__(
        self, replies: dict[str, str | Callable[[str], str]], default: str | Callable[[str], str] = '{"evidence": []}'
    ) -> None:
        self.replies = replies
        self.default = default
        self.prompts: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, prompt: str) -> str:
        with self._lock:
            self.prompts.append(prompt)
        m = _ID.search(prompt)
        reply = self.replies.get(m.group(1), self.default) if m else self.default
        return reply(prompt) if callable(reply) else reply


class AsyncLLMDouble:
    """Async test double: waits ``delay`` seconds per call, counts calls in flight."""

    def __init__(self, reply: Callable[[str], str], delay: float = 0.02) -> None:
        self.reply = reply
        self.delay = delay
        self.in_flight = 0
        self.max_in_flight = 0
        self.calls = 0

    async def __call__(self, prompt: str) -> str:
        self.in_flight += 1
        self.calls += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
            return self.reply(prompt)
        finally:
            self.in_flight -= 1


def make_context(question: str, budget: int = 60) -> Context:
    return Context(
        question=question, budget=budget, report=Report(question=question, budget=budget), count_tokens=get_counter()
    )


def indexed(*chunks: Chunk) -> list[Chunk]:
    from dataclasses import replace

    return [replace(c, index=i) for i, c in enumerate(chunks)]


def notes(ctx: Context, event: str, **match: Any) -> list[dict[str, Any]]:
    return [n for n in ctx.report.notes if n["event"] == event and all(n.get(k) == v for k, v in match.items())]


SAVE_DOC = """Saving objects
==============

Django saves an object with Model.save(). The method writes every field of the model.
Passing positional arguments to Model.save() is not supported since Django 5.1.
Use keyword arguments such as update_fields instead. Saving also sends the pre_save and post_save signals.
Receivers of these signals can be connected anywhere in a project, and they run in the order connected."""

CACHE_DOC = """Cache timeouts
==============

The TIMEOUT option sets how long entries stay in the cache.
The default timeout is 300 seconds.
A timeout of None means that entries never expire, and 0 expires them at once.
The local-memory cache is per process and is not shared between the worker processes of a server."""


@pytest.fixture
def save_chunk() -> Chunk:
    return Chunk(id="save#1", text=SAVE_DOC, section="Saving objects", version="5.1", doc_id="models")


@pytest.fixture
def cache_chunk() -> Chunk:
    return Chunk(id="cache#2", text=CACHE_DOC, section="Cache timeouts", version="5.1", doc_id="cache")
