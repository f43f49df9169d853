"""Every stage module stands alone: it imports chunk/report/errors/tokens/pipeline/text/models,
never another stage module (function-local and relative imports included)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import ctxassembly.stages

pytestmark = pytest.mark.unit

STAGES = Path(ctxassembly.stages.__file__).parent
# The Stage protocol and Context: ctxassembly.stages.base until the lead's merge rewrites
# every such import to ctxassembly.pipeline (then this entry goes).
BASE = "ctxassembly.stages.base"
# LLM stages that leave stages/ for ctxassembly/llm/ (the layers step); the map-reduce stage
# composes the LLM extraction stage by design. The entry goes when the file moves.
LEAVING = {"mapreduce.py"}


def stage_imports(path: Path) -> list[str]:
    """The stage modules (or the stages package) that ``path`` imports, anywhere in it."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolved against the stages package
                base = ".".join(["ctxassembly.stages", *(node.module or "").split(".")]).rstrip(".")
                names = [base] if node.module else [f"{base}.{a.name}" for a in node.names]
            else:
                module = node.module or ""
                names = [f"{module}.{a.name}" for a in node.names] if module in ("ctxassembly", "") else [module]
        else:
            continue
        found += [n for n in names if (n == "ctxassembly.stages" or n.startswith("ctxassembly.stages.")) and n != BASE]
    return found


MODULES = sorted(p for p in STAGES.glob("*.py") if p.name != "__init__.py")


@pytest.mark.parametrize("path", MODULES, ids=[p.stem for p in MODULES])
def test_a_stage_module_imports_no_other_stage_module(path: Path) -> None:
    if path.name in LEAVING:
        # an exemption must still be needed: once the import is gone, the entry goes
        assert stage_imports(path), f"{path.name} no longer imports a stage module: drop it from LEAVING"
        return
    assert stage_imports(path) == [], f"{path.name} imports another stage module; move what they share to text/"


def test_every_exempt_module_is_still_here() -> None:
    # an entry left behind after its file moved would exempt nothing and hide nothing
    assert all((STAGES / name).exists() for name in LEAVING), "drop the moved file from LEAVING"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from ctxassembly.stages.tables import find_tables", ["ctxassembly.stages.tables"]),
        ("import ctxassembly.stages.dedup", ["ctxassembly.stages.dedup"]),
        ("from ctxassembly.stages import Rerank", ["ctxassembly.stages"]),
        ("from ctxassembly import stages", ["ctxassembly.stages"]),
        ("from .extract import segment", ["ctxassembly.stages.extract"]),
        ("from . import extract", ["ctxassembly.stages.extract"]),
        ("def f():\n    from ctxassembly.stages.rerank import passage", ["ctxassembly.stages.rerank"]),
        ("from ctxassembly.stages.base import Context", []),
        ("from ctxassembly.text.segments import segment", []),
    ],
)
def test_the_walk_finds_every_form_of_stage_import(tmp_path: Path, source: str, expected: list[str]) -> None:
    path = tmp_path / "stage.py"
    path.write_text(source + "\n", encoding="utf-8")
    assert stage_imports(path) == expected
