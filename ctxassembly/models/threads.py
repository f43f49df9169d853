"""The one control of torch's CPU thread count (the embedder's small passes, the local reader).

torch's intra-op thread count is process-wide; :func:`torch_threads` lowers it for a block
and restores it after, under a lock, so two blocks never restore each other's value.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["torch_threads"]

# Re-entrant: a block that lowers the count further inside another block (same thread)
# must not wait for itself.
_THREADS_LOCK = threading.RLock()


@contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Run the block with at most ``n`` torch intra-op threads, then restore the setting.

    ``None``, or a setting already at or below ``n``, changes nothing. torch's thread count
    is process-wide: a lock keeps two blocks from restoring each other's value, and other
    torch work running meanwhile in the process also gets ``n`` threads.
    """
    if n is None:
        yield
        return
    import torch

    if torch.get_num_threads() <= n:
        yield
        return
    with _THREADS_LOCK:
        old = torch.get_num_threads()
        torch.set_num_threads(n)
        try:
            yield
        finally:
            torch.set_num_threads(old)
