"""Options: every assembly option in one frozen, validated object, and the default pipeline.

``Options(**values)`` checks every field when it is built, whatever stages will run
(a bad value is a :class:`~ctxassembly.errors.ConfigError` that names the field);
``Options.from_mapping(values)`` also refuses an unknown name, listing the valid ones
(:class:`UnknownOption`). :meth:`Options.build_stages` builds the default pipeline from
them. The reference page of every option, docs/options.md, is rendered from the fields
below by :func:`reference`; :data:`REGENERATE` is the command that rewrites it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields
from dataclasses import replace as _replace
from typing import Any

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.kinds import (
    ABSENT_POLICIES,
    FORMATS,
    LATEST_SCOPES,
    NONE_POLICIES,
    ORDERS,
    SAFETY_MODES,
    SIGNALS,
    SPOTLIGHTS,
    VERSION_POLICIES,
    AbsentPolicy,
    Format,
    LatestScope,
    NonePolicy,
    Order,
    SafetyMode,
    SpotlightMode,
    VersionPolicy,
    one_of,
)
from ctxassembly.models.classifier import detector
from ctxassembly.pipeline import Stage
from ctxassembly.render import SEPARATOR, Renderer
from ctxassembly.stages.admit import Admit
from ctxassembly.stages.arrange import Arrange
from ctxassembly.stages.dedup import Dedup
from ctxassembly.stages.excerpt import AGREED_SHARE, TOP_SHARE, Excerpt
from ctxassembly.stages.extract import Extract
from ctxassembly.stages.horizon import Depth, Horizon
from ctxassembly.stages.merge import Merge
from ctxassembly.stages.prune import Prune
from ctxassembly.stages.relevance import Relevance
from ctxassembly.stages.rerank import Rerank
from ctxassembly.stages.safety import Safety
from ctxassembly.stages.select import Select
from ctxassembly.stages.semantic import SemanticDedup
from ctxassembly.stages.tables import Tables
from ctxassembly.stages.version import VersionFilter
from ctxassembly.tokens import TokenCounter, get_counter
from ctxassembly.versioning import LOCATION_KEYS, VERSION_KEYS

__all__ = ["REGENERATE", "Options", "UnknownOption", "reference"]

# run from the repository root
REGENERATE = """python -c "from ctxassembly.options import reference; print(reference(), end='')" > docs/options.md"""


class UnknownOption(ConfigError, TypeError):
    """An option name that does not exist. Also a ``TypeError``: what Python raises for
    an unexpected keyword argument, so code that caught that from ``Assembler(...)``
    keeps working."""


# -- validation: one check per field, each raising a ConfigError that names the field --
Check = Callable[[str, Any], None]


def _fail(name: str, expected: str, value: object) -> ConfigError:
    return ConfigError(f"{name} must be {expected}, got {value!r}")


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _one_of(*valid: str) -> Check:
    """The check of a closed set (:mod:`ctxassembly.kinds`); ``check.valid`` holds the
    values, which the field's doc must name (tests/test_options.py checks it)."""

    def check(name: str, v: Any) -> None:
        one_of(name, v, valid)

    check.valid = valid  # type: ignore[attr-defined]
    return check


def _optional(check: Check) -> Check:
    def optional(name: str, v: Any) -> None:
        if v is not None:
            check(name, v)

    return optional


def _int_at_least(low: int) -> Check:
    def check(name: str, v: Any) -> None:
        if not _is_int(v) or v < low:
            raise _fail(name, f"an int >= {low}", v)

    return check


def _number(low: float, *, open_low: bool = False, high: float | None = None) -> Check:
    """A finite number in [low, high] (``(low, high]`` when ``open_low``)."""
    span = f"{'(' if open_low else '['}{low:g}, {'inf)' if high is None else f'{high:g}]'}"

    def check(name: str, v: Any) -> None:
        if not _is_number(v) or v < low or (open_low and v == low) or (high is not None and v > high):
            raise _fail(name, f"a number in {span}", v)

    return check


def _bool(name: str, v: Any) -> None:
    if not isinstance(v, bool):
        raise _fail(name, "True or False", v)


