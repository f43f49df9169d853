"""The ``device`` option reaches the models the stages load by path."""

from __future__ import annotations

from typing import Any

import pytest

from ctxassembly.options import Options
from ctxassembly.stages import Rerank, SemanticDedup

pytestmark = pytest.mark.integration


def test_device_reaches_the_model_stages_loaded_by_path(minilm_path: str) -> None:
    stages = Options(embedder=minilm_path, reranker=minilm_path, device="cpu").build_stages()
    (semantic,) = [s for s in stages if isinstance(s, SemanticDedup)]
    (rerank,) = [s for s in stages if isinstance(s, Rerank)]
    model: Any = semantic.embedder._model
    assert str(model.device) == "cpu"
    assert rerank.device == "cpu"
    assert rerank.embedder is not None
    assert str(rerank.embedder._model.device) == "cpu"


def test_a_device_that_does_not_exist_fails_when_the_model_loads(minilm_path: str) -> None:
    with pytest.raises(RuntimeError):
        Options(embedder=minilm_path, device="nodevice").build_stages()
