import importlib
import re
from pathlib import Path

import pytest

import ctxassembly
from ctxassembly.errors import MissingExtraError

pytestmark = pytest.mark.unit


def test_public_surface_is_pinned():
    assert {
        "assemble",
        "Assembler",
        "Assembled",
        "Chunk",
        "Report",
        "Decision",
        "ChunkError",
        "ConfigError",
        "render",
        "parse",
        "prompt",
    } <= set(ctxassembly.__all__)
    for name in ctxassembly.__all__:
        assert getattr(ctxassembly, name) is not None


def test_core_imports_no_framework_and_no_torch():
    import subprocess
    import sys

    code = (
        "import sys, ctxassembly; ctxassembly.assemble('q', [{'id': 'a', 'text': 'x'}], budget=50); "
        "print(sorted(m for m in ('torch','sentence_transformers','langchain_core','llama_index') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_every_install_hint_names_a_real_extra():
    pyproject = (Path(__file__).parents[1] / "pyproject.toml").read_text()
    extras = set(
        re.findall(r"^(\w+) = \[", pyproject.split("[project.optional-dependencies]")[1].split("\n[")[0], re.M)
    )
    hints = set()
    for path in Path(ctxassembly.__file__).parent.rglob("*.py"):
        source = path.read_text()
        hints |= set(re.findall(r"ctxassembly\[(\w+)\]", source))
        hints |= set(re.findall(r"MissingExtraError\([^()]*?,\s*[\"'](\w+)[\"']\)", source))
    assert hints <= extras, hints - extras
    assert "ctxassembly[models]" in str(MissingExtraError("torch", "models"))


def test_errors_are_builtins_too():
    assert issubclass(ctxassembly.ChunkError, ValueError)
    assert issubclass(MissingExtraError, ImportError)
    importlib.import_module("ctxassembly.stages")
