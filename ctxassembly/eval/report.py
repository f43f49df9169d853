"""Writing evaluation results: a rich terminal table, CSV / JSON rows, a Markdown report
and a self-contained HTML report.

The HTML file carries its plots inline (``<img src="data:image/png;base64,...">``) and
its style in a ``<style>`` block: it opens anywhere, offline, as one file. The Markdown
report writes its PNGs into a folder beside it (``<name>_img/``) and links them
relatively. Both hold the A/B summary table, the metrics-by-budget plot, and, when given,
the planted-fact probe, dilution curve and citation histogram (from this run or read
back from the JSON of earlier ``probe`` / ``dilution`` / ``histogram`` runs).

Usage::

    from ctxassembly.eval.report import Extras, write_html, write_markdown
    write_html(result, "report.html", Extras(probe=probe_result))
"""

from __future__ import annotations

import base64
import csv
import html
import io
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxassembly.errors import ConfigError
from ctxassembly.eval import plots
from ctxassembly.eval.results import (
    ABResult,
    DilutionResult,
    HistogramResult,
    ProbeResult,
    fmt_cell,
    summary_rows,
)

if TYPE_CHECKING:
    from rich.table import Table

__all__ = [
    "Extras",
    "load_extras",
    "read_json",
    "rich_table",
    "summary_rows",
    "write_csv",
    "write_html",
    "write_json",
    "write_markdown",
]


def rich_table(result: ABResult, title: str | None = None) -> Table:
    """The summary as a ``rich`` table, one row per pipeline × budget."""
    from rich.table import Table

    rows = summary_rows(result)
    table = Table(title=title, title_style="bold")
    for i, header in enumerate(rows[0]):
        table.add_column(header, justify="left" if i == 0 else "right", no_wrap=i == 0)
    for r in rows[1:]:
        table.add_row(*r)
    return table


def write_csv(result: ABResult, path: str | Path) -> str:
    """Per-question rows as CSV (``wrong_exposed`` joined by ``|``, empty cell for None)."""
    rows = [r.to_dict() for r in result.rows]
    names = list(rows[0]) if rows else ["qid", "pipeline", "budget"]
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with Path(path).open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=names)
        w.writeheader()
        for r in rows:
            w.writerow({k: _cell(v) for k, v in r.items()})
    return str(path)


def _cell(value: object) -> object:
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return "|".join(map(str, value))
    return value


