"""The ``ctxassembly`` command line (``pip install ctxassembly`` puts it on the PATH).

* :mod:`~ctxassembly.cli.commands`: the Typer app and ``assemble``;
* :mod:`~ctxassembly.cli.demo`: ``demo``, naive top-40 against the assembled context;
* :mod:`~ctxassembly.cli.eval`: ``eval``, ``probe``, ``dilution``, ``histogram``,
  ``calibrate`` and ``calibrate-weights``.

The CLI is the top layer: nothing in the library imports it.
"""

from ctxassembly.cli.commands import app

__all__ = ["app", "main"]


def main() -> None:
    """Run the ``ctxassembly`` command."""
    app()
