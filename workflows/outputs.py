"""Atomic outputs: temp name + rename, SHA-256 checksums of output folders, output locations
checked before the work, and a rescue copy when the final write fails."""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Collection
from pathlib import Path

from stencils.atomic import atomic_write_bytes, atomic_write_text
from workflows.errors import WorkflowError

__all__ = [
    "atomic_write_bytes", "atomic_write_text", "check_output_path", "checksum_tree",
    "copy_tree_atomic", "publish_dir", "rescue_folders", "sha256_file", "verify_tree",
    "write_or_rescue",
]

log = logging.getLogger(__name__)

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


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


def _failure(exc: BaseException, folder: Path) -> str:
    """What went wrong, saying so when the disk is full and the error does not (netCDF4/HDF5
    report a full disk as a RuntimeError "NetCDF: HDF error")."""
    reason = _reason(exc)
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return reason
    try:
        full = shutil.disk_usage(folder).free < 1 << 20
    except OSError:
        full = False
    return f"{reason}; the disk is full" if full else reason


def check_output_path(
    path: str | Path,
    what: str = "--output",
    *,
    suffixes: Collection[str] | None = None,
    command: str | None = None,
) -> Path:
    """``path`` if a file can be written there, else a :class:`WorkflowError` naming ``what``
    (the option or file role) and the fix: the target is not a directory, its folder exists and
    is writable (probed with a temporary file, removed at once; permission bits alone do not
    tell, e.g. for root or on a read-only mount), and its name ends in one of ``suffixes``
    (case-insensitive) when given. Call it before the work starts."""
    path = Path(path)
    where = f"{command}: {what} {path}" if command else f"{what} {path}"
    if path.is_dir():
        example = path / f"out{sorted(suffixes)[0] if suffixes else ''}"
        raise WorkflowError(f"{where} is a directory; give a file name, e.g. {example}")
    if suffixes is not None and path.suffix.lower() not in {s.lower() for s in suffixes}:
        raise WorkflowError(
            f"{where}: the writer makes {'/'.join(sorted(suffixes))} files; give a name ending in "
            f"{' or '.join(sorted(suffixes))}"
        )
    parent = path.parent
    if not parent.is_dir():
        what_is = "is not a directory" if parent.exists() else "does not exist"
        raise WorkflowError(f"{where}: the folder {parent} {what_is}; create it or give another path")
    try:
        fd, probe = tempfile.mkstemp(prefix=".stratoflow-write-check.", dir=parent)
    except OSError as exc:
        raise WorkflowError(
            f"{where}: the folder {parent} is not writable ({_reason(exc)}); give a path in a "
            "writable folder"
        ) from exc
    os.close(fd)
    os.unlink(probe)
    return path


def rescue_folders() -> list[Path]:
    """Where :func:`write_or_rescue` keeps a result it could not write to its place, in order of
    preference: the current folder, then the system's temporary folder (``$TMPDIR``)."""
    return [Path.cwd(), Path(tempfile.gettempdir())]


def write_or_rescue(
    path: str | Path,
    write: Callable[[Path], object],
    what: str = "--output",
    *,
    command: str | None = None,
) -> Path:
    """``write(path)`` (which must write atomically, so an older file at ``path`` survives a
    failure); when it raises :class:`OSError` (disk full, folder gone or read-only) or the
    RuntimeError of a file library (netCDF4/HDF5 report a full disk so), the result is written
    as ``stratoflow-rescue-<time>-<name>`` in the first of :func:`rescue_folders` that takes
    it, and a :class:`WorkflowError` names the failure and where the result is."""
    path = Path(path)
    try:
        write(path)
        return path
    except WorkflowError:
        raise
    except (OSError, RuntimeError) as exc:
        failure = exc
    where = f"{command}: {what} {path}" if command else f"{what} {path}"
    stamp = time.strftime("%Y%m%d-%H%M%S")
    tried = []
    for folder in rescue_folders():
        rescue = folder / f"stratoflow-rescue-{stamp}-{os.getpid()}-{path.name}"
        tried.append(str(folder))
        try:
            write(rescue)
        except (OSError, RuntimeError) as exc:
            log.warning("cannot keep the result in %s either: %s", rescue, _reason(exc))
            continue
        raise WorkflowError(
            f"{where}: cannot write it ({_failure(failure, path.parent)}); the result is kept in "
            f"{rescue}: move it to {path} once there is room or the folder is writable"
        ) from failure
    raise WorkflowError(
        f"{where}: cannot write it ({_failure(failure, path.parent)}), and no rescue copy could "
        f"be written either (tried {', '.join(tried)}); the result is lost: free space or fix "
        "the folder, then rerun"
    ) from failure
