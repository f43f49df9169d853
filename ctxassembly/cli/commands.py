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

from ctxassembly.cli.demo import demo
from ctxassembly.cli.eval import register as register_eval
from ctxassembly.jsonl import open_text

app = typer.Typer(help="Context assembly for RAG: filter, de-duplicate, version, budget, order and label chunks.")
app.command("demo")(demo)
register_eval(app)  # eval (A/B runner), probe, dilution, histogram, calibrate, calibrate-weights


class BadInput(ValueError):
    """The candidates file cannot be read: the message names the file and the line."""


def _read_candidates(path: str) -> tuple[list[dict[str, Any]], str | None]:
    """JSON (a list, or an object with ``candidates`` and maybe ``question``) or JSONL;
    a record shaped as a LangChain ``Document`` (``page_content`` and ``metadata``) or a
    LlamaIndex node (``text``, ``metadata``, ``id_``) is read as the adapters read one.

    :raises BadInput: a line (or the file) that is not JSON, or a record that is no object.
    """
    name = "<stdin>" if path == "-" else path
    if path == "-":
        raw = sys.stdin.read()
    else:
        try:
            with open_text(path) as f:
                raw = f.read()
        except (OSError, UnicodeDecodeError, EOFError) as e:
            raise BadInput(f"{name}: cannot read it ({e})") from None
    text = raw.strip()
    if text.startswith("[") or (text.startswith("{") and "\n{" not in text):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            raise BadInput(f"{name}:{e.lineno}: not JSON ({e.msg}, column {e.colno})") from None
        question = None
        if isinstance(obj, dict) and "candidates" in obj:
            obj, question = obj["candidates"], obj.get("question")
        records = obj if isinstance(obj, list) else [obj]  # an object alone: one line of JSONL
        return [_record(r, f"{name}: item {i}") for i, r in enumerate(records)], question
    records = []
    for n, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(_record(json.loads(line), f"{name}:{n}"))
        except json.JSONDecodeError as e:
            raise BadInput(f"{name}:{n}: not JSON ({e.msg}, column {e.colno})") from None
    return records, None


def _record(obj: Any, where: str) -> dict[str, Any]:
    """One candidate: a chunk record as it is, a Document- or node-shaped one mapped by the
    adapters' metadata convention (:func:`ctxassembly.metadata.to_record`)."""
    if not isinstance(obj, dict):
        raise BadInput(f"{where}: expected a JSON object (a chunk), got {type(obj).__name__}")
    metadata = obj.get("metadata")
    if ("page_content" in obj or isinstance(metadata, dict)) and "meta" not in obj:
        from ctxassembly.metadata import MetadataKeys, to_record

        text = obj.get("page_content", obj.get("text"))
        native = {"id": obj.get("id") or obj.get("id_"), "score": obj.get("score")}
        if not isinstance(text, str):  # the core says what is wrong with it, naming the field
            return {"id": native["id"], "text": text}
        return to_record(metadata if isinstance(metadata, dict) else {}, text, MetadataKeys(), native=native)
    return obj


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

    try:
        items, q = _read_candidates(candidates)
    except BadInput as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from None
    q = question if question is not None else q
    if q is None:
        raise typer.BadParameter("give --question (or a JSON object with a 'question' field)")
    try:
        result = assemble(
            q, items, budget=budget, target_version=version, order=order, format="xml" if fmt == "json" else fmt
        )
    except (ChunkError, ConfigError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from None
    invalid = [d for d in result.report.decisions if d.reason == "invalid"]
    if items and len(invalid) == len(items):
        typer.echo(f"error: no candidate could be read; the first: {invalid[0].detail['error']}", err=True)
        raise typer.Exit(2)
    if fmt == "json":
        out = {"text": result.text, "chunks": [c.to_dict() for c in result.chunks], "report": result.report.to_dict()}
        sys.stdout.write(json.dumps(out, default=str, ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write(result.text + "\n")
