"""The evaluation commands (``eval``, ``probe``, ``dilution``, ``histogram``, ``calibrate``,
``calibrate-weights``: top-level commands of ``ctxassembly``, in :mod:`ctxassembly.cli.eval`),
run the way a user runs them (the SmolLM2 end-to-end runs are in test_smollm2.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ctxassembly.cli import app
from ctxassembly.cli.eval import load_reader
from ctxassembly.errors import ConfigError
from tests.conftest import DevData

pytestmark = pytest.mark.unit

runner = CliRunner()


def test_help_runs_as_a_module_and_loads_no_eval_module() -> None:
    # `python -m ctxassembly --help` lists every command, and the commands import what they
    # run only when they run
    code = (
        "import runpy, sys\n"
        "sys.argv = ['ctxassembly', '--help']\n"
        "try:\n    runpy.run_module('ctxassembly', run_name='__main__')\n"
        "except SystemExit as e:\n    assert e.code == 0, e.code\n"
        "loaded = [m for m in sys.modules if m.startswith(('ctxassembly.eval', 'ctxassembly.llm', 'torch'))]\n"
        "print('LOADED', loaded)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    for command in ("assemble", "demo", "eval", "probe", "dilution", "histogram", "calibrate", "calibrate-weights"):
        assert f" {command} " in out.stdout
    assert "LOADED []" in out.stdout


def test_core_does_not_import_eval() -> None:
    code = "import sys, ctxassembly; assert not [m for m in sys.modules if m.startswith('ctxassembly.eval')]"
    code += "; assert 'torch' not in sys.modules and 'matplotlib' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_eval_import_stays_light() -> None:
    code = "import sys, ctxassembly.eval; bad = {'torch', 'transformers', 'matplotlib'} & set(sys.modules)"
    code += "; assert not bad, bad"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize(
    ("command", "option"),
    [
        ("eval", "--pipeline"),
        ("probe", "--n-docs"),
        ("dilution", "--sizes"),
        ("histogram", "--budget"),
        ("calibrate", "--min-scores"),
        ("calibrate-weights", "--encoder"),
    ],
)
def test_the_commands_are_top_level(command: str, option: str) -> None:
    # each command answers under its own name with its own options, and a name that is
    # not a command fails
    result = runner.invoke(app, [command, "--help"], prog_name="ctxassembly")
    assert result.exit_code == 0, result.output
    assert f"Usage: ctxassembly {command} " in result.output
    assert option in result.output
    missing = runner.invoke(app, [f"{command}x", "--help"], prog_name="ctxassembly")
    assert missing.exit_code == 2
    assert f"No such command '{command}x'" in missing.output


def test_acceptance_two_budgets_on_the_bench_questions(dev_data: DevData, tmp_path: Path) -> None:
    # the acceptance command: ctxassembly eval questions.jsonl --budget 1000 --budget 500
    path = dev_data.path("django")  # questions.jsonl.gz, read directly
    out = tmp_path / "ab.json"
    result = runner.invoke(app, ["eval", str(path), "--budget", "1000", "--budget", "500", "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "answer kept" in result.output
    for name in ("raw", "dedup", "assembler"):
        assert name in result.output
    data = json.loads(out.read_text())
    assert [(s["pipeline"], s["budget"]) for s in data["summary"]] == [
        (p, b) for p in ("raw", "dedup", "assembler") for b in (1000, 500)
    ]
    assert all(s["n"] == 40 and s["errors"] == 0 for s in data["summary"])
    assert all(r["tokens"] <= r["budget"] for r in data["rows"])
    cell = {(s["pipeline"], s["budget"]): s for s in data["summary"]}
    # what assembly is for: more answers kept and fewer wrong-version strings than raw top-k
    for b in (1000, 500):
        assert cell["assembler", b]["answer_kept"] > cell["raw", b]["answer_kept"]
        assert cell["assembler", b]["wrong_exposure"] < cell["raw", b]["wrong_exposure"]
        assert cell["raw", b]["accuracy"] is None


def test_eval_on_the_demo_questions_with_outputs(tmp_path: Path) -> None:
    args = ["eval", "--budget", "800", "--pipeline", "assembler", "--pipeline", "raw=naive", "--limit", "3"]
    outs = {"--csv": tmp_path / "r.csv", "--report": tmp_path / "r.md", "--html": tmp_path / "r.html"}
    result = runner.invoke(app, [*args, *[x for kv in outs.items() for x in map(str, kv)]])
    assert result.exit_code == 0, result.output
    assert "naive" in result.output
    assert len(outs["--csv"].read_text().splitlines()) == 1 + 2 * 3
    assert "| naive | 800 | 3 |" in outs["--report"].read_text()
    assert "data:image/png;base64," in outs["--html"].read_text()


def test_eval_a_pipeline_from_a_file(tmp_path: Path) -> None:
    mine = tmp_path / "mine.py"
    mine.write_text("def top1(question, candidates, budget, target_version):\n    return candidates[:1]\n")
    path = tmp_path / "q.jsonl"
    record = {"qid": "x", "question": "What?", "answer": ["alpha"], "candidates": [{"id": "a", "text": "alpha beta"}]}
    path.write_text(json.dumps(record) + "\n")
    out = tmp_path / "o.json"
    result = runner.invoke(app, ["eval", str(path), "--pipeline", f"{mine}:top1", "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["summary"][0]["answer_kept"] == 1.0


def test_eval_unknown_pipeline_names_it() -> None:
    result = runner.invoke(app, ["eval", "--pipeline", "nosuch", "--limit", "1"])
    assert result.exit_code == 2
    assert "unknown pipeline 'nosuch'" in result.output


def test_eval_probe_flag_needs_a_reader() -> None:
    result = runner.invoke(app, ["eval", "--probe", "--limit", "1"])
    assert result.exit_code == 2
    assert "--probe and --dilution need a reader" in result.output


def test_eval_with_a_reader_and_earlier_results(tmp_path: Path) -> None:
    probe_json = tmp_path / "probe.json"
    got = runner.invoke(
        app, ["probe", "--reader", "textwrap:dedent", "--n-docs", "3", "--trials", "1", "--json", str(probe_json)]
    )
    assert got.exit_code == 0, got.output
    html = tmp_path / "r.html"
    args = ["eval", "--limit", "2", "--pipeline", "raw", "--reader", "textwrap:dedent", "--histogram"]
    result = runner.invoke(app, [*args, "--probe-json", str(probe_json), "--html", str(html)])
    assert result.exit_code == 0, result.output
    assert "correct" in result.output  # textwrap.dedent echoes the prompt: a real str -> str callable
    assert html.read_text().count("data:image/png;base64,") == 3  # budgets, probe, histogram


def test_a_reader_by_import_path(tmp_path: Path) -> None:
    # textwrap.dedent is a real callable str -> str that echoes the prompt
    reader = load_reader("textwrap:dedent")
    assert reader("  a") == "a"
    result = runner.invoke(app, ["probe", "--reader", "textwrap:dedent", "--n-docs", "3", "--trials", "1"])
    assert result.exit_code == 0, result.output
    assert "1.00" in result.output  # an echo of the prompt always "contains" the fact


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ("gpt-4", "reader must be 'smollm2' or 'module:attr'"),
        ("no_such_module_x:f", "No module named"),
        ("textwrap:nope", "has no attribute 'nope'"),
    ],
)
def test_bad_reader_spec(spec: str, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        load_reader(spec)


def test_errors_exit_2_with_a_message() -> None:
    result = runner.invoke(app, ["dilution", "--reader", "textwrap:dedent", "--sizes", "a,b"])
    assert result.exit_code == 2
    assert "sizes must be comma-separated ints, got 'a,b'" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["probe", "--placement", "inline"], "placement must be 'document' or 'sentence', got 'inline'"),
        (["dilution", "--placements", "first,centre"], "placements must be among ('first', 'middle', 'last'), got"),
        (["dilution", "--placements", ","], "placements must be among ('first', 'middle', 'last'), got []"),
    ],
)
def test_a_bad_placement_is_refused_before_any_reader_call(args: list[str], message: str) -> None:
    result = runner.invoke(app, [*args, "--reader", "textwrap:dedent"])
    assert result.exit_code == 2
    assert message in result.output
