"""Atomic file output for every stratoflow layer: write a temporary name beside the target, then
rename, so a reader never sees a half-written file and an older version survives a crash."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_output(path: str | Path) -> Iterator[Path]:
    """``with atomic_output(path) as tmp:`` -- write ``tmp``, a fresh file beside ``path``
    (world-readable like a normal output, parent folders created); it becomes ``path`` by
    :func:`os.replace` when the block ends without an error and is deleted when it raises."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        tmp.chmod(0o644)
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` through :func:`atomic_output`."""
    with atomic_output(path) as tmp:
        tmp.write_bytes(data)
    return Path(path)


def atomic_write_text(path: str | Path, text: str) -> Path:
    """:func:`atomic_write_bytes` of ``text`` encoded as UTF-8."""
    return atomic_write_bytes(path, text.encode())


def replace_block(text: str, name: str, body: str) -> str:
    """``text`` with the block between ``<!-- name:start -->`` and ``<!-- name:end -->``
    replaced by ``body``; without those markers the block is appended, so nothing already in
    ``text`` is lost (the hand-written parts of a document around a generated table)."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    block = f"{start}\n{body.rstrip()}\n{end}"
    i = text.find(start)
    j = text.find(end, i) if i >= 0 else -1
    if j >= 0:
        return text[:i] + block + text[j + len(end) :]
    return (text.rstrip("\n") + "\n\n" if text.strip() else "") + block + "\n"


def atomic_update_block(path: str | Path, name: str, body: str) -> Path:
    """Rewrite the marked block ``name`` of the text file ``path`` (created if missing) with
    ``body`` (:func:`replace_block`), atomically."""
    from stencils.textfile import read_text

    path = Path(path)
    text = read_text(path, "a UTF-8 Markdown page", what="page") if path.exists() else ""
    return atomic_write_text(path, replace_block(text, name, body))
