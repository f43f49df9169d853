"""The unit of context: an immutable chunk of retrieved text and its labels."""

from __future__ import annotations

import datetime
import math
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from ctxassembly.errors import ChunkError, shown
from ctxassembly.twin import unfrozen_twin

__all__ = ["Chunk", "FrozenMeta"]


class FrozenMeta(Mapping[str, Any]):
    """A read-only mapping: metadata can be read and copied, never changed in place."""

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        self._data: dict[str, Any] = dict(data or {})

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    # the dict's own lookups: Mapping's defaults go through __getitem__ and catch the
    # KeyError of every absent key, which costs a microsecond a test (the stages test
    # absent keys on every chunk)
    def __contains__(self, key: object) -> bool:
        return key in self._data

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def __repr__(self) -> str:
        return f"FrozenMeta({self._data!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mapping) and dict(self.items()) == dict(other.items())

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._data)))

    def __reduce__(self) -> tuple[type[FrozenMeta], tuple[dict[str, Any]]]:
        return (FrozenMeta, (self._data,))

    def updated(self, **changes: Any) -> FrozenMeta:
        """A copy with ``changes`` applied."""
        return FrozenMeta._wrap({**self._data, **changes})

    @classmethod
    def _wrap(cls, data: dict[str, Any]) -> FrozenMeta:
        """Take ownership of ``data`` (a fresh dict nobody else holds) without copying it."""
        meta = object.__new__(cls)
        meta._data = data
        return meta


#: the fields that label a chunk, all strings (a clear non-string is coerced by from_dict)
LABEL_FIELDS = ("id", "doc_id", "title", "section", "version", "date")
_STR_FIELDS = LABEL_FIELDS[1:]
_INT_FIELDS = ("start", "end")


