"""The docs' runnable examples run as pasted and print what the docs say they print.

An example is a ```python block right after an ``<!-- example: NAME -->`` line; the
```text block after the next "Output:" line is its expected standard output. Each runs
in a fresh namespace, in a temporary working directory, with real loaders, splitters,
vector stores and MiniLM (the LLMs are the frameworks' named fakes)."""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

DOCS = Path(__file__).resolve().parent.parent / "docs"
_EXAMPLE = re.compile(
    r"<!-- example: (?P<name>[\w-]+) -->\s*```python\n(?P<code>.*?)```"
    r"(?:\s*Output:\s*```text\n(?P<out>.*?)```)?",
    re.DOTALL,
)


def examples() -> list[tuple[str, str, str | None]]:
    found = []
    for page in sorted(DOCS.glob("*.md")):
        for m in _EXAMPLE.finditer(page.read_text()):
            found.append((f"{page.name}:{m['name']}", m["code"], m["out"]))
    return found


def test_the_adapter_pages_have_their_examples() -> None:
    names = [name for name, _, _ in examples()]
    assert "langchain.md:langchain-rag" in names
    assert "llamaindex.md:llamaindex-rag" in names


@pytest.mark.parametrize(("name", "code", "expected"), examples(), ids=[e[0] for e in examples()])
def test_example_runs_as_pasted(
    name: str, code: str, expected: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(out):
        # langchain-community warns on import that it is being sunset; its loaders are
        # still what a LangChain user loads files with
        warnings.filterwarnings("ignore", message="`langchain-community` is being sunset", category=DeprecationWarning)
        exec(compile(code, f"<{name}>", "exec"), {"__name__": "__main__"})
    if expected is not None:
        assert out.getvalue() == expected