def _str(name: str, v: Any) -> None:
    if not isinstance(v, str) or not v.strip():
        raise _fail(name, "a non-empty str", v)


def _callable(name: str, v: Any) -> None:
    if not callable(v):
        raise _fail(name, "a callable", v)


def _injection_model(name: str, v: Any) -> None:
    if v is None or callable(v) or hasattr(v, "spans_many") or isinstance(v, os.PathLike):
        return
    if not isinstance(v, str) or not v.strip():
        raise _fail(name, "'builtin', None, a callable (sentences) -> probabilities or a model name or path", v)


def _mapping(name: str, v: Any) -> None:
    if not isinstance(v, Mapping):
        raise _fail(name, "a mapping", v)


def _principals(name: str, v: Any) -> None:
    if isinstance(v, str) or not isinstance(v, Iterable):
        raise ConfigError(f"{name} must be a collection of strings, got {v!r}")


def _keys(name: str, v: Any) -> None:
    keys = (v,) if isinstance(v, str) else v
    if not isinstance(keys, (tuple, list)) or not all(isinstance(k, str) and k for k in keys):
        raise _fail(name, "a metadata key or a sequence of keys (non-empty str)", v)


def _weights(name: str, v: Any) -> None:
    _mapping(name, v)
    for signal, w in v.items():
        if signal not in SIGNALS:
            raise ConfigError(f"{name}: unknown relevance signal {signal!r}; expected one of {SIGNALS}")
        if not _is_number(w) or w < 0:
            raise ConfigError(f"{name}: weight of {signal!r} must be a non-negative number, got {w!r}")
    if not any(v.values()):
        raise _fail(name, "a mapping with at least one positive weight", v)


def _tokenizer(name: str, v: Any) -> None:
    try:
        get_counter(v)
    except ConfigError as e:
        raise ConfigError(f"{name}: {e}") from None


def _model(name: str, v: Any) -> None:
    """A model option: a path or hub name, or an object (a model instance or a callable;
    the stage that uses it checks which kind it is when it is built)."""
    if isinstance(v, str):
        _str(name, v)
    elif isinstance(v, Stage):
        raise ConfigError(
            f"{name} must be a model (instance, local path or hub name) or a callable, got the stage {v!r}; "
            "a stage goes in Assembler(stages=[...])"
        )
    elif isinstance(v, (bool, int, float, Mapping, list, tuple)):
        raise _fail(name, "a model (instance, local path or hub name) or a callable", v)


def _pruner(name: str, v: Any) -> None:
    """A pruner: a model's local path or hub name, or a callable (question, passages) -> scores."""
    if isinstance(v, (str, os.PathLike)):
        _str(name, os.fspath(v))
    elif isinstance(v, Stage):
        raise ConfigError(
            f"{name} must be a callable (question, passages) -> scores or a model's local path or hub name, "
            f"got the stage {v!r}; a stage goes in Assembler(stages=[...])"
        )
    elif not callable(v):
        raise _fail(name, "a callable (question, passages) -> scores or a model's local path or hub name", v)


def _stage(name: str, v: Any) -> None:
    if not isinstance(v, Stage):
        raise _fail(name, "a stage (a name and a run(chunks, ctx) method)", v)


def _meta(check: Check, doc: str) -> dict[str, Any]:
    return {"check": check, "doc": doc}


@dataclass(frozen=True)
class Options:
    """Every option of an assembly call; see docs/options.md for the reference.

    :raises ConfigError: a value out of range or of the wrong kind (the message names the
        field, the expected values and what was given).
    """

    # -- output -------------------------------------------------------------------------
    order: Order = field(
        default="bookend",
        metadata=_meta(
            _one_of(*ORDERS), "Final order: `bookend` (best at both ends), `edges`, `relevance` or `reading`."
        ),
    )
    format: Format = field(
        default="xml", metadata=_meta(_one_of(*FORMATS), "Rendering of the context: `xml`, `evidence` or `plain`.")
    )
    tokenizer: object = field(
        default=None,
        metadata=_meta(
            _tokenizer,
            "`None` (cl100k_base), an encoding name, a tiktoken Encoding, a Hugging Face tokenizer "
            "or a callable `text -> int`.",
        ),
    )
    reserve: int = field(
        default=0, metadata=_meta(_int_at_least(0), "Tokens of the budget kept back for the rest of the prompt.")
    )
    max_per_doc: int | None = field(
        default=None, metadata=_meta(_optional(_int_at_least(1)), "At most this many chunks per document.")
    )
    # -- access (Admit) -----------------------------------------------------------------
    principals: Iterable[str] | None = field(
        default=None,
        metadata=_meta(_optional(_principals), "Who is asking: chunks whose ACL names none of them leave (`Admit`)."),
    )
    acl_field: str = field(default="acl", metadata=_meta(_str, "Metadata key of a chunk's access list (`Admit`)."))
    permit: Callable[[Chunk, frozenset[str]], bool] | None = field(
        default=None,
        metadata=_meta(_optional(_callable), "`(chunk, principals) -> bool`, an access check of your own (`Admit`)."),
    )
    enforce_acl: bool | None = field(
        default=None,
        metadata=_meta(_optional(_bool), "Enforce ACLs; `None`: whenever principals or `permit` are given (`Admit`)."),
    )
    scope: Mapping[str, object] | None = field(
        default=None,
        metadata=_meta(
            _optional(_mapping),
            "Metadata key -> a value, a collection of values or a predicate a chunk must match (`Admit`).",
        ),
    )
    # -- versions (VersionFilter) -------------------------------------------------------
    version_policy: VersionPolicy = field(
        default="drop",
        metadata=_meta(_one_of(*VERSION_POLICIES), "`drop` or `label` chunks of another version than the target."),
    )
    absent_version: AbsentPolicy = field(
        default="latest",
        metadata=_meta(
            _one_of(*ABSENT_POLICIES),
            "When the version asked for (`target_version`, or one the question names) is among no candidate's "
            "versions: `latest` answers for the latest version of each document, `empty` keeps that target "
            "(every versioned chunk leaves), `error` raises `AbsentVersionError`; the first two warn "
            "(`AbsentVersionWarning`) and note it in the report. `latest` by default: a user asking about 9.9 "
            "of docs that stop at 8.2 (a typo, an unreleased version, a question naming its Python version) "
            "is better served by the newest docs than by an empty context, and the warning says it happened.",
        ),
    )
    latest: LatestScope = field(
        default="site",
        metadata=_meta(
            _one_of(*LATEST_SCOPES),
            "With no version asked for, what is current: `site` the newest release of the docs a page belongs to "
            "(its location before the version segment), so a page that release lacks leaves as superseded "
            "(detail `absent_from`); `document` the newest version of each page among the candidates. Pages "
            "versioned by a field alone have no site: another page with copies at a page's newest version and "
            "at a newer one stands for it (with none, theirs is the per-document latest).",
        ),
    )
    subject_versions: bool = field(
        default=True, metadata=_meta(_bool, "Treat release notes about another version as other-version.")
    )
    version_keys: Sequence[str] | str = field(
        default=VERSION_KEYS, metadata=_meta(_keys, "Metadata keys read for a chunk's version, in order.")
    )
    location_keys: Sequence[str] | str = field(
        default=LOCATION_KEYS, metadata=_meta(_keys, "Metadata keys of the URL / file path that may carry a version.")
    )
    # -- relevance (Relevance) ----------------------------------------------------------
    min_score: float | None = field(
        default=None, metadata=_meta(_optional(_number(-math.inf)), "Chunks whose retriever score is below this leave.")
    )
    weights: Mapping[str, float] | None = field(
        default=None,
        metadata=_meta(
            _optional(_weights),
            f"Weights of the relevance signals {', '.join(f'`{s}`' for s in SIGNALS)} fused by RRF; "
            "`None`: the defaults.",
        ),
    )
    rrf_k: float = field(
        default=60.0,
        metadata=_meta(_number(0, open_low=True), "The `k` of reciprocal rank fusion of the relevance signals."),
    )
    order_k: float | None = field(
        default=None,
        metadata=_meta(
            _optional(_number(0, open_low=True)),
            "The `k` of the retriever's order alone, its weight scaled by `order_k / rrf_k`: the first hit "
            "counts as with `rrf_k`, the places below it less (30 suits a strong hybrid retriever); `None`: `rrf_k`.",
        ),
    )
    none_score: NonePolicy = field(
        default="rank",
        metadata=_meta(
            _one_of(*NONE_POLICIES), "A chunk without a retriever score: `rank` it by order, `drop` it, or `error`."
        ),
    )
    top_k: int | None = field(
        default=None, metadata=_meta(_optional(_int_at_least(1)), "Keep at most this many chunks after ranking.")
    )
    depth: float | None = field(
        default=16.0,
        metadata=_meta(
            _optional(_number(1)),
            "Only the retriever's best candidates holding about `depth` x budget tokens (never fewer than 100) "
            "are read at all; the rest leave as `beyond_horizon`; it doubles when the selection runs out of "
            "chunks or no chunk read carries the target version asked for. `None`: every candidate is read.",
        ),
    )
    horizon: float | None = field(
        default=4.0,
        metadata=_meta(
            _optional(_number(1)),
            "Cascade: only the best chunks holding about `horizon` x budget tokens (never fewer than 20) go on "
            "to the costly stages; the rest leave as `beyond_horizon`; if the head starves the selection it "
            "doubles. `None`: every chunk goes through every stage.",
        ),
    )
    # -- safety, duplicates, merge ------------------------------------------------------
    safety: SafetyMode = field(
        default="remove",
        metadata=_meta(
            _one_of(*SAFETY_MODES), "Injection-like text: `remove` the sentences, `drop` the chunk or `flag` it."
        ),
    )
    injection_model: object = field(
        default="builtin",
        metadata=_meta(
            _injection_model,
            "Second net after the injection rules: `'builtin'` (the linear model shipped with the package, numpy "
            "only), `None` (the rules alone), a callable `(sentences) -> probabilities`, or a Hugging Face "
            "text-classification model (hub name or local path; extra `models`). Flagged sentences get the "
            "class `learned`.",
        ),
    )
    spotlight: SpotlightMode | None = field(
        default=None,
        metadata=_meta(
            _optional(_one_of(*SPOTLIGHTS)),
            "Spotlighting (Hines et al., 2024): `'datamark'` puts a marker drawn for each call in place of every "
            "space of the documents' text, `'base64'` encodes it; `Assembled.prompt()` says what the marking "
            "means. Costs tokens (benchmarks/README.md). `None`: the text as it is.",
        ),
    )
    near_threshold: float | None = field(
        default=0.8,
        metadata=_meta(
            _optional(_number(0, open_low=True, high=1)),
            "Shingle Jaccard at or above which chunks are near duplicates; `None`: exact duplicates only.",
        ),
    )
    merge_gap: int | None = field(
        default=0,
        metadata=_meta(
            _optional(_int_at_least(0)), "Characters between adjacent chunks that still merge; `None`: no merge."
        ),
    )
    max_share: float | None = field(
        default=0.25,
        metadata=_meta(
            _optional(_number(0, open_low=True, high=1)),
            "Largest budget share one chunk may fill whole before it is cut to its best passages "
            "(never below 250 tokens); what the chosen chunks leave of the budget goes back to the cut ones "
            "(the whole chunk, or more blocks beside its match); `None`: never cut.",
        ),
    )
    agreed_share: float | None = field(
        default=AGREED_SHARE,
        metadata=_meta(
            _optional(_number(0, open_low=True, high=1)),
            "The share instead of `max_share` (when larger) where the retriever's order and BM25 of the question "
            "agree on the head of the ranking (2 of their first 3 texts): the first chunks are likely right and "
            "stay more whole; not where the 250-token floor already sets the cap; `None`: `max_share` always.",
        ),
    )
    top_share: float | None = field(
        default=TOP_SHARE,
        metadata=_meta(
            _optional(_number(0, open_low=True, high=1)),
            "The first chunk of the ranking stays whole when it fits in this share of the budget (the likeliest "
            "to hold the answer; larger, it is cut like any other); `None`: no exception.",
        ),
    )
    # -- models -------------------------------------------------------------------------
    reranker: object = field(
        default=None,
        metadata=_meta(
            _optional(_model),
            "`None`, a CrossEncoder/SentenceTransformer (instance, local path or hub name) or a callable "
            "`(query, texts) -> scores`; runs after relevance (`Rerank`).",
        ),
    )
    rerank_fuse: float | None = field(
        default=12.0,
        metadata=_meta(
            _optional(_number(0)),
            "Weight of the incoming relevance order fused with the reranker's; `None`: the model alone.",
        ),
    )
    embedder: object = field(
        default=None,
        metadata=_meta(
            _optional(_model),
            "`None`, a SentenceTransformer (instance, path or name) or a callable `texts -> vectors`: "
            "semantic dedup, and a semantic signal for extraction.",
        ),
    )
    semantic_threshold: float = field(
        default=0.95,
        metadata=_meta(_number(0, open_low=True, high=1), "Cosine at or above which chunks are semantic duplicates."),
    )
    device: str | None = field(
        default=None,
        metadata=_meta(
            _optional(_str), "Device the models loaded by path or name run on (`cpu`, `cuda:0`, ...); `None`: auto."
        ),
    )
    # -- compression --------------------------------------------------------------------
    extract: bool | None = field(
        default=None,
        metadata=_meta(
            _optional(_bool),
            "Query-focused sentence extraction and table compression in place of the excerpt; `None`/`False`: off.",
        ),
    )
    extract_share: float = field(
        default=0.25,
        metadata=_meta(
            _number(0, open_low=True, high=1), "Largest budget share a chunk fills whole before extraction."
        ),
    )
    pruner: object = field(
        default=None,
        metadata=_meta(
            _optional(_pruner),
            "`None`, a callable `(question, passages) -> scores` (each passage as its list of sentences; one "
            "keep score in [0, 1] per sentence) or a token- / sequence-classification model (local path or hub "
            "name): keeps each chunk's sentences scoring at least `pruner_threshold`, verbatim, in place of the "
            "excerpt (`Prune`, docs/pruning.md).",
        ),
    )
    pruner_threshold: float = field(
        default=0.5,
        metadata=_meta(
            _number(0, high=1),
            "Lowest keep score of a sentence the pruner keeps (0.5: a binary keep/drop head's decision boundary).",
        ),
    )
    pruner_trust_remote_code: bool = field(
        default=False,
        metadata=_meta(_bool, "Let a pruner given by path or name run the code its model ships (transformers)."),
    )
    llm_stage: Stage | None = field(
        default=None,
        metadata=_meta(
            _optional(_stage),
            "An LLM-assisted stage run after compression, before select (`LLMExtract`, `MapReduce`, `Summarize`).",
        ),
    )
    fill: bool = field(
        default=True, metadata=_meta(_bool, "Spend what whole chunks leave of the budget on the next chunk cut to fit.")
    )

    def __post_init__(self) -> None:
        for f in fields(self):
            f.metadata["check"](f.name, getattr(self, f.name))
        if self.pruner is not None and self.extract:
            raise ConfigError(
                f"pruner and extract=True both replace the excerpt: pass one of them, got pruner={self.pruner!r} "
                "and extract=True"
            )
        if self.principals is not None:  # one pass over an iterator, and hashable
            object.__setattr__(self, "principals", frozenset(self.principals))

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The valid option names, in declaration order."""
        return tuple(f.name for f in fields(cls))

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> Options:
        """Options from a name -> value mapping.

        :raises UnknownOption: a name that is no option (the message lists the valid ones).
        :raises ConfigError: a bad value.
        """
        unknown = sorted(set(values) - set(cls.names()))
        if unknown:
            raise UnknownOption(
                f"unknown option{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
                f"valid options: {', '.join(sorted(cls.names()))}"
            )
        return cls(**values)

    def replace(self, **changes: Any) -> Options:
        """A new, validated Options with ``changes``.

        :raises UnknownOption: a name that is no option.
        """
        type(self).from_mapping(changes)  # the same unknown-name error as everywhere
        return _replace(self, **changes)

    def build_stages(self, renderer: Renderer | None = None, count_tokens: TokenCounter | None = None) -> list[Stage]:
        """The default pipeline, in run order: admit, depth, version, relevance, horizon, safety,
        rerank, dedup, semantic, merge, excerpt (or prune, or tables + extract), the LLM stage,
        select, arrange. Stages whose option is off (``None``) are left out.

        ``renderer`` and ``count_tokens`` are the assembler's (built from ``format`` and
        ``tokenizer`` when not given): select counts each chunk as it will be rendered.
        """
        renderer = Renderer(self.format, self.spotlight) if renderer is None else renderer
        count_tokens = get_counter(self.tokenizer) if count_tokens is None else count_tokens
        compress = self._compress()
        excerpt = next((s for s in compress if isinstance(s, Excerpt)), None)
        pipeline: list[Stage | None] = [
            Admit(
                self.principals,
                acl_field=self.acl_field,
                permit=self.permit,
                enforce_acl=self.enforce_acl,
                scope=self.scope,
            ),
            Depth(self.depth) if self.depth is not None else None,
            VersionFilter(
                self.version_policy,
                subject_versions=self.subject_versions,
                version_keys=self.version_keys,
                location_keys=self.location_keys,
                absent_version=self.absent_version,
                latest=self.latest,
            ),
            # relevance ranks before the injection scan so that the scan (and every stage
            # that costs per chunk) runs on the head alone; Safety moves a chunk it had to
            # clean behind the clean ones, so stuffed words cannot lift it (see Safety)
            Relevance(
                min_score=self.min_score,
                weights=self.weights,
                rrf_k=self.rrf_k,
                order_k=self.order_k,
                none_score=self.none_score,
                top_k=self.top_k,
            ),
            Horizon(self.horizon) if self.horizon is not None else None,
            Safety(self.safety, detector(self.injection_model)),
            Rerank(self.reranker, rerank_fuse=self.rerank_fuse, device=self.device)
            if self.reranker is not None
            else None,
            Dedup(near_threshold=self.near_threshold),
            SemanticDedup(self.embedder, semantic_threshold=self.semantic_threshold, device=self.device)
            if self.embedder is not None
            else None,
            Merge(self.merge_gap, max_share=1.0 if self.max_share is None else self.max_share)
            if self.merge_gap is not None
            else None,
            *compress,
            self.llm_stage,
            Select(
                reserve=self.reserve,
                max_per_doc=self.max_per_doc,
                render=renderer.costed,
                separator_tokens=count_tokens(SEPARATOR),
                fit=excerpt.fitter() if excerpt is not None and self.fill else None,
                grow=excerpt.grower() if excerpt is not None else None,
            ),
            Arrange(self.order),
        ]
        return [s for s in pipeline if s is not None]

    def _compress(self) -> list[Stage]:
        """Prune when a pruner is given; Tables + Extract when extraction is asked for;
        else the structure-aware Excerpt (none when ``max_share`` is ``None``). Extraction is off by default, with or
        without models: it measured worse than the excerpt (benchmarks/README.md)."""
        if self.pruner is not None:
            return [
                Prune(
                    self.pruner,
                    pruner_threshold=self.pruner_threshold,
                    device=self.device,
                    trust_remote_code=self.pruner_trust_remote_code,
                )
            ]
        if self.extract:
            return [
                Tables(extract_share=self.extract_share),
                Extract(self.embedder, extract_share=self.extract_share, device=self.device),
            ]
        if self.max_share is None:
            return []
        return [Excerpt(self.max_share, agreed_share=self.agreed_share, top_share=self.top_share)]


def reference() -> str:
    """docs/options.md: one section per option, rendered from the fields of :class:`Options`."""
    lines = [
        "# Options",
        "",
        f"<!-- generated from ctxassembly/options.py; do not edit by hand: {REGENERATE} -->",
        "",
        "Every option of `Assembler(...)`, `assemble(...)`, `Options(...)`, the CLI and both adapters.",
        "Each is validated when the options are built, whatever stages run: a bad value raises",
        "`ConfigError` naming the field, an unknown name `UnknownOption` (a `ConfigError` and a",
        "`TypeError`) listing the valid names.",
        "",
        "| option | default | meaning |",
        "|---|---|---|",
    ]
    for f in fields(Options):
        default = f.default if f.default is not MISSING else None
        lines.append(f"| `{f.name}` | `{default!r}` | {f.metadata['doc']} |")
    return "\n".join(lines) + "\n"
