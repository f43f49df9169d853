"""``injection_model=`` a Hugging Face text-classification model: a tiny BERT built here,
saved to a folder and loaded through the real transformers API."""

from __future__ import annotations

import os

import pytest

from ctxassembly import Safety, assemble
from ctxassembly.errors import ConfigError
from ctxassembly.models.classifier import detector, injection_labels, load_classifier
from tests.conftest import chunks, context

pytestmark = pytest.mark.integration


def _tiny_classifier(path, minilm_path: str, injection_bias: float, labels: dict[int, str]):
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    torch.manual_seed(0)
    tokenizer = BertTokenizerFast(vocab_file=os.path.join(minilm_path, "vocab.txt"))
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=len(labels),
        id2label=labels,
        label2id={v: k for k, v in labels.items()},
    )
    model = BertForSequenceClassification(config)
    with torch.no_grad():  # the head decides alone: a known answer for every sentence
        model.classifier.weight.zero_()
        model.classifier.bias.copy_(torch.tensor([0.0, injection_bias]))
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def flags_all(tmp_path_factory, minilm_path):
    return _tiny_classifier(tmp_path_factory.mktemp("flags-all"), minilm_path, 6.0, {0: "SAFE", 1: "INJECTION"})


@pytest.fixture(scope="module")
def flags_none(tmp_path_factory, minilm_path):
    return _tiny_classifier(tmp_path_factory.mktemp("flags-none"), minilm_path, -6.0, {0: "BENIGN", 1: "JAILBREAK"})


def test_a_hugging_face_classifier_loaded_by_path_flags_what_it_scores_high(flags_all):
    ctx = context()
    text = "The cache stores results. It expires after 300 seconds."
    out = Safety(model=detector(str(flags_all))).run(chunks(("a", text)), ctx)
    assert out == []  # every sentence flagged: nothing left of the chunk
    assert ctx.report.notes[0]["codes"] == ["injection:learned"]


def test_a_hugging_face_classifier_that_scores_low_keeps_everything(flags_none):
    text = "The cache stores results. It expires after 300 seconds."
    out = assemble("cache?", chunks(("a", text)), budget=200, injection_model=str(flags_none))
    assert "expires after 300 seconds" in out.text


def test_the_weights_load_on_first_use_not_at_construction(flags_all):
    det = load_classifier(str(flags_all))
    assert det.score._loaded is None
    det.spans_many(["One sentence."])
    assert det.score._loaded is not None


@pytest.mark.parametrize(
    ("labels", "positive"),
    [
        ({0: "BENIGN", 1: "INJECTION", 2: "JAILBREAK"}, [1, 2]),
        ({0: "SAFE", 1: "UNSAFE"}, [1]),
        ({0: "LABEL_0", 1: "LABEL_1"}, [1]),
        ({0: "legit", 1: "prompt_attack"}, [1]),
    ],
)
def test_the_labels_that_mean_an_injection(labels, positive):
    assert injection_labels(labels) == positive


def test_a_model_with_no_injection_label_is_an_error():
    with pytest.raises(ConfigError, match=r"no label names an injection, got labels \['a', 'b', 'c'\]"):
        injection_labels({0: "a", 1: "b", 2: "c"})
