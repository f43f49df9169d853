"""The three packages ship ``py.typed``: a user's mypy reads their types, not ``import-untyped``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

PACKAGES = ("ctxassembly", "langchain_ctxassembly", "llamaindex_ctxassembly")


@pytest.mark.parametrize("package", PACKAGES)
def test_package_has_the_marker(package: str) -> None:
    assert (Path(__file__).parents[1] / package / "py.typed").is_file()


def test_a_users_strict_mypy_sees_the_installed_types(tmp_path: Path) -> None:
    # run outside the checkout, so mypy resolves the installed packages as a user's would
    user = tmp_path / "app.py"
    user.write_text(
        "from ctxassembly import assemble\n"
        "from langchain_ctxassembly import ContextAssemblyCompressor\n"
        "from llamaindex_ctxassembly import ContextAssemblyPostprocessor\n"
        "budget: str = assemble('q', [], budget=100).report.budget\n",
        encoding="utf-8",
    )
    # the frameworks' own modules are skipped (minutes to analyse); ours are read in full
    (tmp_path / "mypy.ini").write_text(
        "[mypy]\nstrict = True\nfollow_imports = skip\n[mypy-ctxassembly.*]\nfollow_imports = normal\n",
        encoding="utf-8",
    )
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", str(user)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert "import-untyped" not in out.stdout, out.stdout
    # the types are really read: a wrong annotation on a library value is caught
    assert 'Incompatible types in assignment (expression has type "int", variable has type "str")' in out.stdout
