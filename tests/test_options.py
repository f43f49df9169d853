"""Options: every option validated at construction, whatever stages run; one error for an
unknown name; the default pipeline built from them; the reference page in step."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import FrozenInstanceError, fields
from pathlib import Path
from typing import Any

import pytest

from ctxassembly import Assembler, ConfigError, assemble
from ctxassembly.chunk import Chunk
from ctxassembly.options import REGENERATE, Options, UnknownOption, reference
from ctxassembly.pipeline import Context
from ctxassembly.stages import (
    Arrange,
    Dedup,
    Excerpt,
    Extract,
    Horizon,
    Relevance,
    Rerank,
    Select,
    SemanticDedup,
    Tables,
)

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[1]


class Noop:
    name = "noop"

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        return chunks


def by_word(query: str, texts: list[str]) -> list[float]:
    return [float(sum(w in t for w in query.split())) for t in texts]


def embed(texts: list[str]) -> list[list[float]]:
    return [[float(len(t)), 1.0] for t in texts]


# option -> (a valid value other than the default, an invalid value, what the message says)
CASES: dict[str, tuple[Any, Any, str]] = {
    "order": ("reading", "random", r"order must be one of"),
    "format": ("plain", "html", r"format must be one of"),
    "tokenizer": (len, 3.5, r"tokenizer"),
    "reserve": (100, -1, r"reserve must be an int >= 0, got -1"),
    "max_per_doc": (2, 0, r"max_per_doc must be an int >= 1"),
    "principals": (["alice"], "alice", r"principals must be a collection of strings"),
    "acl_field": ("readers", "", r"acl_field must be a non-empty str"),
    "permit": (lambda c, p: True, "yes", r"permit must be a callable"),
    "enforce_acl": (True, "yes", r"enforce_acl must be True or False"),
    "scope": ({"team": "a"}, ["team"], r"scope must be a mapping"),
    "version_policy": ("label", "keep", r"version_policy must be one of"),
    "absent_version": ("empty", "ignore", r"absent_version must be one of \('latest', 'empty', 'error'\), got 'ig"),
    "latest": ("document", "page", r"latest must be one of \('site', 'document'\), got 'page'"),
    "subject_versions": (False, 1, r"subject_versions must be True or False"),
    "version_keys": ("release", [""], r"version_keys must be a metadata key"),
    "location_keys": (("url",), 5, r"location_keys must be a metadata key"),
    "min_score": (0.5, "high", r"min_score must be a number"),
    "weights": ({"order": 1.0}, {"colour": 1.0}, r"weights: unknown relevance signal 'colour'"),
    "rrf_k": (10, 0, r"rrf_k must be a number in \(0, inf\)"),
    "order_k": (30, -1, r"order_k must be a number in \(0, inf\)"),
    "none_score": ("drop", "zero", r"none_score must be one of"),
    "top_k": (5, 0, r"top_k must be an int >= 1"),
    "depth": (32, 0.5, r"depth must be a number in \[1, inf\)"),
    "horizon": (8, 0.5, r"horizon must be a number in \[1, inf\)"),
    "near_threshold": (0.9, 1.5, r"near_threshold must be a number in \(0, 1\]"),
    "safety": ("flag", "ignore", r"safety must be one of"),
    "injection_model": (None, 3, r"injection_model must be .builtin., None, a callable"),
    "spotlight": ("datamark", "bold", r"spotlight must be one of"),
    "merge_gap": (10, -1, r"merge_gap must be an int >= 0"),
    "max_share": (0.5, 0, r"max_share must be a number in \(0, 1\]"),
    "agreed_share": (None, 1.5, r"agreed_share must be a number in \(0, 1\]"),
    "top_share": (None, 0, r"top_share must be a number in \(0, 1\]"),
    "reranker": (by_word, 3, r"reranker must be a model"),
    "rerank_fuse": (2.0, -5, r"rerank_fuse must be a number in \[0, inf\), got -5"),
    "embedder": (embed, True, r"embedder must be a model"),
    "semantic_threshold": (0.9, 7, r"semantic_threshold must be a number in \(0, 1\], got 7"),
    "device": ("cpu", "", r"device must be a non-empty str"),
    "extract": (True, "on", r"extract must be True or False"),
    "extract_share": (0.5, 5, r"extract_share must be a number in \(0, 1\], got 5"),
    "pruner": (by_word, 3, r"pruner must be a callable \(question, passages\) -> scores or a model's"),
    "pruner_threshold": (0.1, 2, r"pruner_threshold must be a number in \[0, 1\], got 2"),
    "pruner_trust_remote_code": (True, "yes", r"pruner_trust_remote_code must be True or False"),
    "llm_stage": (Noop(), "summarize", r"llm_stage must be a stage"),
    "fill": (False, None, r"fill must be True or False"),
}


def test_the_cases_cover_every_option() -> None:
    assert set(CASES) == set(Options.names())
    assert Options.names() == tuple(f.name for f in fields(Options))


@pytest.mark.parametrize("name", list(CASES))
def test_every_option_accepts_a_valid_value(name: str) -> None:
    valid, _, _ = CASES[name]
    options = Options(**{name: valid})
    assert getattr(options, name) == (frozenset(valid) if name == "principals" else valid)


@pytest.mark.parametrize("name", list(CASES))
def test_every_option_rejects_an_invalid_value_naming_the_field(name: str) -> None:
    _, invalid, match = CASES[name]
    with pytest.raises(ConfigError, match=match):
        Options(**{name: invalid})
    with pytest.raises(ConfigError, match=match):
        Assembler(**{name: invalid})
    with pytest.raises(ConfigError, match=match):  # custom stages do not skip validation
        Assembler(stages=[Noop()], **{name: invalid})
    with pytest.raises(ConfigError, match=match):
        assemble("q", [], budget=100, **{name: invalid})


@pytest.mark.parametrize(("name", "value"), [("rerank_fuse", -5), ("semantic_threshold", 7), ("extract_share", 5)])
def test_the_values_the_issue_names_fail_without_their_stage(name: str, value: float) -> None:
    with pytest.raises(ConfigError, match=name):
        Assembler(**{name: value})  # no reranker, no embedder, no extraction configured


def test_a_stage_where_a_model_belongs_says_where_the_stage_goes() -> None:
    with pytest.raises(ConfigError, match=r"reranker must be a model .* a stage goes in Assembler\(stages=\[...\]\)"):
        Assembler(reranker=Rerank(by_word))


def test_an_unknown_option_is_one_error_everywhere() -> None:
    errors = []
    for call in (
        lambda: Assembler(colour="red"),
        lambda: Assembler(stages=[Noop()], colour="red"),
        lambda: assemble("q", [], budget=10, colour="red"),
        lambda: Options.from_mapping({"colour": "red"}),
        lambda: Options().replace(colour="red"),
    ):
        with pytest.raises(UnknownOption) as info:
            call()
        errors.append(str(info.value))
    assert len(set(errors)) == 1
    assert errors[0].startswith("unknown option 'colour'; valid options: absent_version, acl_field, agreed_share")
    assert isinstance(info.value, ConfigError)
    assert isinstance(info.value, TypeError)


def test_options_are_frozen_and_replace_validates() -> None:
    options = Options(order="reading")
    with pytest.raises(FrozenInstanceError):
        options.order = "bookend"  # type: ignore[misc]
    assert options.replace(reserve=50) == Options(order="reading", reserve=50)
    assert options.order == "reading"
    assert options.reserve == 0
    with pytest.raises(ConfigError, match="reserve"):
        options.replace(reserve=-1)


def test_an_options_object_and_keywords_combine_in_the_assembler() -> None:
    base = Options(order="reading", reserve=40)
    assembler = Assembler(base, reserve=10)
    assert assembler.options == Options(order="reading", reserve=10)
    with pytest.raises(ConfigError, match="options must be an Options"):
        Assembler({"order": "reading"})  # type: ignore[arg-type]


def test_build_stages_carries_the_options_to_the_stages() -> None:
    stages = Options(horizon=3, near_threshold=0.9, rrf_k=20, reserve=7, order="edges").build_stages()
    by_type = {type(s): s for s in stages}
    assert by_type[Horizon].horizon == 3.0
    assert by_type[Dedup].near_threshold == 0.9
    assert by_type[Relevance].rrf_k == 20
    assert by_type[Select].reserve == 7
    assert by_type[Arrange].order == "edges"
    assert by_type[Select].fit is not None  # fill: the excerpt cuts the overflowing chunk
    assert Options(fill=False).build_stages()[-2].fit is None  # type: ignore[attr-defined]


def test_model_stages_and_compression_follow_their_options() -> None:
    names = [s.name for s in Options().build_stages()]
    assert "rerank" not in names
    assert "semantic" not in names
    assert "excerpt" in names
    stages = Options(embedder=embed, semantic_threshold=0.9, extract=True).build_stages()
    assert any(isinstance(s, SemanticDedup) and s.semantic_threshold == 0.9 for s in stages)
    assert [type(s) for s in stages if isinstance(s, (Tables, Extract, Excerpt))] == [Tables, Extract]
    assert not any(isinstance(s, Excerpt) for s in Options(max_share=None).build_stages())


def test_the_reference_page_is_current() -> None:
    page = (REPO / "docs" / "options.md").read_text(encoding="utf-8")
    assert page == reference(), f"docs/options.md is stale; regenerate it from the repository root: {REGENERATE}"
    assert all(f"| `{name}` |" in page for name in Options.names())


def test_every_closed_set_option_documents_each_of_its_values() -> None:
    """The valid values come from ctxassembly.kinds; the reference page names every one."""
    closed = {f.name: f for f in fields(Options) if hasattr(f.metadata["check"], "valid")}
    assert set(closed) == {"order", "format", "version_policy", "absent_version", "latest", "none_score", "safety"}
    for name, f in closed.items():
        missing = [v for v in f.metadata["check"].valid if f"`{v}`" not in f.metadata["doc"]]
        assert not missing, f"{name}: the doc does not name {missing}"


def test_the_regenerate_command_writes_the_page(tmp_path: Path) -> None:
    command = REGENERATE.replace("docs/options.md", str(tmp_path / "options.md"))
    subprocess.run(command.replace("python ", f"{sys.executable} ", 1), shell=True, check=True, cwd=REPO)
    assert (tmp_path / "options.md").read_text(encoding="utf-8") == reference()


def test_the_readme_stage_table_is_the_run_order() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("| stage | what it does |") :].split("\n\n", 1)[0]
    listed: list[str] = []
    for row in table.splitlines()[2:]:
        m = re.match(r"^\| \*?`(\w+)`(?: \+ `(\w+)`)?", row)
        if m:
            listed += [n for n in m.groups() if n]
    with_excerpt = [s.name for s in Options(reranker=by_word, embedder=embed).build_stages()]
    with_extract = [s.name for s in Options(reranker=by_word, embedder=embed, extract=True).build_stages()]
    with_pruner = [s.name for s in Options(reranker=by_word, embedder=embed, pruner=by_word).build_stages()]
    at = with_excerpt.index("excerpt")
    assert listed == [*with_excerpt[: at + 1], "prune", "tables", "extract", *with_excerpt[at + 1 :]]
    assert with_extract == [n for n in listed if n not in ("excerpt", "prune")]
    assert with_pruner == [n for n in listed if n not in ("excerpt", "tables", "extract")]
