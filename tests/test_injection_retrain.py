"""The shipped injection model is what the repository trains: ``benchmarks/injection_train.py``
reads only files of the repository (the labelled set, the dev corpora, other projects' docs
pinned in ``benchmarks/data/installed/``), so a retrain writes the shipped file byte for
byte. The rules' verdict is one of the model's features: a change to the rules that moves
a verdict on the training set fails here until the model is retrained (``--write``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "ctxassembly" / "data" / "injection_model.npz"


@pytest.mark.slow
def test_a_retrain_from_the_repository_rebuilds_the_shipped_model_byte_for_byte(tmp_path: Path) -> None:
    pytest.importorskip("sklearn")
    out = tmp_path / "injection_model.npz"
    run = subprocess.run(
        [sys.executable, "injection_train.py", "--no-lofo", "--out", str(out)],
        cwd=ROOT / "benchmarks",
        env={**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "final model: threshold" in run.stdout
    assert out.read_bytes() == SHIPPED.read_bytes(), (
        "a retrain differs from the shipped model: retrain with "
        "`python benchmarks/injection_train.py --no-lofo --write` and re-measure (benchmarks/README.md)"
    )