@dataclass(frozen=True, slots=True)
class Chunk:
    """One retrieved passage.

    ``score`` is the retriever's score (higher is better) until a relevance or rerank
    stage replaces it; the replaced value is kept in the call's ledger (and in the returned
    chunk's ``meta["retriever_score"]``).
    ``start``/``end`` are character offsets of ``text`` in its source document, used to
    merge adjacent chunks. ``index`` is the chunk's position in the caller's input; the
    assembler sets it, and the report keys every decision by it (ids may repeat).
    """

    id: str
    text: str
    score: float | None = None
    doc_id: str | None = None
    title: str | None = None
    section: str | None = None
    version: str | None = None
    date: str | None = None
    start: int | None = None
    end: int | None = None
    meta: FrozenMeta = field(default_factory=FrozenMeta)
    index: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.meta, FrozenMeta):
            object.__setattr__(self, "meta", FrozenMeta(_check_meta(self.meta, self.id)))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], index: int | None = None) -> Chunk:
        """Build a chunk from a mapping with the field names of a corpus record.

        Known keys become fields (``id``, ``text``, ``score``, ``doc_id``, ``title``,
        ``section``, ``version``, ``date``, ``start``, ``end``); ``meta`` is merged with
        every other key (``release``, ``retriever``, ``tokens``, ``acl`` ...).

        :raises ChunkError: a missing or wrong-typed field, naming the field and the
            chunk id (or its index when it has no usable id).
        """
        return _from_mapping(cls, data, index, None)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the inverse of :meth:`from_dict`)."""
        out: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "meta"}
        out["meta"] = dict(self.meta)
        return out

    def with_meta(self, **changes: Any) -> Chunk:
        """A copy whose metadata has ``changes`` applied."""
        return self.evolve(meta=FrozenMeta._wrap({**self.meta._data, **changes}))

    def evolve(self, **changes: Any) -> Chunk:
        """A copy with ``changes`` applied: :func:`dataclasses.replace` at a fraction of
        its cost (stages copy every candidate they relabel, a thousand per call).

        :raises TypeError: a name that is not a field.
        """
        if not changes.keys() <= _FIELD_NAMES:
            raise TypeError(f"Chunk has no field(s) {sorted(changes.keys() - _FIELD_NAMES)}")
        get = changes.get
        meta = get("meta", self.meta)
        if type(self) is Chunk and type(meta) is FrozenMeta:
            return _built(
                get("id", self.id),
                get("text", self.text),
                get("score", self.score),
                get("doc_id", self.doc_id),
                get("title", self.title),
                get("section", self.section),
                get("version", self.version),
                get("date", self.date),
                get("start", self.start),
                get("end", self.end),
                meta,
                get("index", self.index),
            )
        return type(self)(
            id=get("id", self.id),
            text=get("text", self.text),
            score=get("score", self.score),
            doc_id=get("doc_id", self.doc_id),
            title=get("title", self.title),
            section=get("section", self.section),
            version=get("version", self.version),
            date=get("date", self.date),
            start=get("start", self.start),
            end=get("end", self.end),
            meta=get("meta", self.meta),
            index=get("index", self.index),
        )


#: a :class:`Chunk` under construction (:func:`~ctxassembly.twin.unfrozen_twin`; :func:`_built` fills it)
_Unfrozen = unfrozen_twin(Chunk)


_new = object.__new__


def _built(  # noqa: PLR0917 - the fields in order, as the constructor takes them
    id: str,  # noqa: A002  # the field's name
    text: str,
    score: float | None,
    doc_id: str | None,
    title: str | None,
    section: str | None,
    version: str | None,
    date: str | None,
    start: int | None,
    end: int | None,
    meta: FrozenMeta,
    index: int | None,
) -> Chunk:
    """``Chunk(...)`` of values already checked, ``meta`` a :class:`FrozenMeta`, at a
    fraction of the cost: the frozen dataclass's ``__init__`` sets each field through
    ``object.__setattr__`` and then runs ``__post_init__``, here each slot is stored
    directly (:data:`_Unfrozen`)."""
    c: Any = _new(_Unfrozen)
    c.id = id
    c.text = text
    c.score = score
    c.doc_id = doc_id
    c.title = title
    c.section = section
    c.version = version
    c.date = date
    c.start = start
    c.end = end
    c.meta = meta
    c.index = index
    c.__class__ = Chunk
    chunk: Chunk = c
    return chunk


def _from_mapping(
    cls: type[Chunk], data: Mapping[str, Any], index: int | None, coerced: list[tuple[str, str]] | None
) -> Chunk:
    """:meth:`Chunk.from_dict`; with a ``coerced`` list, each label field whose value was
    not a plain string is appended to it as (field, the value's type name), in
    :data:`LABEL_FIELDS` order: what :func:`~ctxassembly.assembler.to_chunks` notes, found
    here where the values are checked anyway instead of by a second pass over the fields."""
    # Well-typed plain values take the fast path (exact type tests, one dict copy for
    # the metadata); anything else goes through the checks that explain the problem.
    if type(data) is not dict and not isinstance(data, Mapping):
        where = _where(data, index)
        raise ChunkError(f"expected a mapping, got {type(data).__name__}", field="<chunk>", chunk=where)
    get = data.get
    text = get("text")
    if type(text) is not str:
        if text is None:
            raise ChunkError("missing (expected a string)", field="text", chunk=_where(data, index))
        if isinstance(text, bytes):
            raise ChunkError(
                "got bytes; decode it first, e.g. text.decode('utf-8')", field="text", chunk=_where(data, index)
            )
        if not isinstance(text, str):
            raise ChunkError(f"expected str, got {type(text).__name__}", field="text", chunk=_where(data, index))
    raw_id = get("id")
    chunk_id = raw_id if type(raw_id) is str else _odd_id(raw_id, data, index, coerced)
    score = get("score")
    if not (type(score) is float and math.isfinite(score)):
        score = _check_score(score, chunk_id)
    doc_id, title, section, version, date = get("doc_id"), get("title"), get("section"), get("version"), get("date")
    if not (
        (doc_id is None or type(doc_id) is str)
        and (title is None or type(title) is str)
        and (section is None or type(section) is str)
        and (version is None or type(version) is str)
        and (date is None or type(date) is str)
    ):
        strs = (doc_id, title, section, version, date)
        doc_id, title, section, version, date = (
            v if v is None else _check_str(name, v, chunk_id) for name, v in zip(_STR_FIELDS, strs, strict=True)
        )
        if coerced is not None:
            coerced += ((name, type(v).__name__) for name, v in zip(_STR_FIELDS, strs, strict=True) if _odd(v))
    start, end = get("start"), get("end")
    if not (
        (start is None or (type(start) is int and start >= 0))  # the fast test, then the full one
        and (end is None or (type(end) is int and end >= 0))
    ):
        _check_offsets(start, end, chunk_id)
    if start is not None and end is not None and end < start:
        raise ChunkError(f"end {shown(end)} is before start {shown(start)}", field="end", chunk=repr(chunk_id))
    given_meta = get("meta")
    meta = {k: v for k, v in data.items() if k not in _FIELD_NAMES}  # the other keys, in the caller's order
    if given_meta:
        if not isinstance(given_meta, Mapping):
            raise ChunkError(f"expected a mapping, got {type(given_meta).__name__}", field="meta", chunk=repr(chunk_id))
        meta.update(given_meta)
    if not meta:
        frozen = _NO_META  # the common record: nothing but known fields
    else:
        for key in meta:
            if type(key) is not str:
                _check_meta(meta, chunk_id)
        frozen = FrozenMeta._wrap(meta)
    if cls is Chunk:  # every value checked and the metadata frozen: set the slots directly
        return _built(chunk_id, text, score, doc_id, title, section, version, date, start, end, frozen, index)
    return cls(chunk_id, text, score, doc_id, title, section, version, date, start, end, frozen, index)


def _odd_id(raw_id: object, data: Mapping[str, Any], index: int | None, coerced: list[tuple[str, str]] | None) -> str:
    """The id of a record whose ``id`` is no plain str: ``#index`` for none, a str
    subclass or a short int as its string (noted in ``coerced``)."""
    if raw_id is None:
        if index is None:
            raise ChunkError("missing (expected a string)", field="id", chunk=_where(data, index))
        return f"#{index}"
    if not _plain_id(raw_id):
        raise ChunkError(f"expected str, got {type(raw_id).__name__}", field="id", chunk=_where(data, index))
    if coerced is not None:
        coerced.append(("id", type(raw_id).__name__))
    return str.__str__(raw_id) if isinstance(raw_id, str) else str(int(raw_id))  # type: ignore[call-overload]


_NO_META = FrozenMeta()  # immutable, so one empty instance serves every chunk without metadata
_FIELD_NAMES = frozenset(f.name for f in fields(Chunk))


def _odd(value: object) -> bool:
    """A label value that is there but no plain string (one :func:`_check_str` coerced)."""
    return value is not None and type(value) is not str


def _plain_id(value: object) -> bool:
    """A str (a subclass is read as the str it holds: its own ``__str__`` may do anything)
    or an int short enough to print (``str()`` refuses past 4,300 digits)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool) and abs(value) < 10**100)


