"""Shared by the benchmark scripts: the machine line, question loading, README sections.

Each script writes its tables between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->``
in ``benchmarks/README.md`` (the markers are added at the end the first time), and a
copy to ``benchmarks/results/NAME.md``, so one command regenerates what the README shows.
"""

from __future__ import annotations

import importlib.util
import os
import platform
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ctxassembly.jsonl import read_jsonl

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data"  # the dev corpora, vendored and compressed (see data/README.md)
DEFAULT_QUESTIONS = DATA / "django" / "questions.jsonl.gz"
# The benchmark's own scorer stays outside the repository (it is the outside judge); the
# scripts that cross-check against it look for it beside the checkout and skip otherwise.
SCORER = ROOT.parent / "shared" / "bench" / "score.py"
RESULTS = HERE / "results"
README = HERE / "README.md"


def load_records(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The benchmark records of a ``questions.jsonl`` (``.gz`` / ``.xz`` read directly)."""
    return list(read_jsonl(path))


def load_corpus(folder: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every chunk of a corpus folder's ``corpus.jsonl`` (or its ``.xz`` / ``.gz`` copy)."""
    for name in ("corpus.jsonl", "corpus.jsonl.xz", "corpus.jsonl.gz"):
        if (Path(folder) / name).exists():
            return list(read_jsonl(Path(folder) / name))
    raise FileNotFoundError(f"no corpus.jsonl (.xz, .gz) in {folder}")


#: one cell of the benchmark matrix's markdown (``matrix.py``): answer / wrong / cut, %
_MATRIX_CELL = re.compile(r"(\d+)% / (\d+)% / (\d+)%")

#: (corpus, metadata mode) -> answer, wrong, cut at the first budget, then at the second
MatrixCells = dict[tuple[str, str], list[int]]


def total(cells: MatrixCells, corpus: str, field: int, modes: tuple[str, ...] = ("full", "source")) -> int:
    """Points of one matrix field (0 answer, 1 wrong, 2 cut) over both budgets and ``modes``."""
    return sum(cells[corpus, m][field] + cells[corpus, m][field + 3] for m in modes)


def fold_choice(
    settings: Iterable[str], others: Sequence[str], points: Callable[[str, str, int], int], default: str
) -> str:
    """The setting a fold chooses on the corpora ``others``: the most answer points
    (``points(setting, corpus, 0)``); ties: the fewer answer cut (field 2), then ``default``."""
    return max(
        settings,
        key=lambda s: (sum(points(s, c, 0) for c in others), -sum(points(s, c, 2) for c in others), s == default),
    )


def matrix_rows(path: str | os.PathLike[str]) -> dict[str, MatrixCells]:
    """``{pipeline: cells}`` from the markdown rows of ``../shared/bench/matrix.py`` run at two
    budgets (a cell's notes after its three figures, such as ``(off 2%)``, are left out)."""
    out: dict[str, MatrixCells] = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        parts = [p.strip() for p in line.strip().strip("|").split("|")]
        if len(parts) != 5:
            continue
        pipe, corpus, meta, first, second = parts
        cells = [_MATRIX_CELL.match(first), _MATRIX_CELL.match(second)]
        if cells[0] is None or cells[1] is None:
            continue
        out.setdefault(pipe, {})[corpus, meta] = [int(x) for m in cells if m is not None for x in m.groups()]
    return out


def load() -> str:
    """The load average now, as ``1/5/15 min``: the machine is shared, so every timing says it."""
    a, b, c = os.getloadavg()
    return f"{a:.1f}/{b:.1f}/{c:.1f}"


def machine() -> str:
    cpus = os.cpu_count()
    return f"{platform.machine()}, {cpus} CPUs, Python {platform.python_version()}, {platform.system()}"


def publish(name: str, text: str, *, readme: Path = README) -> None:
    """Write ``text`` to ``results/NAME.md`` and between the NAME markers of the README."""
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{name}.md").write_text(text.rstrip() + "\n", encoding="utf-8")
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    doc = readme.read_text(encoding="utf-8")
    block = f"{start}\n{text.rstrip()}\n{end}"
    if start in doc and end in doc:
        doc = re.sub(re.escape(start) + r".*?" + re.escape(end), lambda _: block, doc, flags=re.DOTALL)
    else:
        doc = doc.rstrip() + "\n\n" + block + "\n"
    readme.write_text(doc, encoding="utf-8")


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f}%"


def bench_folder() -> Path:
    """The benchmark folder ``shared/bench`` beside the checkout (or beside its parent)."""
    found = [p / "shared" / "bench" for p in ROOT.parents if (p / "shared" / "bench" / "score.py").exists()]
    return found[0] if found else ROOT.parent / "shared" / "bench"


def strip_metadata(bench: Path) -> Callable[[dict[str, Any], str, str], dict[str, Any]]:
    """The benchmark's own ``strip_metadata`` (its ``score.py``), imported."""
    spec = importlib.util.spec_from_file_location("_bench_score", bench / "score.py")
    if spec is None or spec.loader is None:
        raise SystemExit(f"no score.py in {bench}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.strip_metadata  # type: ignore[no-any-return]
