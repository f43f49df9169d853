"""Session-scoped real models for the model tests: a tiny BERT cross-encoder built and saved
here (no cross-encoder ships on PyPI and there is no model hub on these machines). MiniLM
itself (``minilm``, ``minilm_path``) is in tests/conftest.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session")
def cross_encoder_path(tmp_path_factory: pytest.TempPathFactory, minilm_path: str) -> Path:
    """A tiny BertForSequenceClassification (random weights, one label) with the MiniLM
    vocabulary, saved with save_pretrained: a real cross-encoder folder on disk."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("tiny-cross-encoder")
    tokenizer = BertTokenizerFast(vocab_file=os.path.join(minilm_path, "vocab.txt"))
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
        num_labels=1,
    )
    BertForSequenceClassification(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
