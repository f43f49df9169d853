"""The ``ctxassembly`` command: ``assemble`` candidates from a file, run the ``demo``, and the
evaluation commands ``eval``, ``probe``, ``dilution``, ``histogram`` (ctxassembly.eval.cli)."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from ctxassembly.assembler import Assembled, assemble
from ctxassembly.errors import ChunkError, ConfigError
from ctxassembly.eval.cli import register as register_eval  # light: the readers import torch on use
from ctxassembly.jsonl import open_text

app = typer.Typer(help="Context assembly for RAG: filter, de-duplicate, version, budget, order and label chunks.")
register_eval(app)  # eval (A/B runner), probe, dilution, histogram
app.command("calibrate")(__import__("ctxassembly.calibrate", fromlist=["command"]).command)
app.command("calibrate-weights")(__import__("ctxassembly.calibrate", fromlist=["loco_command"]).loco_command)
console = Console(width=110)


def _read_candidates(path: str) -> tuple[list[dict[str, Any]], str | None]:
    """JSON (a list, or an object with ``candidates`` and maybe ``question``) or JSONL."""
    if path == "-":
        raw = sys.stdin.read()
    else:
        with open_text(path) as f:
            raw = f.read()
    text = raw.strip()
    if text.startswith("["):
        return json.loads(text), None
    if text.startswith("{") and "\n{" not in text:
        obj = json.loads(text)
        if "candidates" in obj:
            return obj["candidates"], obj.get("question")
        return [obj], None  # one line of JSONL
    return [json.loads(line) for line in text.splitlines() if line.strip()], None


@app.command("assemble")
def assemble_cmd(  # noqa: PLR0917 - typer maps each parameter to a CLI option
    candidates: Annotated[str, typer.Argument(help="JSON or JSONL file of candidate chunks ('-' for stdin)")],
    question: Annotated[str | None, typer.Option("--question", "-q", help="the user's question")] = None,
    budget: Annotated[int, typer.Option(help="token budget of the context")] = 1000,
    version: Annotated[
        str | None, typer.Option("--version", help="target version (default: from the question, else current)")
    ] = None,
    order: Annotated[str, typer.Option(help="bookend | edges | relevance | reading")] = "bookend",
    fmt: Annotated[str, typer.Option("--format", help="xml | evidence | plain, or json for chunks + report")] = "xml",
) -> None:
    """Assemble candidates into a labelled context (or JSON with chunks and the report)."""
    items, q = _read_candidates(candidates)
    q = question if question is not None else q
    if q is None:
        raise typer.BadParameter("give --question (or a JSON object with a 'question' field)")
    try:
        result = assemble(
            q, items, budget=budget, target_version=version, order=order, format="xml" if fmt == "json" else fmt
        )
    except (ChunkError, ConfigError) as e:
        console.print(f"[red]error:[/red] {e}")
        raise typer.Exit(2) from None
    if fmt == "json":
        out = {"text": result.text, "chunks": [c.to_dict() for c in result.chunks], "report": result.report.to_dict()}
        sys.stdout.write(json.dumps(out, default=str, ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write(result.text + "\n")


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
    from ctxassembly.demo import retriever
    from ctxassembly.text import normalize

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


@app.command()
def demo(
    question: Annotated[
        str | None, typer.Option("--question", "-q", help="your own question (default: the samples)")
    ] = None,
    budget: Annotated[int, typer.Option(help="token budget")] = 1000,
    show_context: Annotated[bool, typer.Option("--show-context", help="print the assembled context")] = False,
) -> None:
    """Naive top-40 vs assembled context on the bundled Django docs (3 versions)."""
    from ctxassembly.demo import SAMPLE_QUESTIONS

    samples = [(question, None, ())] if question else list(SAMPLE_QUESTIONS)
    for q, answer, wrong in samples:
        result = show(q, answer, wrong, budget)
        if show_context or question:
            console.rule("assembled context")
            console.print(result.text, markup=False, highlight=False)
        console.print()


def main() -> None:
    app()


if __name__ == "__main__":
    main()
