"""The repository stands alone: no test, package module or notebook names a path outside it.

A fresh clone with nothing beside it must pass ``make test``; the dev benchmark data the
tests read is vendored in ``benchmarks/data/``. This test fails loudly, naming file and
line, when a module reaches for a sibling folder (``../name``), an absolute path of
some machine, or climbs above the repository with ``Path(__file__).parents[k]``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[1]
SCANNED = ("ctxassembly", "langchain_ctxassembly", "llamaindex_ctxassembly", "tests", "notebooks")
# A relative path that leaves the checkout, or an absolute path of one machine.
OUTSIDE = re.compile(r"(?<!\.)\.\./(?:\.\./)*[A-Za-z_]|(?<![\w.])/(?:work|root|home|Users|opt|mnt)/\w")
PARENTS = re.compile(r"__file__\)(?:\.resolve\(\))?\.parents\[(\d+)\]")


def _sources() -> list[tuple[Path, str]]:
    out = []
    for top in SCANNED:
        for path in sorted((REPO / top).rglob("*")):
            if path == Path(__file__).resolve():  # its examples below name such paths on purpose
                continue
            if path.suffix == ".py":
                out.append((path, path.read_text(encoding="utf-8")))
            elif path.suffix == ".ipynb":  # the cells' sources, as the notebook runs them
                cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
                out.append((path, "\n".join("".join(c["source"]) for c in cells)))
    return out


def _outside_paths(path: Path, text: str) -> list[str]:
    rel = path.relative_to(REPO)
    found = []
    for n, line in enumerate(text.splitlines(), 1):
        found += [f"{rel}:{n}: {m.group(0)!r}" for m in OUTSIDE.finditer(line)]
        for m in PARENTS.finditer(line):
            # parents[k] of REPO/a/b.py: k = 0 is REPO/a, k = 1 is REPO, k = 2 is outside
            if int(m.group(1)) >= len(rel.parts):
                found.append(f"{rel}:{n}: parents[{m.group(1)}] climbs above the repository")
    return found


def test_the_scan_sees_the_code_and_the_notebooks() -> None:
    names = {p.name for p, _ in _sources()}
    assert {"assembler.py", "conftest.py", "compressor.py", "postprocessor.py", "01_quickstart.ipynb"} <= names


def test_no_module_names_a_path_outside_the_repository() -> None:
    found = [hit for path, text in _sources() for hit in _outside_paths(path, text)]
    assert not found, "paths outside the repository:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("line", "hits"),
    [
        ('Path(__file__).resolve().parents[2] / "sibling" / "bench"', 1),
        ('open("../sibling/bench/data/django/questions.jsonl")', 1),
        ('"/work/sibling/bench/score.py"', 1),
        ('Path(__file__).parents[1] / "benchmarks" / "data"', 0),
        ("x = a / b  # 1/2 of the budget", 0),
        ("a page path such as ``.../releases/4.2/``", 0),
    ],
)
def test_the_check_itself(line: str, hits: int) -> None:
    assert len(_outside_paths(REPO / "tests" / "test_x.py", line)) == hits
