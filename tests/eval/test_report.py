"""Report writing: CSV / JSON rows round-trip, Markdown holds the tables, HTML is one
self-contained file with its plots inline.

``FirstDocReaderDouble`` (conftest.py) stands in for a model reader; the probe,
dilution and histogram results here come from the real experiment functions run with
``EchoReaderDouble``, a test double that replies with its whole prompt (so every fact in
the context counts as found): the report code only needs real result objects.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from ctxassembly.errors import ConfigError
from ctxassembly.eval import (
    DilutionResult,
    HistogramResult,
    ProbeResult,
    citation_histogram,
    dilution_curve,
    planted_fact_probe,
)
from ctxassembly.eval.report import (
    Extras,
    load_extras,
    rich_table,
    summary_rows,
    write_csv,
    write_html,
    write_json,
    write_markdown,
)
from ctxassembly.eval.results import ABResult
from ctxassembly.eval.runner import run_ab
from tests.eval.conftest import RETRY, ROTATE, FirstDocReaderDouble

pytestmark = pytest.mark.unit


def echo_reader_double(prompt: str) -> str:
    """Test double of a model reader: echoes the prompt."""
    return prompt


@pytest.fixture(scope="module")
def result() -> ABResult:
    return run_ab([RETRY, ROTATE], budgets=[1000, 60], reader=FirstDocReaderDouble(), reader_name="first-doc")


@pytest.fixture(scope="module")
def extras() -> Extras:
    from ctxassembly.chunk import Chunk

    filler = [Chunk(id=f"f{i}", text=f"Filler paragraph number {i} about nothing.") for i in range(6)]
    return Extras(
        probe=planted_fact_probe(echo_reader_double, filler, n_docs=4, trials=1),
        dilution=dilution_curve(echo_reader_double, [RETRY], sizes=(0, 2)),
        histogram=citation_histogram(echo_reader_double, [RETRY, ROTATE], budget=500),
    )


def test_json_round_trip(result: ABResult, tmp_path: Path) -> None:
    path = Path(write_json(result, tmp_path / "out" / "rows.json"))
    back = ABResult.from_dict(json.loads(path.read_text()))
    assert back.to_dict() == result.to_dict()
    assert back.rows[0].metrics == result.rows[0].metrics


def test_csv_round_trip(result: ABResult, tmp_path: Path) -> None:
    path = write_csv(result, tmp_path / "rows.csv")
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(result.rows) == 3 * 2 * 2
    for got, want in zip(rows, result.rows, strict=True):
        assert (got["qid"], got["pipeline"], int(got["budget"])) == (want.qid, want.pipeline, want.budget)
        assert int(got["tokens"]) == want.metrics.tokens
        assert got["answer_kept"] == str(want.metrics.answer_kept)
        assert got["wrong_exposed"] == "|".join(want.metrics.wrong_exposed)
        assert got["correct"] == str(want.correct)
        assert got["answer"] == want.answer


def test_summary_rows_and_rich_table(result: ABResult) -> None:
    rows = summary_rows(result)
    assert rows[0][:4] == ["pipeline", "budget", "n", "answer kept"]
    assert "correct" in rows[0]
    assert rows[1][:4] == ["raw", "1000", "2", "100.0%"]
    assert rich_table(result).row_count == 6
    no_reader = run_ab([ROTATE], pipelines=["raw"])
    assert "correct" not in summary_rows(no_reader)[0]


def test_markdown_has_the_tables_and_linked_plots(result: ABResult, extras: Extras, tmp_path: Path) -> None:
    path = Path(write_markdown(result, tmp_path / "report.md", extras))
    text = path.read_text()
    assert "| pipeline | budget | n | answer kept |" in text
    assert re.search(r"^\| raw \| 1000 \| 2 \| 100\.0% \|", text, re.MULTILINE)
    assert "| position | accuracy | trials |" in text
    assert "| gold placed | +0 | +2 |" in text
    assert "| position | present | cited | cite rate | used | use rate |" in text
    for slug in ("budgets", "probe", "dilution", "histogram"):
        assert f"](report_img/{slug}.png)" in text
        assert (tmp_path / "report_img" / f"{slug}.png").read_bytes().startswith(b"\x89PNG")


def test_html_is_self_contained(result: ABResult, extras: Extras, tmp_path: Path) -> None:
    text = Path(write_html(result, tmp_path / "sub" / "report.html", extras)).read_text()
    assert text.count('src="data:image/png;base64,') == 4
    sources = re.findall(r"""(?:src|href)\s*=\s*["']([^"']*)""", text)
    assert sources
    assert all(s.startswith("data:image/png;base64,") for s in sources)
    assert "http" not in text.lower().replace("http-equiv", "")
    assert "<link" not in text
    assert "<script" not in text
    assert "<th>answer kept</th>" in text


def test_extras_round_trip_through_json(extras: Extras, tmp_path: Path) -> None:
    paths = {}
    for name in ("probe", "dilution", "histogram"):
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(json.dumps(getattr(extras, name).to_dict()))
    back = load_extras(**paths)
    assert isinstance(back.probe, ProbeResult)
    assert back.probe.to_dict() == extras.probe.to_dict()
    assert isinstance(back.dilution, DilutionResult)
    assert back.dilution.accuracy == extras.dilution.accuracy
    assert isinstance(back.histogram, HistogramResult)
    assert back.histogram.to_dict() == extras.histogram.to_dict()  # type: ignore[union-attr]


def test_a_report_of_extras_alone(extras: Extras, tmp_path: Path) -> None:
    text = Path(write_html(None, tmp_path / "probe.html", Extras(probe=extras.probe))).read_text()
    assert text.count("data:image/png;base64,") == 1


def test_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="nothing to report"):
        write_html(None, tmp_path / "x.html")
    with pytest.raises(ConfigError, match=r"no such file: '.*missing\.json'"):
        load_extras(probe=tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(ConfigError, match=r"bad\.json: not JSON"):
        load_extras(dilution=bad)
    bad.write_text("{}")
    with pytest.raises(ConfigError, match="probe result: missing key 'n_docs'"):
        load_extras(probe=bad)
    with pytest.raises(ConfigError, match="A/B result: missing key 'pipelines'"):
        ABResult.from_dict({})
