import json

import pytest
from typer.testing import CliRunner

from ctxassembly.cli import app

pytestmark = pytest.mark.unit
runner = CliRunner()


def test_assemble_json_out(tmp_path, dev_data):
    rec = dev_data.records("django")[0]
    f = tmp_path / "cands.json"
    f.write_text(json.dumps({"question": rec["question"], "candidates": rec["candidates"]}))
    r = runner.invoke(app, ["assemble", str(f), "--budget", "800", "--format", "json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["report"]["budget"] == 800
    assert len(out["report"]["decisions"]) == 40
    assert all(c["version"] == "5.1" for c in out["chunks"])


def test_assemble_jsonl_to_xml_and_errors(tmp_path):
    f = tmp_path / "c.jsonl"
    lines = [
        {"id": "a", "text": "Retry limit is 5.", "version": "3.3"},
        {"id": "b", "text": "Retry limit is 3.", "version": "3.1"},
    ]
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    r = runner.invoke(app, ["assemble", str(f), "-q", "retry limit?", "--budget", "200"])
    assert r.exit_code == 0
    assert r.output.startswith('<document id="1"')
    assert "3.1" not in r.output
    assert runner.invoke(app, ["assemble", str(f)]).exit_code != 0  # no question
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "text": 5}\n{"id": "b", "text": "fine"}\n')
    r = runner.invoke(app, ["assemble", str(bad), "-q", "x", "--format", "json"])
    assert r.exit_code == 0, r.output  # one odd chunk is a decision, not a failed call
    decisions = json.loads(r.output)["report"]["decisions"]
    assert decisions[0]["reason"] == "invalid"
    assert "field 'text'" in decisions[0]["detail"]["error"]
    assert decisions[1]["reason"] == "kept"


def test_demo_runs_on_the_bundled_corpus():
    r = runner.invoke(app, ["demo", "--budget", "600"])
    assert r.exit_code == 0, r.output
    assert "naive top-40" in r.output
    assert "assembled (budget 600)" in r.output
    assert "target version" in r.output
