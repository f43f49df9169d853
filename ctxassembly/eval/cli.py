"""The ``ctxassembly eval`` commands: metrics, probe, dilution, histogram.

Mounted under ``ctxassembly eval``; also runs alone as ``python -m ctxassembly.eval.cli``.
Without a questions file, the commands use the bundled Django demo questions; without
``--reader``, the local SmolLM2 reader.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from ctxassembly.errors import ChunkError, ConfigError

app = typer.Typer(help="Measure context assembly on your own model and data.", no_args_is_help=True)

QuestionsArg = Annotated[
    Path | None, typer.Argument(help="JSONL of labelled questions (default: the bundled demo questions)")
]
ReaderOpt = Annotated[
    str, typer.Option(help="'smollm2' (local, offline) or 'module:attr' ('module:factory()' to call it)")
]
TokensOpt = Annotated[int, typer.Option("--max-new-tokens", help="answer length limit of the SmolLM2 reader")]
ThreadsOpt = Annotated[int, typer.Option(help="CPU threads of the SmolLM2 reader")]
JsonOpt = Annotated[Path | None, typer.Option("--json", help="write the full result as JSON here")]
PngOpt = Annotated[Path | None, typer.Option("--png", help="write the plot as a PNG here")]
LimitOpt = Annotated[int | None, typer.Option(help="use only the first N questions")]
MaxCharsOpt = Annotated[
    int | None, typer.Option("--max-chars", help="cut each chunk to N characters (shorter prompts)")
]


@dataclass
class _Failed(Exception):
    message: str


def load_reader(spec: str, *, max_new_tokens: int = 48, threads: int = 1) -> Any:
    """A reader from a CLI spec: ``smollm2`` or ``module:attr`` / ``module:factory()``.

    :raises ConfigError: a spec that names nothing importable.
    """
    from ctxassembly.eval.readers import SmolLM2Reader, as_reader

    if spec == "smollm2":
        return SmolLM2Reader(max_new_tokens=max_new_tokens, threads=threads)
    module_name, sep, attr = spec.partition(":")
    if not sep or not attr:
        raise ConfigError(f"reader must be 'smollm2' or 'module:attr', got {spec!r}")
    call = attr.endswith("()")
    try:
        obj = getattr(importlib.import_module(module_name), attr.removesuffix("()"))
    except (ImportError, AttributeError) as e:
        raise ConfigError(f"reader {spec!r}: {e}") from None
    return as_reader(obj() if call else obj)


def _questions(path: Path | None, limit: int | None) -> list[Any]:
    from ctxassembly.eval.questions import demo_questions, load_questions

    qs = demo_questions() if path is None else load_questions(path)
    return qs if limit is None else qs[:limit]


def _ints(text: str, name: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ConfigError(f"{name} must be comma-separated ints, got {text!r}") from None


def _finish(result: Any, json_path: Path | None, png: Path | None) -> None:
    typer.echo(result.table())
    if json_path is not None:
        json_path.write_text(json.dumps(result.to_dict(), indent=2, default=str), encoding="utf-8")
        typer.echo(f"wrote {json_path}")
    if png is not None:
        typer.echo(f"wrote {result.plot(str(png))}")


def _run(fn: Any) -> None:
    try:
        fn()
    except (ConfigError, ChunkError, ImportError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from None


@app.command("metrics")
def metrics_cmd(  # noqa: PLR0917 - typer reads the options from the signature
    questions: QuestionsArg = None,
    budget: Annotated[int, typer.Option(help="token budget of each assembled context")] = 1500,
    order: Annotated[str, typer.Option(help="bookend | edges | relevance | reading")] = "bookend",
    limit: LimitOpt = None,
    json_path: JsonOpt = None,
    engine: Annotated[
        str, typer.Option(help="local (this process) | ray (Ray Data, extra 'ray'; same results)")
    ] = "local",
) -> None:
    """Context metrics of the assembled contexts against the labels (no reader needed)."""

    def go() -> None:
        from ctxassembly.batch import evaluate_many, parse_engine

        qs = _questions(questions, limit)
        _finish(evaluate_many(qs, budget=budget, engine=parse_engine(engine), order=order), json_path, None)

    _run(go)


@app.command("probe")
def probe_cmd(  # noqa: PLR0917 - typer reads the options from the signature
    reader: ReaderOpt = "smollm2",
    n_docs: Annotated[int, typer.Option("--n-docs", help="documents per context, the planted one included")] = 10,
    positions: Annotated[int | None, typer.Option(help="probe N evenly spread positions (default: all)")] = None,
    trials: Annotated[int, typer.Option(help="contexts per position")] = 3,
    placement: Annotated[str, typer.Option(help="document | sentence")] = "document",
    chunks: Annotated[
        Path | None, typer.Option(help="JSONL of your own chunks for the filler (default: demo corpus)")
    ] = None,
    max_chars: MaxCharsOpt = None,
    seed: Annotated[int, typer.Option(help="random seed of facts and filler")] = 0,
    max_new_tokens: TokensOpt = 24,
    threads: ThreadsOpt = 1,
    json_path: JsonOpt = None,
    png: PngOpt = None,
) -> None:
    """Planted-fact probe: accuracy by position of a planted fact (your lost-in-the-middle curve)."""

    def go() -> None:
        from ctxassembly.eval.probe import planted_fact_probe

        pool = None
        if chunks is not None:
            pool = [json.loads(x) for x in chunks.read_text(encoding="utf-8").splitlines() if x.strip()]
        result = planted_fact_probe(
            load_reader(reader, max_new_tokens=max_new_tokens, threads=threads),
            pool,
            n_docs=n_docs,
            positions=positions,
            trials=trials,
            placement=placement,  # type: ignore[arg-type]
            max_chars=max_chars,
            seed=seed,
        )
        _finish(result, json_path, png)

    _run(go)


@app.command("dilution")
def dilution_cmd(  # noqa: PLR0917 - typer reads the options from the signature
    questions: QuestionsArg = None,
    reader: ReaderOpt = "smollm2",
    sizes: Annotated[str, typer.Option(help="distractor counts, comma-separated")] = "0,4,16",
    placements: Annotated[str, typer.Option(help="gold placements: first, middle, last")] = "first,middle",
    limit: LimitOpt = None,
    max_chars: MaxCharsOpt = None,
    max_new_tokens: TokensOpt = 48,
    threads: ThreadsOpt = 1,
    json_path: JsonOpt = None,
    png: PngOpt = None,
) -> None:
    """Dilution curve: the gold chunk alone, then with distractors, placed first or in the middle."""

    def go() -> None:
        from ctxassembly.eval.dilution import dilution_curve

        result = dilution_curve(
            load_reader(reader, max_new_tokens=max_new_tokens, threads=threads),
            _questions(questions, limit),
            sizes=_ints(sizes, "sizes"),
            placements=[p.strip() for p in placements.split(",") if p.strip()],  # type: ignore[misc]
            max_chars=max_chars,
        )
        _finish(result, json_path, png)
        for qid, why in result.skipped.items():
            typer.echo(f"skipped {qid}: {why}")

    _run(go)


@app.command("histogram")
def histogram_cmd(  # noqa: PLR0917 - typer reads the options from the signature
    questions: QuestionsArg = None,
    reader: ReaderOpt = "smollm2",
    budget: Annotated[int, typer.Option(help="token budget of each assembled context")] = 1500,
    limit: LimitOpt = None,
    max_new_tokens: TokensOpt = 64,
    threads: ThreadsOpt = 1,
    json_path: JsonOpt = None,
    png: PngOpt = None,
) -> None:
    """Per-position citation histogram over a question set (contexts assembled within --budget)."""

    def go() -> None:
        from ctxassembly.eval.histogram import citation_histogram

        result = citation_histogram(
            load_reader(reader, max_new_tokens=max_new_tokens, threads=threads),
            _questions(questions, limit),
            budget=budget,
        )
        _finish(result, json_path, png)

    _run(go)


if __name__ == "__main__":
    app()
