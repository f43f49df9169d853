"""The LLM layer stands on the core alone: importing it loads no evaluation or CLI module."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    "module",
    ["ctxassembly.llm", "ctxassembly.llm.extract", "ctxassembly.llm.mapreduce", "ctxassembly.llm.summarize"],
)
def test_importing_an_llm_stage_loads_no_eval_cli_or_model_library(module: str) -> None:
    code = (
        f"import importlib, json, sys; importlib.import_module({module!r}); "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('ctxassembly', 'torch', 'transformers')))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = json.loads(out)
    assert module in loaded  # the probe really imported the module
    outer = [m for m in loaded if m.startswith(("ctxassembly.eval", "ctxassembly.cli"))]
    assert outer == []
    heavy = [m for m in loaded if m.startswith(("torch", "transformers"))]
    assert heavy == []
