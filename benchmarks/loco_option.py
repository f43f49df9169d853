"""One option's value, left one corpus out, with the bars beside (issue 26: every default is
chosen on all the dev corpora at once).

Reads outputs of the benchmark's matrix (``../shared/bench/matrix.py``) holding pipelines
``opt_<option>_<value>`` from ``adapters.py`` (the default pipeline with that one option
set: ``opt_top_share_0p3``, ``opt_max_share_none``), ``model_free`` (the library's
default, which stands for the option's default value) and, when present, ``never_cut``
(the control). Prints:

- per setting, answers / answer cut in points summed over ``full`` and ``source`` at both
  budgets, the same in ``none``, how many corpora lose answer points against the default,
  and, with the control, how many ``full`` / ``source`` cells miss a bar (:data:`BARS`) and
  how many are under the control;
- per corpus, each setting's answers / answer cut;
- per held-out corpus, the setting chosen on all the others (the most answers; ties: the
  fewer answer cut, then the default) and its figures on the held-out corpus.

Usage::

    python ../shared/bench/matrix.py --pipeline benchmarks/adapters.py:model_free \\
        --pipeline benchmarks/adapters.py:never_cut \\
        --pipeline benchmarks/adapters.py:opt_top_share_0p28 \\
        --pipeline benchmarks/adapters.py:opt_top_share_none [...] \\
        --corpus django --corpus pytest [...] --budget 500 --budget 1000 \\
        --meta full --meta source --meta none > top_share.md
    python benchmarks/loco_option.py top_share.md --option top_share
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from _tables import MatrixCells, fold_choice, matrix_rows, total
from adapters import option_pipeline

from ctxassembly.options import Options

DEFAULT = "model_free"
CONTROL = "never_cut"
#: per budget (the matrix's first, then its second: 500 and 1,000 tokens), the least answer
#: kept and the most answer cut (%) the acceptance asks of a ``full`` or ``source`` cell
BARS = ((75, 5), (90, 2))


def settings(runs: dict[str, MatrixCells], option: str) -> dict[str, MatrixCells]:
    """``{label: cells}``: the default's value (``model_free``) and every ``opt_<option>_<value>``
    run on the corpora the default ran on."""
    if DEFAULT not in runs:
        raise SystemExit(f"the matrix must hold {DEFAULT!r} (the default)")
    default = getattr(Options(), option)
    out = {f"{default!r} (default)": runs[DEFAULT]}
    for pipe, cells in sorted(runs.items()):
        spelled = option_pipeline(pipe)  # (dense, option, value): the hybrid list's runs of this option
        if spelled is not None and spelled[:2] == (False, option) and set(cells) >= set(runs[DEFAULT]):
            out[repr(spelled[2])] = cells
    return out


def bars(cells: MatrixCells, control: MatrixCells | None, corpora: list[str]) -> tuple[int, int]:
    """The ``full`` / ``source`` cells that miss a bar, and those under the control."""
    failing = under = 0
    for corpus in corpora:
        for mode in ("full", "source"):
            v = cells[corpus, mode]
            for k, (least, most_cut) in enumerate(BARS):
                answer, cut = v[3 * k], v[3 * k + 2]
                low = control is not None and answer < control[corpus, mode][3 * k]
                under += low
                failing += answer < least or cut > most_cut or low
    return failing, under


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("matrix", nargs="+", type=Path, help="matrix.py outputs")
    ap.add_argument("--option", required=True, help="the option the opt_ pipelines set (e.g. top_share)")
    a = ap.parse_args()
    runs: dict[str, MatrixCells] = {}
    for path in a.matrix:
        for pipe, cells in matrix_rows(path).items():
            runs.setdefault(pipe, {}).update(cells)
    by = settings(runs, a.option)
    default = next(iter(by))
    control = runs.get(CONTROL)
    corpora = sorted({c for c, _ in runs[DEFAULT]})

    print(f"| {a.option} | answers / cut | none | corpora losing | failing cells | under the control |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, cells in by.items():
        answers, cut = (sum(total(cells, c, f) for c in corpora) for f in (0, 2))
        none = "{} / {}".format(*(sum(total(cells, c, f, ("none",)) for c in corpora) for f in (0, 2)))
        lose = sum(total(cells, c, 0) < total(by[default], c, 0) for c in corpora)
        failing, under = bars(cells, control, corpora) if control is not None else ("", "")
        print(f"| {label} | {answers} / {cut} | {none} | {lose} | {failing} | {under} |")

    print()
    print("| corpus | " + " | ".join(by) + " |")
    print("|---|" + "---:|" * len(by))
    for corpus in corpora:
        row = [f"{total(cells, corpus, 0)} / {total(cells, corpus, 2)}" for cells in by.values()]
        print(f"| {corpus} | " + " | ".join(row) + " |")

    print()
    print("| held out | chosen on the others | answers / cut | default |")
    print("|---|---|---:|---:|")
    held, was = [0, 0], [0, 0]
    chosen: Counter[str] = Counter()
    for corpus in corpora:
        others = [c for c in corpora if c != corpus]
        best = fold_choice(by, others, lambda s, c, f: total(by[s], c, f), default)
        chosen[best] += 1
        got = [total(by[best], corpus, f) for f in (0, 2)]
        old = [total(by[default], corpus, f) for f in (0, 2)]
        held = [h + g for h, g in zip(held, got, strict=True)]
        was = [w + o for w, o in zip(was, old, strict=True)]
        print(f"| {corpus} | {best} | {got[0]} / {got[1]} | {old[0]} / {old[1]} |")
    print()
    print(
        f"held out: {held[0]} / {held[1]} (the default: {was[0]} / {was[1]}); folds: "
        + ", ".join(f"{s} {n}" for s, n in chosen.most_common())
    )


if __name__ == "__main__":
    main()
