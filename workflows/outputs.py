"""Atomic outputs: temp name + rename, and SHA-256 checksums of output folders."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
from pathlib import Path

from stencils.atomic import atomic_write_bytes, atomic_write_text

__all__ = [
    "atomic_write_bytes", "atomic_write_text", "checksum_tree", "copy_tree_atomic", "publish_dir",
    "sha256_file", "verify_tree",
]

# files a step's folder holds that are bookkeeping, not outputs
BOOKKEEPING = (".taskinfo", "params.json")


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def checksum_tree(folder: Path) -> list[tuple[str, str, int]]:
    """``(relative path, sha256, bytes)`` of every file under ``folder``, sorted."""
    rows = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()):
        rel = path.relative_to(folder).as_posix()
        if rel in BOOKKEEPING:
            continue
        rows.append((rel, sha256_file(path), path.stat().st_size))
    return rows


def verify_tree(folder: Path, rows: list[dict]) -> bool:
    """True if every recorded output still exists under ``folder`` with its checksum."""
    if not folder.is_dir():
        return False
    for row in rows:
        path = folder / row["path"]
        if not path.is_file() or path.stat().st_size != row["bytes"]:
            return False
        if sha256_file(path) != row["sha256"]:
            return False
    return True


def publish_dir(tmp: Path, final: Path) -> None:
    """Move a finished temporary folder to ``final``; an older ``final`` is replaced only
    after the new one is in place, so a crash leaves one complete version."""
    final.parent.mkdir(parents=True, exist_ok=True)
    old = None
    if final.exists():
        old = final.with_name(f".{final.name}.old-{os.getpid()}-{time.time_ns()}")
        os.rename(final, old)
    os.rename(tmp, final)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def copy_tree_atomic(src: Path, final: Path) -> None:
    """Copy a folder to ``final`` through a temporary sibling and a rename."""
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.copy-", dir=final.parent))
    shutil.rmtree(tmp)
    shutil.copytree(src, tmp)
    publish_dir(tmp, final)
