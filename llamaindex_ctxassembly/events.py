"""The instrumentation event that carries an assembly report to LlamaIndex handlers."""

from __future__ import annotations

from typing import Any

from llama_index.core.bridge.pydantic import Field
from llama_index.core.instrumentation.events import BaseEvent

__all__ = ["ContextAssemblyEvent"]


class ContextAssemblyEvent(BaseEvent):
    """Fired once per postprocessor call, after the context was assembled.

    ``report`` is :meth:`ctxassembly.Report.to_dict` (every input node's fate, with
    stage, reason and position); ``node_ids`` are the returned nodes' ids in order.
    Receive it with a ``BaseEventHandler`` added to the root dispatcher::

        from llama_index.core.instrumentation import get_dispatcher
        get_dispatcher().add_event_handler(MyHandler())
    """

    question: str
    report: dict[str, Any] = Field(default_factory=dict)
    node_ids: list[str] = Field(default_factory=list)

    @classmethod
    def class_name(cls) -> str:
        return "ContextAssemblyEvent"