def write_json(result: ABResult, path: str | Path) -> str:
    """The whole result (pipelines, budgets, reader, summary, rows) as JSON."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(result.to_dict(), indent=1, ensure_ascii=False), encoding="utf-8")
    return str(path)


def read_json(path: str | Path) -> Any:
    """A JSON file written by one of the eval commands.

    :raises ConfigError: a missing file or one that is not JSON (with its path).
    """
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"no such file: {str(path)!r}") from None
    except json.JSONDecodeError as e:
        raise ConfigError(f"{path}: not JSON: {e}") from None


@dataclass(frozen=True)
class Extras:
    """Results of the other instruments to put in a report beside the A/B run."""

    probe: ProbeResult | None = None
    dilution: DilutionResult | None = None
    histogram: HistogramResult | None = None


def load_extras(
    probe: str | Path | None = None, dilution: str | Path | None = None, histogram: str | Path | None = None
) -> Extras:
    """:class:`Extras` read back from the ``--json`` files of earlier runs.

    :raises ConfigError: a missing or malformed file.
    """
    return Extras(
        probe=None if probe is None else ProbeResult.from_dict(read_json(probe)),
        dilution=None if dilution is None else DilutionResult.from_dict(read_json(dilution)),
        histogram=None if histogram is None else HistogramResult.from_dict(read_json(histogram)),
    )


@dataclass(frozen=True)
class _Section:
    slug: str  # the PNG's file name in the Markdown report
    title: str
    text: str  # one paragraph of explanation
    rows: list[list[str]]  # a table, header first
    png: bytes | None


def _png(plot: Callable[[Any, Any], str], obj: object) -> bytes:
    buf = io.BytesIO()
    plot(obj, buf)
    return buf.getvalue()


def _sections(result: ABResult | None, extras: Extras) -> list[_Section]:
    out = []
    if result is not None:
        n = len({r.qid for r in result.rows})
        who = f"reader: {result.reader}" if result.reader is not None else "no reader: context metrics only"
        out.append(
            _Section(
                "budgets",
                "A/B: pipelines × budgets",
                f"{n} questions; pipelines {', '.join(result.pipelines)}; budgets "
                f"{', '.join(map(str, result.budgets))} tokens; {who}. Rates are over the questions each "
                "metric applies to (wrong exposure: questions with wrong-version/scope strings; edge and "
                "middle: contexts that hold the answer).",
                summary_rows(result),
                _png(plots.plot_budgets, result),
            )
        )
    if extras.probe is not None:
        p = extras.probe
        rows = [["position", "accuracy", "trials"]]
        rows += [[str(k), f"{v:.2f}", str(sum(r.position == k for r in p.rows))] for k, v in p.accuracy.items()]
        out.append(
            _Section(
                "probe",
                "Planted-fact probe: accuracy by position",
                f"A planted fact at each position of a {p.n_docs}-document context ({p.placement} placement), "
                f"{p.trials} trial(s) per position; overall accuracy {p.overall:.2f}.",
                rows,
                _png(plots.plot_probe, p),
            )
        )
    if extras.dilution is not None:
        d = extras.dilution
        rows = [["gold placed", *[f"+{k}" for k in d.sizes]]]
        rows += [[pl, *[fmt_cell(d.accuracy[pl].get(k), "%") for k in d.sizes]] for pl in d.placements]
        out.append(
            _Section(
                "dilution",
                "Dilution curve",
                "Reader accuracy with the gold chunk alone and with more retrieved distractors, gold placed "
                f"first or in the middle; {len({r.qid for r in d.rows})} questions, {len(d.skipped)} skipped.",
                rows,
                _png(plots.plot_dilution, d),
            )
        )
    if extras.histogram is not None:
        h = extras.histogram
        rows = [["position", "present", "cited", "cite rate", "used", "use rate"]]
        rows += [
            [str(i), str(n), str(h.cited[i]), f"{h.cite_rate[i]:.2f}", str(h.used[i]), f"{h.use_rate[i]:.2f}"]
            for i, n in enumerate(h.present)
        ]
        out.append(
            _Section(
                "histogram",
                "Citation histogram",
                f"Which positions the reader cites and answers from, over {len(h.rows)} questions "
                f"({h.uncited} replies cited nothing).",
                rows,
                _png(plots.plot_histogram, h),
            )
        )
    if not out:
        raise ConfigError("nothing to report: give an A/B result or at least one probe/dilution/histogram result")
    return out


def _md_table(rows: Sequence[Sequence[str]]) -> str:
    def esc(c: str) -> str:
        return c.replace("|", "\\|")

    head, *body = rows
    align = ["---"] + ["---:"] * (len(head) - 1)
    lines = ["| " + " | ".join(map(esc, head)) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(map(esc, r)) + " |" for r in body]
    return "\n".join(lines)


def write_markdown(
    result: ABResult | None, path: str | Path, extras: Extras | None = None, *, title: str = "Evaluation report"
) -> str:
    """A Markdown report; its PNGs go to ``<stem>_img/`` beside it.

    :raises ConfigError: nothing to report.
    """
    out = Path(path)
    sections = _sections(result, extras or Extras())
    img_dir = out.with_name(out.stem + "_img")
    parts = [f"# {title}", ""]
    for s in sections:
        parts += [f"## {s.title}", "", s.text, "", _md_table(s.rows), ""]
        if s.png is not None:
            img_dir.mkdir(parents=True, exist_ok=True)
            (img_dir / f"{s.slug}.png").write_bytes(s.png)
            parts += [f"![{s.title}]({img_dir.name}/{s.slug}.png)", ""]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(parts), encoding="utf-8")
    return str(out)


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:.9em}
th,td{border:1px solid #ccc;padding:.3em .6em;text-align:right}
th:first-child,td:first-child{text-align:left}
th{background:#f3f3f3}
img{max-width:100%;border:1px solid #eee}
"""


def write_html(
    result: ABResult | None, path: str | Path, extras: Extras | None = None, *, title: str = "Evaluation report"
) -> str:
    """A self-contained HTML report: inline CSS, plots as base64 PNG data URIs.

    :raises ConfigError: nothing to report.
    """
    sections = _sections(result, extras or Extras())
    e = html.escape
    body = [f"<h1>{e(title)}</h1>"]
    for s in sections:
        head, *rows = s.rows
        table = "<table><thead><tr>" + "".join(f"<th>{e(c)}</th>" for c in head) + "</tr></thead><tbody>"
        table += "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>" for r in rows) + "</tbody></table>"
        body += [f"<h2>{e(s.title)}</h2>", f"<p>{e(s.text)}</p>", table]
        if s.png is not None:
            data = base64.b64encode(s.png).decode("ascii")
            body.append(f'<img alt="{e(s.title)}" src="data:image/png;base64,{data}">')
    doc = (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{e(title)}</title>'
        f"<style>{_CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(doc, encoding="utf-8")
    return str(path)


def result_from_json(data: Mapping[str, Any]) -> ABResult:
    """An :class:`~ctxassembly.eval.results.ABResult` from its JSON (see :func:`write_json`)."""
    return ABResult.from_dict(data)
