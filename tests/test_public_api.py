import importlib
import re
from pathlib import Path

import pytest

import ctxassembly
from ctxassembly.errors import MissingExtraError

pytestmark = pytest.mark.unit


# every public name and the module that defines it: a new export must be added here
PUBLIC = {
    "AbsentVersionError": "ctxassembly.errors",
    "AbsentVersionWarning": "ctxassembly.errors",
    "Admit": "ctxassembly.stages.admit",
    "Arrange": "ctxassembly.stages.arrange",
    "Assembled": "ctxassembly.assembler",
    "Assembler": "ctxassembly.assembler",
    "Chunk": "ctxassembly.chunk",
    "ChunkError": "ctxassembly.errors",
    "ConfigError": "ctxassembly.errors",
    "Context": "ctxassembly.pipeline",
    "Decision": "ctxassembly.report",
    "Dedup": "ctxassembly.stages.dedup",
    "Excerpt": "ctxassembly.stages.excerpt",
    "Extract": "ctxassembly.stages.extract",
    "Horizon": "ctxassembly.stages.horizon",
    "Merge": "ctxassembly.stages.merge",
    "MissingExtraError": "ctxassembly.errors",
    "Facts": "ctxassembly.ledger",
    "Ledger": "ctxassembly.ledger",
    "Options": "ctxassembly.options",
    "Reason": "ctxassembly.kinds",
    "Relevance": "ctxassembly.stages.relevance",
    "Report": "ctxassembly.report",
    "Rerank": "ctxassembly.stages.rerank",
    "Safety": "ctxassembly.stages.safety",
    "Select": "ctxassembly.stages.select",
    "SemanticDedup": "ctxassembly.stages.semantic",
    "Stage": "ctxassembly.pipeline",
    "StageBase": "ctxassembly.pipeline",
    "Tables": "ctxassembly.stages.tables",
    "UnknownOption": "ctxassembly.options",
    "VersionFilter": "ctxassembly.stages.version",
    "assemble": "ctxassembly.assembler",
    "parse": "ctxassembly.render",
    "prompt": "ctxassembly.render",
    "render": "ctxassembly.render",
}
STAGES = [name for name, module in PUBLIC.items() if module.startswith("ctxassembly.stages.")]


def test_all_is_pinned_exactly():
    assert sorted(ctxassembly.__all__) == sorted(PUBLIC)
    assert len(ctxassembly.__all__) == len(set(ctxassembly.__all__))


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_each_public_name_is_the_object_its_module_defines(name):
    assert getattr(ctxassembly, name) is getattr(importlib.import_module(PUBLIC[name]), name)


@pytest.mark.parametrize("name", STAGES)
def test_each_public_stage_keeps_the_stage_contract(name):
    stage_class = getattr(ctxassembly, name)
    assert issubclass(stage_class, ctxassembly.StageBase)
    assert isinstance(stage_class.name, str)
    assert stage_class.name


def test_the_public_functions_work_together():
    candidates = [{"id": "a", "text": "The retry limit is 5.", "title": "Retries"}, {"id": "b", "text": "Unrelated."}]
    result = ctxassembly.assemble("What is the retry limit?", candidates, budget=200)
    assert isinstance(result, ctxassembly.Assembled)
    assert isinstance(result.report, ctxassembly.Report)
    assert all(isinstance(d, ctxassembly.Decision) for d in result.report.decisions)
    assert [c.id for c in result.chunks] == ["a", "b"]
    assert result.text == ctxassembly.render(result.chunks)
    assert [d["text"] for d in ctxassembly.parse(result.text)] == ["The retry limit is 5.", "Unrelated."]
    assert ctxassembly.prompt(result.text, "q?").endswith("Question: q?")
    assembler = ctxassembly.Assembler(ctxassembly.Options())  # the defaults assemble() uses
    assert assembler.run("What is the retry limit?", candidates, budget=200).text == result.text


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
    assert issubclass(ctxassembly.ConfigError, ValueError)
    assert issubclass(ctxassembly.UnknownOption, ctxassembly.ConfigError)
    assert issubclass(ctxassembly.UnknownOption, TypeError)
    assert issubclass(MissingExtraError, ImportError)
    assert issubclass(ctxassembly.AbsentVersionError, ctxassembly.ConfigError)
    assert issubclass(ctxassembly.AbsentVersionWarning, UserWarning)
