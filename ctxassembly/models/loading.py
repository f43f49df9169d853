"""Which kind a model is, whether its library is installed, and each model loaded once.

Everything heavy (torch, sentence-transformers, transformers) is imported inside
functions: importing ctxassembly never loads a model library. A stage checks that the
library is importable when it is built (:func:`require`) and loads weights on first use.

A model is named by an instance, a local path or a hub name. For a string the kind is
read from the saved config, not guessed from the name: a folder with
``modules.json``/``config_sentence_transformers.json`` is a sentence-transformers
bi-encoder; a ``config.json`` whose architecture ends in ``ForSequenceClassification``
is a cross-encoder (:func:`model_kind`).
"""

from __future__ import annotations

import importlib.util
import json
import os
import threading
from collections.abc import Callable
from typing import Any, Literal

from ctxassembly.errors import ConfigError, MissingExtraError

__all__ = [
    "DEFAULT_CROSS_ENCODER",
    "DEFAULT_EMBEDDER",
    "EXTRA",
    "Kind",
    "is_cross_encoder",
    "is_sentence_transformer",
    "load_cross_encoder",
    "load_sentence_transformer",
    "model_kind",
    "require",
    "untrained_head",
]

DEFAULT_CROSS_ENCODER = "cross-encoder/ms-marco-MiniLM-L-6-v2"
DEFAULT_EMBEDDER = "sentence-transformers/all-MiniLM-L6-v2"
EXTRA = "models"

Kind = Literal["bi", "cross"]


def require(package: str = "sentence_transformers", extra: str = EXTRA) -> None:
    """Check that ``package`` can be imported, without importing it.

    :raises MissingExtraError: it is not installed (the message names the extra).
    """
    if importlib.util.find_spec(package) is None:
        raise MissingExtraError(package.replace("_", "-"), extra)


def _import_st() -> Any:
    require()
    try:
        import sentence_transformers
    except ImportError as e:  # installed but broken (e.g. a torch mismatch)
        raise MissingExtraError("sentence-transformers", EXTRA) from e
    return sentence_transformers


def is_sentence_transformer(obj: object) -> bool:
    """True for a ``SentenceTransformer`` instance (checked without importing the library)."""
    return any(
        t.__name__ == "SentenceTransformer" and t.__module__.startswith("sentence_transformers")
        for t in type(obj).__mro__
    )


def is_cross_encoder(obj: object) -> bool:
    """True for a sentence-transformers ``CrossEncoder`` instance."""
    return any(
        t.__name__ == "CrossEncoder" and t.__module__.startswith("sentence_transformers") for t in type(obj).__mro__
    )


def model_kind(spec: str) -> Kind:
    """``"bi"`` or ``"cross"`` for a local model folder or a hub name, from its saved config.

    A hub name is resolved through the local Hugging Face cache (no download here);
    ``cross-encoder/...`` names are cross-encoders by the hub's convention.

    :raises ConfigError: the folder is not a model, or its kind cannot be determined.
    """
    if os.path.isdir(spec):
        return _kind_from_files(
            lambda name: os.path.join(spec, name) if os.path.isfile(os.path.join(spec, name)) else None, spec
        )
    if os.path.exists(spec):
        raise ConfigError(f"model path {spec!r} is a file; expected a model folder or a hub name")
    if spec.startswith(("./", "../", "/", "~")):
        raise ConfigError(f"model path {spec!r} does not exist; expected a model folder or a hub name")

    def cached(name: str) -> str | None:
        try:
            from huggingface_hub import try_to_load_from_cache
        except ImportError:
            return None
        found = try_to_load_from_cache(spec, name)
        return found if isinstance(found, str) else None

    try:
        return _kind_from_files(cached, spec)
    except ConfigError:
        if spec.startswith("cross-encoder/"):
            return "cross"
        if spec.startswith("sentence-transformers/"):
            return "bi"
        raise


def _kind_from_files(find: Callable[[str], str | None], spec: str) -> Kind:
    if find("modules.json") or find("config_sentence_transformers.json"):
        return "bi"
    config = find("config.json")
    if config is None:
        raise ConfigError(
            f"cannot tell whether {spec!r} is a cross-encoder or a bi-encoder: no modules.json, "
            "config_sentence_transformers.json or config.json found; pass a loaded model instead"
        )
    with open(config, encoding="utf-8") as f:
        archs = json.load(f).get("architectures") or []
    if any(str(a).endswith("ForSequenceClassification") for a in archs):
        return "cross"
    raise ConfigError(
        f"{spec!r} has architectures {archs!r}: neither a sequence-classification cross-encoder nor a "
        "sentence-transformers folder (modules.json); pass a loaded SentenceTransformer or CrossEncoder instead"
    )


def untrained_head(cross: Any) -> str | None:
    """Why ``cross`` (a loaded ``CrossEncoder``) scores at random, or ``None``.

    A ``CrossEncoder`` built from a checkpoint that has no sequence-classification head (a
    bi-encoder such as all-MiniLM-L6-v2, a bare ``BertModel``) loads fine: transformers
    initialises a new head, and the scores are noise. The checkpoint's own config says so:
    its ``architectures`` name no ``...ForSequenceClassification``.
    """
    model = getattr(cross, "model", None)
    config = getattr(model, "config", None)
    archs = list(getattr(config, "architectures", None) or [])
    if not archs or any(str(a).endswith("ForSequenceClassification") for a in archs):
        return None
    where = getattr(config, "_name_or_path", None) or "the checkpoint"
    return (
        f"the cross-encoder from {where!s} has a newly initialised classification head: the checkpoint is "
        f"{', '.join(map(str, archs))}, no ...ForSequenceClassification (a bi-encoder loaded as a CrossEncoder?), "
        "so its scores are random; pass it as a SentenceTransformer (bi-encoder) or use a trained cross-encoder"
    )


_LOCK = threading.Lock()
_LOADED: dict[tuple[str, str, str | None], Any] = {}


def load_sentence_transformer(spec: str, device: str | None = None) -> Any:
    """A ``SentenceTransformer`` for a path or hub name, loaded once per process.

    :raises MissingExtraError: sentence-transformers is not installed.
    """
    return _load_once("bi", "SentenceTransformer", spec, device)


def load_cross_encoder(spec: str, device: str | None = None) -> Any:
    """A ``CrossEncoder`` for a path or hub name, loaded once per process.

    :raises MissingExtraError: sentence-transformers is not installed.
    """
    return _load_once("cross", "CrossEncoder", spec, device)


def _load_once(kind: str, cls: str, spec: str, device: str | None) -> Any:
    st = _import_st()
    with _LOCK:
        key = (kind, spec, device)  # one copy per device: a model asked for on another device is loaded there
        if key not in _LOADED:
            _LOADED[key] = getattr(st, cls)(spec, device=device)
        return _LOADED[key]
