"""The ``ctxassembly`` command line (extra ``cli``: ``pip install 'ctxassembly[cli]'`` puts
it on the PATH).

* :mod:`~ctxassembly.cli.commands`: the Typer app and ``assemble``;
* :mod:`~ctxassembly.cli.demo`: ``demo``, naive top-40 against the assembled context;
* :mod:`~ctxassembly.cli.eval`: ``eval``, ``probe``, ``dilution``, ``histogram``,
  ``calibrate`` and ``calibrate-weights``.

The CLI is the top layer: nothing in the library imports it. Its libraries (typer, rich)
are the ``cli`` extra, not the base install: :func:`main` says so in one line when they
are missing.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

__all__ = ["app", "main"]

#: what the command needs beyond the base install (the ``cli`` extra)
NEEDS = ("typer", "rich")


def main() -> None:
    """Run the ``ctxassembly`` command (exit code 2 with one line when the extra is missing)."""
    missing = [name for name in NEEDS if importlib.util.find_spec(name) is None]
    if missing:
        sys.stderr.write(f"ctxassembly: the command line needs {', '.join(missing)}: pip install 'ctxassembly[cli]'\n")
        raise SystemExit(2)
    from ctxassembly.cli.commands import app

    app()


def __getattr__(name: str) -> Any:
    if name == "app":  # the Typer app, imported on first use (it needs the cli extra)
        from ctxassembly.cli.commands import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
