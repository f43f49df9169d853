"""The learned injection detector ``injection_model=`` names, and Hugging Face classifiers.

``"builtin"`` (the default) is the linear model shipped with the package
(:mod:`ctxassembly.text.injection_model`, numpy only); ``None`` leaves the rules alone; a
callable ``(sentences) -> probabilities`` or an object with ``spans_many`` is used as
given; any other string is the name or local path of a Hugging Face text-classification
model (a prompt-injection classifier such as Prompt Guard or a DeBERTa injection model),
loaded on first use with ``transformers`` (extra ``models``). Its probability of
injection is the softmax mass of the labels that name one (``INJECTION``, ``JAILBREAK``,
``MALICIOUS``, ``UNSAFE``, ``LABEL_1`` of a two-label head ...).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxassembly.errors import ConfigError
from ctxassembly.models.loading import require
from ctxassembly.text.injection_model import Detector, SentenceClassifier, builtin

__all__ = ["BUILTIN", "HFClassifier", "detector", "injection_labels", "load_classifier"]

#: what ``injection_model=`` names the shipped linear model by
BUILTIN = "builtin"
_INJECTION_LABEL = re.compile(r"inject|jailbreak|malicious|unsafe|attack|prompt[_ ]?attack", re.IGNORECASE)
_SAFE_LABEL = re.compile(r"safe|benign|legit|normal|clean", re.IGNORECASE)


def injection_labels(id2label: dict[int, str]) -> list[int]:
    """The label ids that mean "an injection": by name; for a two-label head with generic
    names (``LABEL_0``/``LABEL_1``) or a safe/other pair, the second (the positive class).

    :raises ConfigError: no label can be read as an injection.
    """
    named = [i for i, name in id2label.items() if _INJECTION_LABEL.search(name) and not name.lower().startswith("not")]
    if named:
        return sorted(named)
    if len(id2label) == 2:
        safe = [i for i, name in id2label.items() if _SAFE_LABEL.search(name)]
        return [i for i in id2label if i not in safe] if len(safe) == 1 else [max(id2label)]
    raise ConfigError(f"injection_model: no label names an injection, got labels {sorted(id2label.values())!r}")


@dataclass
class HFClassifier:
    """A Hugging Face sequence-classification model as a sentence scorer (loaded lazily)."""

    name: str
    threshold: float = 0.5
    batch_size: int = 32
    max_length: int = 256
    _loaded: tuple[Any, Any, list[int]] | None = field(default=None, repr=False)

    def _load(self) -> tuple[Any, Any, list[int]]:
        if self._loaded is None:
            require("transformers", "models")
            from transformers import AutoModelForSequenceClassification, AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(self.name)
            model = AutoModelForSequenceClassification.from_pretrained(self.name)
            model.eval()
            id2label = {int(k): str(v) for k, v in model.config.id2label.items()}
            self._loaded = (tokenizer, model, injection_labels(id2label))
        return self._loaded

    def __call__(self, sentences: list[str]) -> list[float]:
        import torch

        tokenizer, model, positive = self._load()
        out: list[float] = []
        with torch.inference_mode():
            for i in range(0, len(sentences), self.batch_size):
                batch = tokenizer(
                    sentences[i : i + self.batch_size],
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                )
                probs = torch.softmax(model(**batch).logits.float(), dim=-1)
                out += probs[:, positive].sum(dim=-1).tolist()
        return out


def load_classifier(name: str, threshold: float = 0.5) -> Detector:
    """A detector over the Hugging Face text-classification model ``name`` (hub name or
    local path). Checks that ``transformers`` is installed now; loads the weights on first
    use.

    :raises MissingExtraError: ``transformers`` is not installed (extra ``models``).
    """
    require("transformers", "models")
    return SentenceClassifier(HFClassifier(name, threshold), threshold)


def detector(spec: object) -> Detector | None:
    """The detector ``injection_model=`` names (see the module docstring).

    :raises ConfigError: any other value.
    """
    if spec is None:
        return None
    if isinstance(spec, str) and spec == BUILTIN:
        return builtin()
    if hasattr(spec, "spans_many"):
        return spec
    if callable(spec):
        score: Callable[[list[str]], Sequence[float]] = spec
        return SentenceClassifier(score)
    if isinstance(spec, (str, Path)) and str(spec).strip():
        return load_classifier(str(spec))
    raise ConfigError(
        "injection_model must be 'builtin', None, a callable (sentences) -> probabilities or a Hugging Face "
        f"model name or path, got {spec!r}"
    )
