"""The eval commands, run the way a user runs them (the SmolLM2 end-to-end run is in
test_smollm2.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ctxassembly.errors import ConfigError
from ctxassembly.eval.cli import app, load_reader

pytestmark = pytest.mark.unit

runner = CliRunner()


@pytest.mark.parametrize("command", ["metrics", "probe", "dilution", "histogram"])
def test_help_runs_as_a_module(command: str) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "ctxassembly.eval.cli", command, "--help"], capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stderr
    assert "Usage" in out.stdout


def test_core_does_not_import_eval() -> None:
    code = "import sys, ctxassembly; assert not [m for m in sys.modules if m.startswith('ctxassembly.eval')]"
    code += "; assert 'torch' not in sys.modules and 'matplotlib' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_eval_import_stays_light() -> None:
    code = "import sys, ctxassembly.eval; bad = {'torch', 'transformers', 'matplotlib'} & set(sys.modules)"
    code += "; assert not bad, bad"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_metrics_on_the_demo_questions(tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    result = runner.invoke(app, ["metrics", "--budget", "800", "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "context_recall" in result.output
    data = json.loads(out.read_text())
    assert data["n"] == len(data["rows"]) > 0
    assert all(r["tokens"] <= 800 for r in data["rows"])


def test_metrics_on_a_questions_file(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    record = {"qid": "x", "question": "What?", "answer": ["alpha"], "candidates": [{"id": "a", "text": "alpha beta"}]}
    path.write_text(json.dumps(record) + "\n")
    result = runner.invoke(app, ["metrics", str(path)])
    assert result.exit_code == 0, result.output
    assert "answer_kept        1.0" in result.output


def test_a_reader_by_import_path(tmp_path: Path) -> None:
    # textwrap.dedent is a real callable str -> str that echoes the prompt
    reader = load_reader("textwrap:dedent")
    assert reader("  a") == "a"
    result = runner.invoke(app, ["probe", "--reader", "textwrap:dedent", "--n-docs", "3", "--trials", "1"])
    assert result.exit_code == 0, result.output
    assert "1.00" in result.output  # an echo of the prompt always "contains" the fact


@pytest.mark.parametrize(
    ("spec", "match"),
    [("gpt-4", "reader must be 'smollm2' or 'module:attr'"), ("no_such_module_x:f", "No module named"),
     ("textwrap:nope", "has no attribute 'nope'")],
)
def test_bad_reader_spec(spec: str, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        load_reader(spec)


def test_errors_exit_2_with_a_message() -> None:
    result = runner.invoke(app, ["dilution", "--reader", "textwrap:dedent", "--sizes", "a,b"])
    assert result.exit_code == 2
    assert "sizes must be comma-separated ints, got 'a,b'" in result.output
