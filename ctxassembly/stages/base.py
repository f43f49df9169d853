"""Moved to :mod:`ctxassembly.pipeline` (issue 16); the lead rewrites these imports at merge."""

from ctxassembly.pipeline import Context, Stage, StageBase

__all__ = ["Context", "Stage", "StageBase"]
