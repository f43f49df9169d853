"""The example notebooks run top to bottom, offline, in a fresh kernel of this interpreter.

Each notebook in ``notebooks/`` is executed with nbclient (a copy: the saved file is not
touched) and fails the test if any cell raises (integration, slow). Cheap checks (unit)
keep the saved files readable on a code host and in step with their source: each was saved
from one top-to-bottom run, with outputs and no error, and holds exactly the cells of
``notebooks/build.py``, which regenerates them (``python notebooks/build.py``).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
NAMES = ["01_quickstart", "02_langchain", "03_llamaindex", "04_evaluation"]
CELL_TIMEOUT = 600  # seconds; the slowest cell embeds 423 chunks on a busy 2-core CPU


@pytest.fixture(scope="session")
def kernel_name(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A ``python3`` kernel spec that runs *this* interpreter, first on JUPYTER_PATH.

    A fresh clone may have no kernel registered, or a user-level ``python3`` spec pointing
    at another Python without ctxassembly; a private spec in a temp dir avoids both.
    """
    root = tmp_path_factory.mktemp("jupyter")
    spec = root / "kernels" / "python3"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    spec.joinpath("kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": "Python 3 (ctxassembly tests)", "language": "python"})
    )
    before = os.environ.get("JUPYTER_PATH")
    os.environ["JUPYTER_PATH"] = os.pathsep.join([str(root), *([before] if before else [])])
    yield "python3"
    if before is None:
        del os.environ["JUPYTER_PATH"]
    else:
        os.environ["JUPYTER_PATH"] = before


@pytest.mark.unit
def test_every_notebook_is_listed() -> None:
    assert sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb")) == NAMES


@pytest.mark.unit
@pytest.mark.parametrize("name", NAMES)
def test_saved_notebook_has_outputs(name: str) -> None:
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, f"{name} has no code cells"
    counts = [c.execution_count for c in code]
    assert counts == list(range(1, len(code) + 1)), (
        f"{name}: execution counts {counts}: not saved from one top-to-bottom run; run python notebooks/build.py"
    )
    assert sum(bool(c.outputs) for c in code) >= len(code) // 2, f"{name}: most code cells were saved without outputs"
    errors = [i for i, c in enumerate(code) for o in c.outputs if o.output_type == "error"]
    assert not errors, f"{name}: code cells {errors} were saved with an error"
    assert "HF_HUB_OFFLINE" in code[0].source, f"{name}: the first cell must set HF_HUB_OFFLINE=1"


@functools.cache
def _build_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("notebooks_build", NOTEBOOKS / "build.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.unit
@pytest.mark.parametrize("name", NAMES)
def test_saved_notebook_matches_build_script(name: str) -> None:
    """The .ipynb files are generated: an edit made only in one of them would be lost."""
    cells = _build_module().NOTEBOOKS[name]
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    saved = [(c.cell_type, c.source) for c in nb.cells]
    assert saved == [(c.cell_type, c.source) for c in cells], (
        f"{name}.ipynb differs from notebooks/build.py; edit build.py and run python notebooks/build.py {name}"
    )


@pytest.mark.unit
def test_evaluation_notebook_saves_its_plots() -> None:
    nb = nbformat.read(NOTEBOOKS / "04_evaluation.ipynb", as_version=4)
    pngs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if "image/png" in o.get("data", {})]
    assert len(pngs) >= 3, f"expected the probe, dilution and histogram plots, found {len(pngs)} PNG outputs"


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs_top_to_bottom(name: str, kernel_name: str, tmp_path: Path) -> None:
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    client = NotebookClient(
        nb, timeout=CELL_TIMEOUT, kernel_name=kernel_name, resources={"metadata": {"path": str(tmp_path)}}
    )
    t0 = time.perf_counter()
    try:
        client.execute()
    except CellExecutionError as e:
        pytest.fail(f"{name}.ipynb: a cell failed:\n{e}")
    seconds = time.perf_counter() - t0
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code), f"{name}: not every cell ran"
    print(f"{name}.ipynb ran in {seconds:.0f} s")
