"""Child processes that end with the process that started them.

A child flipcheck starts (a forked explorer worker, a Flink job server's JVM) must not outlive
its parent: killed with SIGKILL, the parent runs no clean-up, and its children would wait on
pipes nobody reads, holding memory. On Linux the kernel can kill a child when its parent dies
(``PR_SET_PDEATHSIG``); elsewhere the children notice the closed pipe instead.

>>> die_with_parent() is None
True
"""

from __future__ import annotations

import ctypes
import signal
import sys

__all__ = ["die_with_parent"]

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Have the kernel send this process SIGKILL when its parent dies (Linux; elsewhere nothing)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass  # no usable libc: the closed pipe still ends the child
