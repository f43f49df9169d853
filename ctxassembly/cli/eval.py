"""The evaluation commands: ``eval`` (the A/B runner), ``probe``, ``dilution``, ``histogram``,
``calibrate`` and ``calibrate-weights`` (thresholds and weights, :mod:`ctxassembly.eval.calibrate`).

:func:`register` mounts them as top-level commands of ``ctxassembly``
(``python -m ctxassembly ...`` works too). Without a questions file, the commands use
the bundled Django demo questions; ``probe``, ``dilution`` and ``histogram`` default to
the local SmolLM2 reader, ``eval`` asks no reader unless ``--reader`` is given.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from ctxassembly.errors import ChunkError, ConfigError, MissingExtraError
from ctxassembly.jsonl import read_jsonl

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
    from ctxassembly.llm.readers import SmolLM2Reader, as_reader

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


def _need_matplotlib() -> None:
    """:raises MissingExtraError: matplotlib cannot be imported (extra ``eval``)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as e:
        raise MissingExtraError("matplotlib", "eval") from e


def _run(fn: Any) -> None:
    try:
        fn()
    except (ConfigError, ChunkError, ImportError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from None


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
        from ctxassembly.eval.probe import parse_placement, planted_fact_probe

        pool = None
        if chunks is not None:
            pool = list(read_jsonl(chunks))
        result = planted_fact_probe(
            load_reader(reader, max_new_tokens=max_new_tokens, threads=threads),
            pool,
            n_docs=n_docs,
            positions=positions,
            trials=trials,
            placement=parse_placement(placement),
            max_chars=max_chars,
            seed=seed,
        )
        _finish(result, json_path, png)

    _run(go)


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
        from ctxassembly.eval.dilution import dilution_curve, parse_placements

        result = dilution_curve(
            load_reader(reader, max_new_tokens=max_new_tokens, threads=threads),
            _questions(questions, limit),
            sizes=_ints(sizes, "sizes"),
            placements=parse_placements([p.strip() for p in placements.split(",") if p.strip()]),
            max_chars=max_chars,
        )
        _finish(result, json_path, png)
        for qid, why in result.skipped.items():
            typer.echo(f"skipped {qid}: {why}")

    _run(go)


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


def eval_cmd(  # noqa: PLR0917 - typer reads the options from the signature
    questions: QuestionsArg = None,
    budget: Annotated[list[int] | None, typer.Option(help="token budget (repeatable; default 1000)")] = None,
    pipeline: Annotated[
        list[str] | None,
        typer.Option(
            help="raw | dedup | assembler | module:attr | file.py:attr, '=label' renames (repeatable; "
            "default: the three built-ins)"
        ),
    ] = None,
    reader: Annotated[
        str | None, typer.Option(help="ask a reader too: 'smollm2' or 'module:attr' (default: metrics only)")
    ] = None,
    limit: LimitOpt = None,
    engine: Annotated[
        str, typer.Option(help="local | ray (assembler rows on Ray Data, extra 'ray'; same results)")
    ] = "local",
    order: Annotated[
        str, typer.Option(help="order of the built-in assembler: bookend | edges | relevance | reading")
    ] = "bookend",
    max_new_tokens: TokensOpt = 48,
    threads: ThreadsOpt = 1,
    csv_path: Annotated[Path | None, typer.Option("--csv", help="write the per-question rows as CSV here")] = None,
    json_path: Annotated[Path | None, typer.Option("--json", help="write summary and rows as JSON here")] = None,
    report: Annotated[
        Path | None, typer.Option("--report", help="write a Markdown report here (PNGs beside it)")
    ] = None,
    html_path: Annotated[Path | None, typer.Option("--html", help="write a self-contained HTML report here")] = None,
    probe_json: Annotated[Path | None, typer.Option(help="add an earlier 'probe --json' result to the report")] = None,
    dilution_json: Annotated[Path | None, typer.Option(help="add an earlier 'dilution --json' result")] = None,
    histogram_json: Annotated[Path | None, typer.Option(help="add an earlier 'histogram --json' result")] = None,
    probe: Annotated[bool, typer.Option("--probe", help="also run the planted-fact probe with --reader")] = False,
    dilution: Annotated[bool, typer.Option("--dilution", help="also run the dilution curve with --reader")] = False,
    histogram: Annotated[bool, typer.Option("--histogram", help="also run the citation histogram")] = False,
) -> None:
    """A/B: pipelines x budgets over a question file, one reader and prompt for all.

    Prints the summary table; without --reader only the context metrics (a few seconds).
    """

    def go() -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        from ctxassembly.eval.report import load_extras, rich_table, write_csv, write_html, write_json, write_markdown
        from ctxassembly.eval.runner import run_ab

        if (probe or dilution) and reader is None:
            raise ConfigError("--probe and --dilution need a reader: add --reader smollm2 (or module:attr)")
        if report is not None or html_path is not None:
            _need_matplotlib()  # the reports draw their plots: say so before the run, not after it
        qs = _questions(questions, limit)
        budgets = [1000] if not budget else list(budget)
        ask = None if reader is None else load_reader(reader, max_new_tokens=max_new_tokens, threads=threads)
        console = Console(width=180)  # every column on one line, in a terminal or a pipe
        total = len(budgets) * len(qs) * (len(pipeline) if pipeline else 3)
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
        ) as bar:
            task = bar.add_task("eval", total=total)
            result = run_ab(
                qs,
                budgets=budgets,
                pipelines=pipeline or None,
                reader=ask,
                reader_name=reader,
                engine=engine,
                assemble_options={"order": order},
                on_step=lambda name, b, q: bar.update(task, advance=1, description=f"{name} @{b} {q.qid}"),
            )
        console.print(rich_table(result, title=f"{len(qs)} questions" + (f", reader {reader}" if reader else "")))
        errors = [r for r in result.rows if r.error]
        for r in errors[:5]:
            typer.echo(f"error in {r.pipeline} @{r.budget} on {r.qid}: {r.error}", err=True)
        extras = _extras(
            load_extras(probe_json, dilution_json, histogram_json),
            ask,
            qs,
            budgets[0],
            probe=probe,
            dilution=dilution,
            histogram=histogram,
        )
        for path, write in ((csv_path, write_csv), (json_path, write_json)):
            if path is not None:
                typer.echo(f"wrote {write(result, path)}")
        title = f"Evaluation report: {questions.name if questions is not None else 'demo questions'}"
        for path, write in ((report, write_markdown), (html_path, write_html)):
            if path is not None:
                typer.echo(f"wrote {write(result, path, extras, title=title)}")

    _run(go)


