"""One process at a time builds a given stencil in a shared cache.

GT4Py writes a stencil's generated module and its cache record as plain files; two processes
building the same definition into one cache (parallel test workers, jobs sharing
``STRATOFLOW_CACHE_DIR``) can load each other's half-written files. :func:`build_lock` holds an
exclusive ``flock`` on ``<cache>/locks/<name>.lock`` around a build: the second process waits,
then finds the first one's build in the cache and loads it.
"""

from __future__ import annotations

import fcntl
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


@contextmanager
def build_lock(cache_dir: Path, name: str) -> Iterator[None]:
    """Hold the exclusive build lock of stencil ``name`` in ``cache_dir`` for the block."""
    locks = cache_dir / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    fd = os.open(locks / f"{_UNSAFE.sub('_', name)}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock
