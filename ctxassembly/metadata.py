"""The one metadata convention of the framework adapters (LangChain and LlamaIndex).

In: loader metadata becomes chunk fields through :class:`MetadataKeys` (each field names
one or more metadata keys, the first present wins) and :func:`to_record`, which builds the
mapping :meth:`~ctxassembly.chunk.Chunk.from_dict` reads. The core validates that record:
a label value whose intent is clear (a number, a path, a date, a one-item list) is coerced
to a string and noted; a value it cannot use drops that one chunk with the fate
``input``/``invalid`` (see :func:`ctxassembly.assembler.to_chunks`); every key travels in
``Chunk.meta``, so the version stage finds versions in ``source`` / ``file_path`` / ``url``
and the admit stage its ``acl``.

Out: a returned document or node is a copy of the input one with its own metadata
unchanged, plus flat keys that start with :data:`PREFIX` (``assembly_position``,
``assembly_score`` ...; :data:`OUTPUT_KEYS` lists them, :func:`facts` writes them).
Flat, prefixed keys rather than one nested dict because that is what the frameworks and
their stores expect of a document's metadata: LangChain's own compressors write flat
keys (``relevance_score``, ``query_similarity_score``), LlamaIndex excludes metadata from
the LLM and embedding views key by key, and vector stores filter on top-level scalar keys
(a nested dict is dropped or stringified by most of them).

Framework-neutral: nothing here imports LangChain or LlamaIndex.
"""

from __future__ import annotations

import contextlib
import copy
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, Literal

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.options import Options
from ctxassembly.render import cite_id, labels
from ctxassembly.report import Report
from ctxassembly.text.structure import leading_heading

__all__ = [
    "ADJACENT_GAP",
    "OUTPUT_KEYS",
    "PREFIX",
    "MetadataKeys",
    "ScoreFrom",
    "assembly_options",
    "check_budget",
    "facts",
    "section_path",
    "summary",
    "to_record",
]

Keys = tuple[str, ...]
ScoreFrom = Literal["retriever", "assembly"]
"""Which score a returned document/node carries where the framework keeps scores:
``retriever`` (default: the input's score stays, so a similarity cutoff placed after the
adapter still means what it meant; the assembly's score goes to ``assembly_score``) or
``assembly`` (the reverse: the assembly's relevance score replaces it, and the retriever's
goes to ``assembly_retriever_score``)."""

ADJACENT_GAP = 16
"""The ``merge_gap`` both adapters use unless the caller sets one: characters between two
chunks of one document that still make them neighbours. Text splitters drop the
whitespace between the chunks they cut (LlamaIndex's ``SentenceSplitter``: ``(0, 1813)``
then ``(1814, 3622)``; LangChain's ``RecursiveCharacterTextSplitter`` with no overlap: a
blank line and the next line's indentation). Over both dev corpora (Django and pytest docs,
both splitters, no overlap) 99.5% of neighbour gaps were 16 characters or fewer, and every
gap was whitespace only; a chunk that is not a neighbour is a whole chunk away. The core's
own default stays 0 (its callers give exact offsets)."""

PREFIX = "assembly_"
"""Every key the adapters add to a returned document's or node's metadata starts with it."""

POSITION = "assembly_position"  #: 0-based place in the context
CITE = "assembly_cite"  #: the citation id the context shows for it ("1" for the first block; a reply's [1])
CHUNK_ID = "assembly_chunk_id"  #: the chunk id the report names
SCORE = "assembly_score"  #: the assembly's relevance score (reranker's when one ran)
RETRIEVER_SCORE = "assembly_retriever_score"  #: the score the input carried (None without one)
RELEVANCE_RANK = "assembly_relevance_rank"  #: 0 = the best-ranked chunk of the call
STATUS = "assembly_status"  #: current / unversioned (superseded / other_version under version_policy="label")
VERSION_FROM = "assembly_version_from"  #: where the version came from: field, path, title, text or None
CONFLICTS_WITH = "assembly_conflicts_with"  #: ids of chunks that state another version
MERGED_FROM = "assembly_merged_from"  #: ids of the neighbours merged into this one ([] when none)
DUPLICATES = "assembly_duplicates"  #: ids of the duplicates this one stands for
EXCERPT = "assembly_excerpt"  #: True when the text was cut to its best passages
FLAGS = "assembly_flags"  #: safety flags (e.g. injection-like text removed)
SPAN = "assembly_span"  #: [start, end] character offsets of the text, or None
LABELS = "assembly_labels"  #: the labels the context shows (id is the cite id; title, section, source, version...)
DECISION = "assembly_decision"  #: this chunk's line of the report
REPORT = "assembly_report"  #: the call's summary (see :func:`summary`)

