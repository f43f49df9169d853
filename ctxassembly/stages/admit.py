"""Admit stage: permissions (failing closed) and metadata scope, before anything else.

A chunk reaches the model only if the caller may read it and it belongs to the scope
asked for. With ACL enforcement on, a chunk that carries no ACL, carries a malformed one,
or meets an empty principal set is dropped: missing data never grants access.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

from ctxassembly.chunk import Chunk
from ctxassembly.errors import ConfigError
from ctxassembly.kinds import Reason
from ctxassembly.pipeline import Context, StageBase

__all__ = ["Admit"]

Permit = Callable[[Chunk, frozenset[str]], bool]
ScopeValue = object  # a value (equality), a set/list/tuple (membership) or a predicate


class Admit(StageBase):
    """Drop chunks the caller may not read (``not_permitted``) or that are out of scope.

    :param principals: the caller's user/group ids. ``None`` turns ACL checks off
        unless ``enforce_acl`` is set (then ``None`` counts as "no principals").
    :param acl_field: metadata key holding the principals allowed to read a chunk
        (a string or a collection of strings).
    :param permit: a predicate ``(chunk, principals) -> bool`` used instead of the ACL
        field; an exception inside it denies the chunk and is recorded.
    :param enforce_acl: check permissions. ``None`` (default): on whenever principals are
        given (here or per call) or a permit predicate is set.
    :param scope: ``{metadata key: value | set of values | predicate}``; a chunk lacking
        the key is out of scope (``missing_scope_field``).
    """

    name = "admit"

    def __init__(
        self,
        principals: Iterable[str] | None = None,
        *,
        acl_field: str = "acl",
        permit: Permit | None = None,
        enforce_acl: bool | None = None,
        scope: Mapping[str, ScopeValue] | None = None,
    ) -> None:
        if isinstance(principals, str):
            raise ConfigError(f"principals must be a collection of strings, got the string {principals!r}")
        self.principals = None if principals is None else frozenset(principals)
        self.acl_field = acl_field
        self.permit = permit
        self.enforce_acl = enforce_acl  # None: on whenever principals (here or per call) or permit exist
        if scope is not None and not isinstance(scope, Mapping):
            raise ConfigError(f"scope must be a mapping of metadata key -> value, got {type(scope).__name__}")
        self.scope = dict(scope or {})

    def run(self, chunks: list[Chunk], ctx: Context) -> list[Chunk]:
        principals = ctx.principals if ctx.principals is not None else self.principals
        enforce = self.enforce_acl
        if enforce is None:
            enforce = principals is not None or self.permit is not None
        out = []
        for c in chunks:
            denied = self._denied(c, principals) if enforce else None
            if denied is not None:
                ctx.report.drop(c, self.name, Reason.NOT_PERMITTED, why=denied)
                continue
            miss = self._out_of_scope(c)
            if miss is not None:
                ctx.report.drop(c, self.name, Reason.OUT_OF_SCOPE, **miss)
                continue
            out.append(c)
        return out

    def _denied(self, c: Chunk, principals: frozenset[str] | None) -> str | None:
        if not principals:
            return "no principals given while ACL enforcement is on"
        if self.permit is not None:
            try:
                return None if self.permit(c, principals) is True else "permit predicate said no"
            except Exception as e:  # a broken predicate must deny, never crash or allow
                return f"permit predicate raised {type(e).__name__}: {e}"
        acl = _field(c, self.acl_field)
        if acl is None:
            return f"no ACL data in field {self.acl_field!r}"
        allowed = _as_set(acl)
        if allowed is None:
            return f"malformed ACL in field {self.acl_field!r}: {acl!r}"
        return None if allowed & principals else "no shared principal"

    def _out_of_scope(self, c: Chunk) -> dict[str, Any] | None:
        for key, want in self.scope.items():
            missing = object()
            value = _field(c, key, missing)
            if value is missing or value is None:
                return {"field": key, "why": "missing_scope_field"}
            if callable(want):
                try:
                    ok = bool(want(value))
                except Exception as e:
                    return {"field": key, "why": f"scope predicate raised {type(e).__name__}: {e}"}
            elif isinstance(want, (set, frozenset, list, tuple)):
                ok = value in want
            else:
                ok = value == want
            if not ok:
                return {"field": key, "value": value}
        return None


def _field(c: Chunk, key: str, default: object = None) -> Any:
    if key in c.meta:
        return c.meta[key]
    if key in ("doc_id", "title", "section", "version", "date"):
        value = getattr(c, key)
        return default if value is None else value
    return default


def _as_set(acl: object) -> frozenset[str] | None:
    if isinstance(acl, str):
        return frozenset([acl]) if acl else None
    if (
        isinstance(acl, Collection)
        and not isinstance(acl, (bytes, Mapping))
        and acl
        and all(isinstance(p, str) and p for p in acl)
    ):
        return frozenset(acl)
    return None
