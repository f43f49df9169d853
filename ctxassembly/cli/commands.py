"""The ``ctxassembly`` command: ``assemble`` candidates from a file, the ``demo``
(:mod:`ctxassembly.cli.demo`) and the evaluation commands ``eval``, ``probe``,
``dilution``, ``histogram``, ``calibrate``, ``calibrate-weights`` (:mod:`ctxassembly.cli.eval`).

Every command imports what it runs when it runs: ``ctxassembly --help`` loads no module of
the evaluation toolkit or the LLM layer."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer
from rich.console import Console

from ctxassembly.cli.demo import demo
from ctxassembly.cli.eval import register as register_eval
from ctxassembly.jsonl import open_text

app = typer.Typer(help="Context assembly for RAG: filter, de-duplicate, version, budget, order and label chunks.")
app.command("demo")(demo)
register_eval(app)  # eval (A/B runner), probe, dilution, histogram, calibrate, calibrate-weights
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
    from ctxassembly.assembler import assemble
    from ctxassembly.errors import ChunkError, ConfigError

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
