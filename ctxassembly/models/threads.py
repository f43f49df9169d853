"""The one control of torch's CPU thread count (the embedder's small passes, the local reader).

torch's intra-op thread count is process-wide; :func:`torch_threads` lowers it for a block
and restores it after, under a lock, so two blocks never restore each other's value.
:func:`free_cores` tells how many of the process's cores no other thread is running on,
so a pass can leave a busy core alone.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["free_cores", "torch_threads"]

# Re-entrant: a block that lowers the count further inside another block (same thread)
# must not wait for itself.
_THREADS_LOCK = threading.RLock()

_LOADAVG = "/proc/loadavg"


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def free_cores(reads: int = 3) -> int | None:
    """How many of this process's cores no other thread is running on right now.

    The kernel's count of runnable threads (the fourth field of ``/proc/loadavg``, the whole
    machine's) less the caller, the least of ``reads`` reads, so a thread that only passes
    through is not counted; the cores the process may run on less that. A BLAS call leaves
    its worker threads spinning for a while after it returns (OpenBLAS's: ~0.1 s), and they
    hold a core as a busy job does. ``None`` where the count cannot be read (not Linux).
    """
    others = None
    try:
        for _ in range(reads):
            with open(_LOADAVG, encoding="ascii") as f:
                running = int(f.read().split()[3].split("/")[0]) - 1
            others = running if others is None else min(others, running)
    except (OSError, ValueError, IndexError):
        return None
    if others is None:
        return None
    return max(0, _cores() - others)


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
