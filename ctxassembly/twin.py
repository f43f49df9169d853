"""Building frozen slotted records for less: the plain twin class of one slot layout."""

from __future__ import annotations

__all__ = ["unfrozen_twin"]


def unfrozen_twin(cls: type) -> type:
    """A plain class with the slots of the frozen slotted dataclass ``cls``, in their order:
    an object under construction is made as the twin, each field set with a plain
    attribute store (no frozen ``__setattr__``), and then its ``__class__`` is set to
    ``cls``, which it already is in memory (``__class__`` may be assigned between classes
    of one slot layout). A store costs a twelfth of a call to a slot's ``__set__``; the
    records built a thousand times a call (chunks, ledger facts, version verdicts) are
    made this way, each builder tested to set every field as the constructor does."""
    slots = cls.__dict__["__slots__"]  # a slotted dataclass's own field names, in order
    return type(f"_Unfrozen{cls.__name__}", (), {"__slots__": slots, "__module__": cls.__module__})