OUTPUT_KEYS = (
    POSITION,
    CITE,
    CHUNK_ID,
    SCORE,
    RETRIEVER_SCORE,
    RELEVANCE_RANK,
    STATUS,
    VERSION_FROM,
    CONFLICTS_WITH,
    MERGED_FROM,
    DUPLICATES,
    EXCERPT,
    FLAGS,
    SPAN,
    LABELS,
    DECISION,
    REPORT,
)
"""The keys :func:`facts` writes, in that order."""

_FIELDS = ("id", "doc_id", "title", "section", "version", "date", "start", "end", "score")
_PATH_FIELDS = ("headers", "header_path")
#: LangChain's MarkdownHeaderTextSplitter writes each heading of a chunk's path under the
#: name its caller gives it; the LangChain docs' (and most apps') names
HEADER_KEYS: Keys = tuple(f"Header {n}" for n in range(1, 7))


@dataclass(frozen=True)
class MetadataKeys:
    """Which metadata keys feed which chunk field (first present wins), and where the
    adapters write back the labels a framework shows from metadata.

    The defaults cover LangChain loaders and splitters (``source``, ``start_index``),
    LlamaIndex's conventions and corpora that carry ``doc_id`` / ``start`` / ``end``.
    A value the framework object carries itself (``Document.id``, a node's id, offsets and
    score) wins over these keys; a document reference (a node's ``ref_doc_id``) is the
    ``doc_id`` only when none of its keys is present. A single string is one key:
    ``MetadataKeys(version="release")``.

    :param status: the key LlamaIndex shows the status label under (the LLM reads node
        metadata); LangChain documents carry the status in ``assembly_status``.
    :param cite: the key LlamaIndex shows the citation id under (``cite: 1``: what the
        core rendered as ``id="1"``); LangChain documents carry it in ``assembly_cite``.
    :param source: the key LlamaIndex shows the source label under for a node without a
        title (a path's file name or a URL, as the core rendered it); written only when
        the node has no value there.
    :param headers: keys that each hold one heading of the chunk's section path, outermost
        first (LangChain's ``MarkdownHeaderTextSplitter``: ``Header 1``, ``Header 2`` ...);
        the ones present, joined by `` > ``, are the section when no ``section`` key is.
    :param header_path: keys holding the path of the headings above the chunk as one
        ``/``-separated string (LlamaIndex's ``MarkdownNodeParser``: ``/Options/Naming/``);
        the chunk's own leading heading completes it. Read when neither a ``section`` key
        nor a ``headers`` key is present. With none of them, the heading the chunk's text
        opens with (a reST title, a Markdown ``#`` line) is its section.
    :raises ConfigError: an empty key list, a non-string key or an unknown field.
    """

    id: Keys = ("id",)
    doc_id: Keys = ("doc_id", "source")
    title: Keys = ("title",)
    section: Keys = ("section",)
    version: Keys = ("version",)
    date: Keys = ("date",)
    start: Keys = ("start_index", "start")
    end: Keys = ("end_index", "end")
    score: Keys = ("score", "relevance_score")
    status: str = "status"
    cite: str = "cite"
    source: str = "source"
    headers: Keys = HEADER_KEYS
    header_path: Keys = ("header_path",)

    def __post_init__(self) -> None:
        for name in (*_FIELDS, *_PATH_FIELDS):
            value = getattr(self, name)
            keys = (value,) if isinstance(value, str) else value
            if not isinstance(keys, Sequence) or not keys or not all(isinstance(k, str) and k for k in keys):
                raise ConfigError(
                    f"MetadataKeys.{name}: expected a metadata key (str) or a non-empty tuple of them, got {value!r}"
                )
            object.__setattr__(self, name, tuple(keys))
        for name in ("status", "cite", "source"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise ConfigError(f"MetadataKeys.{name}: expected a metadata key (str), got {value!r}")

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> MetadataKeys:
        """``MetadataKeys(**values)`` with an unknown name a :class:`ConfigError` listing the valid ones."""
        valid = [f.name for f in fields(cls)]
        unknown = sorted(set(values) - set(valid))
        if unknown:
            raise ConfigError(f"MetadataKeys has no field(s) {unknown}; valid: {', '.join(valid)}")
        return cls(**values)

    def labels(self) -> tuple[str, ...]:
        """The keys a node shows its labels under, in the core's label order (id, title,
        section, source, version, date, status): the cite key, the first key of each label
        field, the source and status keys."""
        return (self.cite, self.title[0], self.section[0], self.source, self.version[0], self.date[0], self.status)


def to_record(
    metadata: Mapping[str, Any],
    text: str,
    keys: MetadataKeys,
    *,
    native: Mapping[str, Any] | None = None,
    fallback: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The chunk record (what :meth:`Chunk.from_dict` reads) for one document or node.

    ``native`` holds the values the framework object carries itself (id, offsets, score):
    a non-``None`` one wins over the metadata keys. ``fallback`` is used where no key is
    present (a node's ``ref_doc_id`` as ``doc_id``). Values are passed on as found, for the
    core to validate; only the framework conventions are read here:

    * a missing score is ``None``, not 0 (the core's ``none_score`` policy decides);
      a numpy scalar score or offset becomes a Python number;
    * a negative offset (LangChain splitters write ``start_index=-1`` for "not found in
      the source") means no offset, so the chunk does not merge;
    * with only a start offset, ``end = start + len(text)``;
    * no ``section`` key: the section is the path of ``headers`` (``Header 1 > Header 2``),
      else the ``header_path`` and the text's own leading heading, else that heading alone
      (see :class:`MetadataKeys`).

    Every metadata key, used or not, travels in ``meta``.
    """
    values: dict[str, Any] = {}
    native = native or {}
    for name in _FIELDS:
        value = native.get(name)
        if value is None:
            value = next((metadata[k] for k in getattr(keys, name) if metadata.get(k) is not None), None)
        if value is None and fallback:
            value = fallback.get(name)
        if value is None:
            continue
        if name in ("start", "end") and isinstance(value, numbers.Integral) and not isinstance(value, bool):
            value = int(value)
            if value < 0:
                continue
        elif name == "score" and isinstance(value, numbers.Real) and not isinstance(value, bool):
            # an int past the float range stays as it is: the core's check names the field
            with contextlib.suppress(OverflowError, ValueError, TypeError):
                value = float(value)
        values[name] = value
    if isinstance(values.get("start"), int) and "end" not in values:
        values["end"] = values["start"] + len(text)
    if "section" not in values:
        section = section_path(metadata, text, keys)
        if section is not None:
            values["section"] = section
    return {**values, "text": text, "meta": dict(metadata)}


def section_path(metadata: Mapping[str, Any], text: str, keys: MetadataKeys) -> str | None:
    """The section a chunk without a ``section`` key is in: its ``headers`` joined by
    `` > ``, else its ``header_path`` completed by the heading its text opens with, else
    that heading alone; ``None`` when nothing names it."""
    parts = [v.strip() for k in keys.headers if isinstance(v := metadata.get(k), str) and v.strip()]
    if parts:
        return " > ".join(parts)
    own = leading_heading(text) if isinstance(text, str) and text else None
    path = next((v for k in keys.header_path if isinstance(v := metadata.get(k), str)), None)
    if path is not None:
        parts = [p.strip() for p in path.split("/") if p.strip()]
        if own is not None and (not parts or parts[-1] != own):
            parts.append(own)
        return " > ".join(parts) or None
    return own


def summary(report: Report) -> dict[str, Any]:
    """The call's facts every returned document or node carries (counts, not decisions:
    the whole report goes to the framework's callbacks / instrumentation)."""
    return {
        "question": report.question,
        "budget": report.budget,
        "target_version": report.target_version,
        "tokens_before": report.tokens_before,
        "tokens_after": report.tokens_after,
        "kept": len(report.kept),
        "dropped": len(report.dropped),
        "reasons": {r.value: n for r, n in report.reasons.items()},
    }


def facts(
    chunk: Chunk, position: int, report: Report, call: Mapping[str, Any], retriever_score: object
) -> dict[str, Any]:
    """The ``assembly_*`` keys of one returned chunk, JSON-ready.

    :param call: the call's :func:`summary`, computed once per call (copied per chunk).
    :param retriever_score: the score the input document or node carried (a number, as a
        float; anything else as ``None``).
    """
    given = (
        float(retriever_score)
        if isinstance(retriever_score, numbers.Real) and not isinstance(retriever_score, bool)
        else None
    )
    decision = report.fate(chunk.index) if chunk.index is not None else None
    f = report.ledger[chunk.index]
    return {
        POSITION: position,
        CITE: cite_id(position),
        CHUNK_ID: chunk.id,
        SCORE: chunk.score,
        RETRIEVER_SCORE: given,
        RELEVANCE_RANK: f.rank,
        STATUS: report.ledger.status(chunk),
        VERSION_FROM: None if f.version is None else f.version.source,
        CONFLICTS_WITH: list(f.conflicts_with),
        MERGED_FROM: list(f.merged_from),
        DUPLICATES: list(f.duplicates),
        EXCERPT: f.cut is not None and "excerpt" in f.cut.by,
        FLAGS: list(f.flags),
        SPAN: [chunk.start, chunk.end] if chunk.start is not None else None,
        LABELS: labels(chunk, position, report.ledger.status(chunk)),
        DECISION: decision.to_dict() if decision is not None else None,
        REPORT: {**call, "reasons": dict(call["reasons"])},
    }


def check_budget(value: object) -> int:
    """The adapters' one budget rule: a positive ``int`` of tokens, never coerced.

    ``"1500"`` is refused rather than read as 1500, as the core's options are (no option
    converts a string): a string budget is most often a setting read from the environment
    and never parsed, and the same value must mean the same in both adapters and the core.

    :raises ValueError: anything else (the frameworks wrap it in their validation error).
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"budget must be a positive int (tokens), got {value!r}")
    return value


def assembly_options(fields: Mapping[str, Any], options: Mapping[str, Any], *, owner: str) -> Options:
    """The adapters' one way from their own fields and their ``options`` dict to validated
    :class:`~ctxassembly.options.Options` (the same checks and errors as ``Assembler``).

    ``merge_gap`` is :data:`ADJACENT_GAP` unless given (the core's own default is 0).

    :param fields: the adapter's fields that are assembly options (``order``, ``reranker`` ...).
    :raises ConfigError: an option given both as a field and in ``options``; an unknown
        option (:class:`~ctxassembly.options.UnknownOption`, listing the valid names); a
        bad value (naming the option).
    """
    clash = sorted(set(options) & {*fields, "budget", "target_version"})
    if clash:
        raise ConfigError(f"set {', '.join(clash)} as a field of {owner}, not in options")
    return Options.from_mapping({"merge_gap": ADJACENT_GAP, **fields, **options})


def copy_memo(values: Iterable[Any]) -> dict[int, Any]:
    """A :func:`copy.deepcopy` memo that shares the ``values`` that cannot be deep-copied.

    An adapter deep-copies what it hands back (the caller's objects are never touched); a
    metadata value whose ``__deepcopy__`` raises (a lock, a generator, a client, an object
    that forbids it) is shared instead of failing the call: a shallow copy for that value,
    every other value still deep-copied. The memo maps ``id(value)`` to the value itself.
    """
    memo: dict[int, Any] = {}
    for value in values:
        try:
            copy.deepcopy(value)
        except Exception:  # any __deepcopy__ / __reduce__ may raise
            memo[id(value)] = value
    return memo


def copy_metadata(metadata: Mapping[str, Any], report: Report, chunk: Chunk) -> dict[str, Any]:
    """A deep copy of ``metadata``; the values that cannot be deep-copied are shared, and the
    report notes them (``shallow_copy``, the keys named)."""
    try:
        return copy.deepcopy(dict(metadata))
    except Exception:  # any __deepcopy__ may raise: see copy_memo
        memo = copy_memo(metadata.values())
        note_shallow(report, chunk, [k for k, v in metadata.items() if id(v) in memo])
        return copy.deepcopy(dict(metadata), memo)


def note_shallow(report: Report, chunk: Chunk, keys: Sequence[str]) -> None:
    """Record that the values under ``keys`` were shared with the caller, not copied."""
    report.note("adapter", "shallow_copy", id=chunk.id, index=chunk.index, keys=list(keys))
