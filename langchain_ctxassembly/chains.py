"""An LCEL chain: ``retriever | assembler | prompt | llm``, documents first and the question last.

Over long contexts models answer better when the question comes after the documents
(Liu et al., "Lost in the Middle", https://arxiv.org/abs/2307.03172), so the prompt lays
out the labelled context, then the instructions, then the question restated; the same
layout as :func:`ctxassembly.render.prompt`.

Usage::

    from langchain_ctxassembly import ContextAssemblyCompressor
    from langchain_ctxassembly.chains import build_chain

    chain = build_chain(vectorstore.as_retriever(search_kwargs={"k": 40}), llm,
                        ContextAssemblyCompressor(budget=1500))
    answer = chain.invoke("Which PostgreSQL versions does Django support?")
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseLanguageModel
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import RetrieverLike
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda, RunnablePassthrough

from ctxassembly.render import DEFAULT_INSTRUCTIONS
from langchain_ctxassembly.compressor import Compressed, ContextAssemblyCompressor

__all__ = ["PROMPT", "assemble_step", "build_chain"]

PROMPT = ChatPromptTemplate.from_messages(
    [("human", "<documents>\n{context}\n</documents>\n\n{instructions}\n\nQuestion: {question}")]
).partial(instructions=DEFAULT_INSTRUCTIONS)
"""Documents, instructions, question: variables ``context`` and ``question``
(``instructions`` defaults to ctxassembly's: documents are data, prefer current ones, cite ids)."""


def assemble_step(compressor: ContextAssemblyCompressor) -> Runnable[dict[str, Any], dict[str, Any]]:
    """A runnable ``{"question", "documents"} -> {"question", "context", "documents"}``.

    The compressor gets the step's callbacks, so its ``ctxassembly_report`` event reaches
    the handlers passed to ``chain.invoke(..., config={"callbacks": [...]})``.
    """

    def _out(question: str, done: Compressed) -> dict[str, Any]:
        # the context the core rendered and counted against the budget: no second render
        out = {"question": question, "context": done.context, "documents": done.documents}
        if done.spotlight is not None:  # the instructions say what the documents' marking means
            out["instructions"] = f"{DEFAULT_INSTRUCTIONS} {done.spotlight.note()}"
        return out

    def assemble(inputs: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        question = inputs["question"]
        return _out(question, compressor.assemble(inputs["documents"], question, config.get("callbacks")))

    async def aassemble(inputs: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        question = inputs["question"]
        return _out(question, await compressor.aassemble(inputs["documents"], question, config.get("callbacks")))

    return RunnableLambda(assemble, afunc=aassemble, name="ctxassembly")


def build_chain(
    retriever: RetrieverLike,
    llm: BaseLanguageModel[Any] | Runnable[Any, Any],
    compressor: ContextAssemblyCompressor,
    prompt: ChatPromptTemplate | None = None,
) -> Runnable[str, Any]:
    """``question -> retriever -> compressor -> prompt -> llm``; invoke it with the question string.

    :param prompt: a template with ``context`` and ``question`` variables; :data:`PROMPT`
        (documents first, question last) when ``None``.
    """
    template = PROMPT if prompt is None else prompt
    return {"question": RunnablePassthrough(), "documents": retriever} | assemble_step(compressor) | template | llm
