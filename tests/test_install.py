"""The package as a user installs it (issue 29, point 8): ``python -m build`` gives a wheel
and an sdist; each installs into a fresh venv with ``pip install --no-deps`` plus only the
base dependencies from PyPI, and assembles; the ``ctxassembly`` script, whose libraries
are the ``cli`` extra, says so in one line.

Slow (minutes: two venvs, the base dependencies from PyPI or pip's cache)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = None

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
SMOKE = """
import json, ctxassembly
from ctxassembly import assemble
chunks = [
    {"id": "a", "text": "The retry limit is 3.", "version": "3.1", "doc_id": "d", "score": 0.9},
    {"id": "b", "text": "The retry limit is 5.", "version": "3.3", "doc_id": "d", "score": 0.8},
    {"id": "c", "text": "   ", "score": 0.7},
]
r = assemble("What is the retry limit?", chunks, budget=200)
print(json.dumps({"file": ctxassembly.__file__, "text": r.text, "reasons": dict(r.report.reasons)}))
"""


def _run(*cmd: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=1200, check=False)


def _venv(path: Path) -> Path:
    venv.EnvBuilder(with_pip=True, clear=True).create(path)
    return path / "bin" / "python"


def _base_dependencies() -> list[str]:
    text = (REPO / "pyproject.toml").read_text()
    if tomllib is not None:
        return list(tomllib.loads(text)["project"]["dependencies"])
    block = text.split("dependencies = [", 1)[1].split("]", 1)[0]
    return [line.split('"')[1] for line in block.splitlines() if '"' in line]


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel and sdist ``python -m build`` makes of a copy of the sources."""
    root = tmp_path_factory.mktemp("build")
    src = root / "src"
    skip = shutil.ignore_patterns(".git", ".venv", "*.pyc", "__pycache__", "dist", ".*cache")
    shutil.copytree(REPO, src, ignore=skip)
    python = Path(sys.executable)
    if importlib.util.find_spec("build") is None:  # the dev extra has it; bootstrap it otherwise
        python = _venv(root / "tools")
        assert _run(python, "-m", "pip", "install", "-q", "build", cwd=root).returncode == 0
    out = root / "dist"
    r = _run(python, "-m", "build", "--outdir", out, src, cwd=root)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    return out


def test_the_base_install_is_what_assembly_needs() -> None:
    deps = " ".join(_base_dependencies())
    for name in ("typer", "rich", "bm25s", "torch", "sentence-transformers", "langchain", "llama-index", "matplotlib"):
        assert name not in deps, name


@pytest.mark.parametrize("kind", ["wheel", "sdist"])
def test_the_built_package_installs_and_assembles_in_a_fresh_venv(dist: Path, tmp_path: Path, kind: str) -> None:
    pattern = "ctxassembly-*.whl" if kind == "wheel" else "ctxassembly-*.tar.gz"
    (artifact,) = dist.glob(pattern)
    python = _venv(tmp_path / "venv")
    r = _run(python, "-m", "pip", "install", "-q", "--no-deps", artifact, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    r = _run(python, "-m", "pip", "install", "-q", *_base_dependencies(), cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    r = _run(python, "-c", SMOKE, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout)
    assert str(tmp_path / "venv") in out["file"]  # the installed copy, not the sources
    assert "The retry limit is 5." in out["text"]
    assert "The retry limit is 3." not in out["text"]
    assert out["reasons"] == {"kept": 1, "superseded": 1, "empty": 1}
    # the command's libraries are the cli extra: one line that names it, no traceback
    r = _run(tmp_path / "venv" / "bin" / "ctxassembly", "--help", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr == "ctxassembly: the command line needs typer, rich: pip install 'ctxassembly[cli]'\n"