def _where(data: object, index: int | None) -> str:
    if isinstance(data, Mapping) and isinstance(data.get("id"), str):
        return repr(data["id"])
    return f"at index {index}" if index is not None else "<unknown>"


def _check_str(name: str, value: object, chunk_id: str) -> str:
    """A label field's string, coerced where the intent is clear: a number (a YAML/JSON 5.1
    arrives as a float; an id or a year as an int), a path, a date, a one-item list."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return str(value)
        except ValueError:  # an int past Python's 4,300 digits: no label anyone can read
            pass
    path = os.fspath(value) if isinstance(value, os.PathLike) else None
    if isinstance(path, str):
        return path
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, (list, tuple)) and len(value) == 1 and isinstance(value[0], str):
        return value[0]
    raise ChunkError(
        f"expected str or None, got {type(value).__name__} {shown(value)}", field=name, chunk=repr(chunk_id)
    )


def _check_offsets(start: object, end: object, chunk_id: str) -> None:
    for name, value in (("start", start), ("end", end)):
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            raise ChunkError(
                f"expected a non-negative int or None, got {shown(value)}", field=name, chunk=repr(chunk_id)
            )


def _check_score(score: object, chunk_id: str) -> float | None:
    if score is None:
        return None
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        raise ChunkError(
            f"expected a number or None, got {type(score).__name__} {shown(score)}",
            field="score",
            chunk=repr(chunk_id),
        )
    try:
        value = float(score)
    except OverflowError:
        raise ChunkError(
            f"got {shown(score)}; scores must be finite floats", field="score", chunk=repr(chunk_id)
        ) from None
    if math.isnan(value):
        raise ChunkError("got NaN; pass None for 'no score'", field="score", chunk=repr(chunk_id))
    if math.isinf(value):
        raise ChunkError(f"got {value}; scores must be finite", field="score", chunk=repr(chunk_id))
    return value


def _check_meta(meta: Mapping[str, Any], chunk_id: str) -> dict[str, Any]:
    for key in meta:
        if not isinstance(key, str):
            raise ChunkError(
                f"metadata keys must be strings, got {type(key).__name__} {shown(key)}",
                field="meta",
                chunk=repr(chunk_id),
            )
    return dict(meta)