def _extras(
    loaded: Any, reader: Any, qs: list[Any], budget: int, *, probe: bool, dilution: bool, histogram: bool
) -> Any:
    """``loaded`` with the instruments asked for by flag run now (they need the reader)."""
    from dataclasses import replace

    if histogram and reader is None:
        raise ConfigError("--histogram needs a reader: add --reader smollm2 (or module:attr)")
    if probe:
        from ctxassembly.eval.probe import planted_fact_probe

        loaded = replace(loaded, probe=planted_fact_probe(reader, n_docs=10, positions=5, trials=2, max_chars=300))
    if dilution:
        from ctxassembly.eval.dilution import dilution_curve

        loaded = replace(loaded, dilution=dilution_curve(reader, [q for q in qs if q.answer], max_chars=400))
    if histogram:
        from ctxassembly.eval.histogram import citation_histogram

        loaded = replace(loaded, histogram=citation_histogram(reader, qs, budget=budget))
    return loaded


def _floats(text: str | None, name: str) -> list[float | None] | None:
    if text is None:
        return None
    out: list[float | None] = []
    for part in text.split(","):
        p = part.strip().lower()
        if not p:
            continue
        if p in ("none", "exact"):
            out.append(None)
            continue
        try:
            out.append(float(p))
        except ValueError:
            raise ConfigError(f"{name} must be comma-separated numbers (or 'none'), got {text!r}") from None
    return out


