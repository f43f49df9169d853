"""SentencePruner: Hugging Face token- and sequence-classification models as sentence pruners,
loaded by path through the real loading code.

No pruning model ships on PyPI and there is no model hub here, so the tests build two tiny
BERTs themselves and save them with ``save_pretrained``: their weights are set by hand so
that what they keep is known. Words of the topic (``session``, ``cookie``, ``age``,
``seconds``, ``1209600``) embed along one axis, other words along a second, punctuation
and special tokens along a third (zero position and type embeddings):

* the token classifier (no attention layer) reads each token alone: keep probability
  about 1 for a topic word, 0 for another word, 0.5 for punctuation;
* the sequence classifier (one layer of uniform attention, identity value/output/pooler)
  averages the pair's tokens into [CLS]: keep when the topic outweighs the rest.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
from pathlib import Path
from typing import Any

import pytest

from ctxassembly import assemble
from ctxassembly.errors import ConfigError, MissingExtraError
from ctxassembly.models import SentencePruner, pruner_kind
from ctxassembly.options import Options
from ctxassembly.stages import Prune
from tests.conftest import chunks, context

pytestmark = pytest.mark.integration

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
TOPIC = ["session", "cookie", "age", "seconds", "1209600"]
NEUTRAL = [".", "?", ",", "how", "long", "what"]
OTHER = ["the", "is", "paint", "fence", "green", "widgets", "render", "templates", "with", "a"]
VOCAB = SPECIAL + TOPIC + NEUTRAL + OTHER

Q = "How long is the session cookie age?"
ANSWER = "The session cookie age is 1209600 seconds."
PAINT = "Paint the fence green."
WIDGETS = "Widgets render templates."
TEXT = f"{PAINT} {ANSWER} {WIDGETS}\n\nWidgets render the fence. The fence is green."


def _tokenizer(folder: Path) -> Any:
    from transformers import BertTokenizerFast

    (folder / "vocab.txt").write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    # transformers 5 names the vocabulary ``vocab``; 4.x named it ``vocab_file``
    key = "vocab" if "vocab" in inspect.signature(BertTokenizerFast.__init__).parameters else "vocab_file"
    return BertTokenizerFast(**{key: str(folder / "vocab.txt")})


def _embed(model: Any) -> None:
    import torch

    rows = []
    for w in VOCAB:
        if w in TOPIC:
            rows.append([3.0, -1, -1, -1])
        elif w in OTHER or w == "[UNK]":
            rows.append([-1.0, 3, -1, -1])
        else:
            rows.append([-1.0, -1, 3, -1])
    emb = model.bert.embeddings
    emb.word_embeddings.weight.copy_(torch.tensor(rows))
    emb.position_embeddings.weight.zero_()
    emb.token_type_embeddings.weight.zero_()


def _config(layers: int) -> Any:
    from transformers import BertConfig

    return BertConfig(
        vocab_size=len(VOCAB),
        hidden_size=4,
        num_hidden_layers=layers,
        num_attention_heads=1,
        intermediate_size=4,
        max_position_embeddings=128,
        num_labels=2,
    )


@pytest.fixture(scope="session")
def token_pruner_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny BertForTokenClassification (keep = label 1) with a tiny WordPiece vocabulary."""
    import torch
    from transformers import BertForTokenClassification

    folder = tmp_path_factory.mktemp("tiny-token-pruner")
    model = BertForTokenClassification(_config(0))
    with torch.no_grad():
        _embed(model)
        model.classifier.weight.copy_(torch.tensor([[0.0, 0, 0, 0], [4, -4, 0, 0]]))
        model.classifier.bias.zero_()
    model.save_pretrained(folder)
    _tokenizer(folder).save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def sequence_pruner_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny BertForSequenceClassification (keep = label 1) with a tiny WordPiece vocabulary."""
    import torch
    from transformers import BertForSequenceClassification

    folder = tmp_path_factory.mktemp("tiny-sequence-pruner")
    model = BertForSequenceClassification(_config(1))
    eye = torch.eye(4)
    with torch.no_grad():
        _embed(model)
        layer = model.bert.encoder.layer[0]
        for lin in (layer.attention.self.query, layer.attention.self.key):  # uniform attention
            lin.weight.zero_()
            lin.bias.zero_()
        for lin in (layer.attention.self.value, layer.attention.output.dense, model.bert.pooler.dense):
            lin.weight.copy_(eye)
            lin.bias.zero_()
        layer.output.dense.weight.zero_()  # the feed-forward adds nothing
        layer.output.dense.bias.zero_()
        model.classifier.weight.copy_(torch.tensor([[0.0, 0, 0, 0], [8, -8, 0, 0]]))
        model.classifier.bias.zero_()
    model.save_pretrained(folder)
    _tokenizer(folder).save_pretrained(folder)
    return folder


def test_kind_is_read_from_the_saved_config(token_pruner_path: Path, sequence_pruner_path: Path) -> None:
    assert pruner_kind(str(token_pruner_path)) == "token"
    assert pruner_kind(str(sequence_pruner_path)) == "sequence"
    assert SentencePruner(token_pruner_path).kind == "token"  # a Path works as well


def test_token_head_scores_a_sentence_by_the_mean_keep_probability_of_its_tokens(token_pruner_path: Path) -> None:
    pruner = SentencePruner(str(token_pruner_path), device="cpu")
    [scores, unknown, empty] = pruner(Q, [[ANSWER, PAINT, WIDGETS], ["Zebra quux."], []])
    # ANSWER: 5 topic tokens, 2 others and "." (0.5) -> 5.5 / 8; PAINT: "." alone -> 0.5 / 5
    assert scores == pytest.approx([5.5 / 8, 0.5 / 5, 0.5 / 4], abs=1e-3)
    assert unknown == pytest.approx([0.5 / 3], abs=1e-3)  # unknown words are [UNK]: not the topic
    assert empty == []


def test_long_passages_are_read_in_windows(token_pruner_path: Path) -> None:
    sentences = [ANSWER, PAINT, WIDGETS] * 12  # about 200 tokens: 7 windows of 32
    whole = SentencePruner(str(token_pruner_path), device="cpu")(Q, [sentences])[0]
    windowed = SentencePruner(str(token_pruner_path), device="cpu", max_length=32, stride=8)(Q, [sentences])[0]
    # this model reads each token alone, so a window changes nothing; every sentence is scored
    assert windowed == pytest.approx(whole, abs=1e-6)
    assert windowed[:3] == pytest.approx([5.5 / 8, 0.5 / 5, 0.5 / 4], abs=1e-3)


def test_sequence_head_scores_each_question_sentence_pair(sequence_pruner_path: Path) -> None:
    pruner = SentencePruner(str(sequence_pruner_path), device="cpu", batch_size=2)
    [scores] = pruner(Q, [[ANSWER, PAINT, WIDGETS]])
    assert scores[0] > 0.9
    assert scores[1] < 0.5
    assert scores[2] < 0.5
    # the question is read with each sentence: without the topic in it, the answer scores lower
    [[alone]] = pruner("Paint the fence?", [[ANSWER]])
    assert alone < scores[0]


@pytest.mark.parametrize("kind", ["token", "sequence"])
def test_assemble_with_a_model_by_path_keeps_the_answer_verbatim(
    kind: str, token_pruner_path: Path, sequence_pruner_path: Path
) -> None:
    path = token_pruner_path if kind == "token" else sequence_pruner_path
    candidates = [{"id": "s", "text": TEXT, "title": "Sessions"}]
    result = assemble(Q, candidates, budget=500, pruner=str(path), device="cpu")
    [c] = result.chunks
    assert c.id == "s"
    assert c.title == "Sessions"
    assert c.text == f"[…]\n\n{ANSWER}\n\n[…]"
    assert ANSWER in TEXT
    [note] = [n for n in result.report.notes if n["stage"] == "prune"]
    assert (note["event"], note["id"]) == ("pruned", "s")
    assert note["tokens_after"] < note["tokens_before"]


def test_the_threshold_reads_the_model_scores(token_pruner_path: Path) -> None:
    stage = Prune(str(token_pruner_path), pruner_threshold=0.11, device="cpu")
    [c] = stage.run(chunks(("s", TEXT)), context(Q))
    # 0.11 keeps the answer (0.69) and the widgets sentence (0.125), not the paint one (0.1)
    assert c.text == f"[…]\n\n{ANSWER} {WIDGETS}\n\n[…]"


def _folder(tmp_path: Path, config: dict[str, Any]) -> str:
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return str(tmp_path)


def test_a_model_without_a_pruning_head_is_refused(tmp_path: Path) -> None:
    path = _folder(tmp_path, {"architectures": ["BertModel"], "model_type": "bert"})
    with pytest.raises(ConfigError, match=r"has architectures \['BertModel'\]: no pruning head found; pass a token-"):
        SentencePruner(path)
    with pytest.raises(ConfigError, match="no pruning head found"):
        assemble(Q, [{"id": "a", "text": TEXT}], budget=100, pruner=path)


def test_custom_code_is_not_run_unless_asked(tmp_path: Path) -> None:
    # the shape of a Provence-style folder: its own architecture, registered through auto_map
    provence_like = {"architectures": ["Pruner"], "auto_map": {"AutoModel": "modeling.Pruner"}}
    path = _folder(tmp_path, provence_like)
    with pytest.raises(ConfigError, match=r"it ships its own code .*trust_remote_code=True.*wrap the model's own"):
        SentencePruner(path)
    with pytest.raises(ConfigError, match="no pruning head found"):  # trusted, but no classification head
        SentencePruner(path, trust_remote_code=True)
    registered = {"architectures": ["Pruner"], "auto_map": {"AutoModelForTokenClassification": "modeling.Pruner"}}
    path = _folder(tmp_path, registered)
    with pytest.raises(ConfigError, match="it ships its own code"):
        SentencePruner(path)
    assert SentencePruner(path, trust_remote_code=True).kind == "token"
    prune = next(
        s
        for s in Options(pruner=path, pruner_trust_remote_code=True).build_stages()
        if isinstance(s, Prune)  # the option reaches the adapter
    )
    assert isinstance(prune.pruner, SentencePruner)
    assert prune.pruner.trust_remote_code is True


@pytest.mark.parametrize(
    ("spec", "kw", "message"),
    [
        ("", {}, "pruner model name must not be empty"),
        ("./no/such/model", {}, r"pruner path './no/such/model' does not exist"),
        ("org/name", {"batch_size": 0}, "batch_size must be an int >= 1, got 0"),
        ("org/name", {"max_length": 8}, "max_length must be an int >= 16, got 8"),
        ("org/name", {"stride": 300}, "stride must be less than half of max_length 512, got 300"),
    ],
)
def test_bad_settings(spec: str, kw: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        SentencePruner(spec, **kw)


def test_a_folder_without_config_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"has no config\.json; expected a model saved with save_pretrained"):
        SentencePruner(str(tmp_path))


def test_a_hub_name_is_resolved_on_first_use() -> None:
    pruner = SentencePruner("some-org/some-pruner")  # nothing is read or downloaded here
    assert pruner.kind is None


def test_missing_transformers_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "transformers" else real(name, *a)
    )
    with pytest.raises(MissingExtraError, match=r"transformers is not installed; .*'ctxassembly\[models\]'"):
        SentencePruner("some-org/some-pruner")
    with pytest.raises(MissingExtraError, match=r"ctxassembly\[models\]"):
        assemble(Q, [{"id": "a", "text": TEXT}], budget=100, pruner="some-org/some-pruner")


def test_an_assembler_with_a_pruner_by_path_pickles_and_runs_async(token_pruner_path: Path) -> None:
    import asyncio
    import pickle

    from ctxassembly import Assembler

    assembler = Assembler(pruner=str(token_pruner_path), device="cpu")
    candidates = [{"id": "s", "text": TEXT}]
    direct = assembler.run(Q, candidates, budget=500)
    copied = pickle.loads(pickle.dumps(assembler))  # a worker process gets the path, not the weights
    assert copied.run(Q, candidates, budget=500).text == direct.text
    assert asyncio.run(assembler.arun(Q, candidates, budget=500)).text == direct.text  # in a worker thread
    assert ANSWER in direct.text
    assert PAINT not in direct.text
