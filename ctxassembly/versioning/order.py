"""The order of versions: PEP 440 where a version parses, a natural key otherwise, and
where the aliases (``dev``, ``stable``, ``latest``) stand among numbered releases."""

from __future__ import annotations

import re
from functools import lru_cache

from packaging.version import InvalidVersion, Version

from ctxassembly.versioning import DEV_ALIASES, RELEASE_ALIASES

__all__ = ["order_key", "version_key"]


@lru_cache(maxsize=4096)
def version_key(version: str) -> tuple[int, tuple[tuple[int, int | str], ...], Version | None]:
    """Sort key: PEP 440 where it parses, a natural (digit-aware) key otherwise."""
    try:
        return (1, (), Version(version))
    except InvalidVersion:
        parts = re.findall(r"\d+|[^\d\W]+", version.casefold())
        # isdecimal, not isdigit: a superscript "²" is a digit that int() refuses
        return (0, tuple((0, int(p)) if p.isdecimal() else (1, p) for p in parts), None)


def order_key(version: str) -> tuple[object, ...]:
    """Order for "latest": unreleased aliases (``dev``, ``main``) first, then versions,
    then release aliases (``stable``, ``latest``), which name the newest release."""
    folded = version.casefold()
    if folded in DEV_ALIASES:
        return (-1, folded)
    if folded in RELEASE_ALIASES:
        return (3, folded)
    tier, natural, pep = version_key(version)
    return (tier, pep) if pep is not None else (tier, natural)