def calibrate_cmd(  # noqa: PLR0917 - typer maps each parameter to a CLI option
    questions: Annotated[Path, typer.Argument(help="JSONL of labelled questions with their candidates")],
    budget: Annotated[int, typer.Option(help="token budget of the context")] = 500,
    min_scores: Annotated[
        str | None, typer.Option("--min-scores", help="score grid, e.g. 'none,0.4,0.5' (default: percentiles)")
    ] = None,
    near: Annotated[str | None, typer.Option("--near", help="near-dup grid, e.g. 'exact,0.7,0.8,0.9'")] = None,
    encoder: Annotated[
        str | None, typer.Option(help="a sentence-transformers model path: calibrate with it as reranker and embedder")
    ] = None,
    limit: Annotated[int | None, typer.Option(help="use only the first N questions")] = None,
    json_path: Annotated[Path | None, typer.Option("--json", help="write the whole curve as JSON here")] = None,
) -> None:
    """Find the relevance and near-dup thresholds that keep the answer most often within a
    budget on a labelled sample, and print the curve."""
    from ctxassembly.eval.calibrate import NEAR_GRID, calibrate

    try:
        records = list(read_jsonl(questions))[:limit]
        options: dict[str, Any] = {}
        if encoder is not None:  # one model for both; the assembler shares its cache
            options = {"reranker": encoder, "embedder": encoder}
        grid_n = _floats(near, "--near")
        result = calibrate(
            records,
            budget=budget,
            min_scores=_floats(min_scores, "--min-scores"),
            near_thresholds=NEAR_GRID if grid_n is None else grid_n,
            source=questions.name + ("" if encoder is None else f", encoder {encoder}"),
            **options,
        )
    except (ConfigError, OSError, json.JSONDecodeError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from None
    typer.echo(result.table())
    if json_path is not None:
        json_path.write_text(json.dumps(result.to_dict(), indent=2), encoding="utf-8")


def calibrate_weights_cmd(
    questions: Annotated[list[Path], typer.Argument(help="two or more JSONL files of labelled questions")],
    budget: Annotated[list[int] | None, typer.Option(help="token budget (repeat for several)")] = None,
    encoder: Annotated[
        str | None, typer.Option(help="a sentence-transformers model path: also choose the rerank fusion weight")
    ] = None,
    limit: Annotated[int | None, typer.Option(help="use only the first N questions of each file")] = None,
) -> None:
    """Leave-one-corpus-out: hold each file out, choose the relevance weights on the others, measure on it."""
    from ctxassembly.eval.calibrate import FUSE_GRID, LOCO_BUDGETS, loco

    try:
        corpora: dict[str, list[dict[str, Any]]] = {}
        for path in questions:
            corpora[path.parent.name or path.stem] = list(read_jsonl(path))[:limit]
        options: dict[str, Any] = {}
        fuse: tuple[float | None, ...] = (None,)
        if encoder is not None:
            options = {"reranker": encoder, "embedder": encoder}
            fuse = FUSE_GRID
        result = loco(corpora, budgets=tuple(budget or LOCO_BUDGETS), fuse=fuse, **options)
    except (ConfigError, OSError, json.JSONDecodeError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from None
    typer.echo(result.table())


def register(app: typer.Typer) -> None:
    """Mount ``eval``, ``probe``, ``dilution``, ``histogram``, ``calibrate`` and
    ``calibrate-weights`` on ``app`` as top-level commands."""
    app.command("eval")(eval_cmd)
    app.command("probe")(probe_cmd)
    app.command("dilution")(dilution_cmd)
    app.command("histogram")(histogram_cmd)
    app.command("calibrate")(calibrate_cmd)
    app.command("calibrate-weights")(calibrate_weights_cmd)
