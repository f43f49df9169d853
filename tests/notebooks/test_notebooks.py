"""The example notebooks run top to bottom, offline, in a fresh kernel of this interpreter.

Each notebook in ``notebooks/`` is executed with nbclient (a copy: the saved file is not
touched) and fails the test if any cell raises (integration, slow). Cheap checks (unit)
keep the saved files readable on a code host and in step with their source: each was saved
from one top-to-bottom run, with outputs and no error, and holds exactly the cells of
``notebooks/build.py``, which regenerates them (``python notebooks/build.py``).
"""

from __future__ import annotations

import base64
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


# The plots the notebooks name for the docs (docs/img/, shown in docs/notebooks.md).
NAMED_PLOTS = {
    "02_langchain": ["nb02_reader_naive_vs_assembled.png"],  # SmolLM2 right / answer present, naive vs assembled
    "04_evaluation": [
        "nb04_answer_vs_budget.png",  # answer present / other-version answer vs budget, naive vs assembled
        "nb04_answer_position.png",  # where the answer sits: retriever rank, block in the context
        "nb04_dilution.png",  # dilution curve with SmolLM2
    ],
}


def _named_images(name: str) -> dict[str, str]:
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    return _build_module().saved_images(nb)


@pytest.mark.unit
@pytest.mark.parametrize("name", NAMES)
def test_notebook_names_its_plots(name: str) -> None:
    assert sorted(_named_images(name)) == sorted(NAMED_PLOTS.get(name, []))


@pytest.mark.unit
def test_evaluation_notebook_shows_its_plots() -> None:
    nb = nbformat.read(NOTEBOOKS / "04_evaluation.ipynb", as_version=4)
    pngs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if "image/png" in o.get("data", {})]
    assert len(pngs) >= 5, f"expected 2 context plots and the probe, dilution and histogram plots, found {len(pngs)}"


@pytest.mark.unit
@pytest.mark.parametrize("name", NAMES)
def test_named_images_are_the_docs_images(name: str) -> None:
    """Each image a notebook names is in docs/img/ as saved (build.py copies them) and is
    shown in docs/notebooks.md, so the docs show what the notebook computed."""
    docs = NOTEBOOKS.parent / "docs"
    page = (docs / "notebooks.md").read_text(encoding="utf-8")
    for filename, data in _named_images(name).items():
        path = docs / "img" / filename
        assert path.is_file(), f"{name} names {filename}; run python notebooks/build.py {name}"
        assert path.read_bytes() == base64.b64decode(data), f"docs/img/{filename} is not the image {name} saved"
        assert f"img/{filename}" in page, f"docs/notebooks.md does not show {filename}"


@pytest.mark.unit
@pytest.mark.parametrize("name", ["02_langchain", "03_llamaindex", "04_evaluation"])
def test_claims_are_checked_in_the_notebook(name: str) -> None:
    """The captions' claims (naive vs assembled differ, a curve is flat) are asserted in
    code cells, so a run whose numbers contradict a caption fails instead of saving it."""
    cells = _build_module().NOTEBOOKS[name]
    assert any(c.cell_type == "code" and "\nassert " in "\n" + c.source for c in cells), (
        f"{name} has no cell asserting what its captions claim"
    )


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
