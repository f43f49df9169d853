"""``ctxassembly demo``: naive top-40 against the assembled context on the bundled Django
docs (the corpus, retriever and sample questions are :mod:`ctxassembly.data`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from ctxassembly.assembler import Assembled

__all__ = ["demo", "show"]

console = Console(width=110)


def _naive(candidates: list[dict[str, Any]], count: Any) -> str:
    return "\n\n".join(c["text"] for c in candidates)


def _where(texts: list[str], needle: str) -> str:
    hits = [i for i, t in enumerate(texts) if needle in t]
    if not hits:
        return "absent"
    p, n = hits[0], len(texts)
    zone = "edge" if p in (0, n - 1) else ("middle" if n > 2 and 1 / 3 < p / (n - 1) < 2 / 3 else "near edge")
    return f"#{p + 1} of {n} ({zone})"


def show(question: str, answer: str | None, wrong: tuple[str, ...], budget: int, k: int = 40) -> Assembled:
    """Print naive top-k vs assembled for one question; return the assembled result."""
    from ctxassembly.assembler import assemble
    from ctxassembly.data import retriever
    from ctxassembly.text.lexical import normalize

    cands = retriever().retrieve(question, k=k)
    result = assemble(question, cands, budget=budget)
    count = result.report.count_tokens or len
    naive_texts = [c["text"] for c in cands]
    kept_texts = [c.text for c in result.chunks]
    dup = len(naive_texts) - len({normalize(t) for t in naive_texts})
    table = Table(title=question, title_style="bold", show_lines=False)
    table.add_column("")
    table.add_column(f"naive top-{k}", justify="right")
    table.add_column(f"assembled (budget {budget})", justify="right")
    table.add_row("chunks", str(len(cands)), str(len(result.chunks)))
    table.add_row("tokens", f"{count(_naive(cands, count)):,}", f"{result.report.tokens_after:,}")
    table.add_row("duplicate chunks", str(dup), "0")
    versions = sorted({str(c.get("version")) for c in cands})
    table.add_row("versions", ", ".join(versions), ", ".join(sorted({str(c.version) for c in result.chunks})) or "-")
    if answer:
        table.add_row("answer-bearing chunk", _where(naive_texts, answer), _where(kept_texts, answer))
    if wrong:
        exposed = [sum(any(w in t for t in texts) for w in wrong) for texts in (naive_texts, kept_texts)]
        table.add_row("other-version answers shown", *(f"{n} of {len(wrong)}" for n in exposed))
    console.print(table)
    reasons = result.report.reasons
    console.print(
        f"target version: [bold]{result.report.target_version}[/bold]  ·  fates: "
        + ", ".join(f"{r} {n}" for r, n in reasons.most_common())
    )
    for d in result.report.kept:
        c = result.chunks[d.position or 0]
        console.print(f"  kept @{d.position}: {c.id}  [dim]{c.section}[/dim]")
    return result


def demo(
    question: Annotated[
        str | None, typer.Option("--question", "-q", help="your own question (default: the samples)")
    ] = None,
    budget: Annotated[int, typer.Option(help="token budget")] = 1000,
    show_context: Annotated[bool, typer.Option("--show-context", help="print the assembled context")] = False,
) -> None:
    """Naive top-40 vs assembled context on the bundled Django docs (3 versions)."""
    from ctxassembly.data import SAMPLE_QUESTIONS

    samples = [(question, None, ())] if question else list(SAMPLE_QUESTIONS)
    for q, answer, wrong in samples:
        result = show(q, answer, wrong, budget)
        if show_context or question:
            console.rule("assembled context")
            console.print(result.text, markup=False, highlight=False)
        console.print()
