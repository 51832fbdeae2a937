"""The code a step runs, as part of its identity: source digests, library versions, step keys.

A kind names the stratoflow packages its command imports (``Kind.packages``) and the libraries
its results depend on (``Kind.libraries``). Its *code key* holds the stratoflow version, the
Python version, a SHA-256 over the files of each of those packages as they would be imported
now (a git checkout's working tree with its uncommitted changes, or the installed copy), and
the installed version of each library. The step hash includes the code key, so a change to
any of these reruns the step; a commit that touches none of them keeps its results valid. The
checkout's git commit is recorded per run (:func:`workflows.provenance.git_commit`), not
hashed.

A :class:`StepKey` is the step hash with its parts (parameters and input files, the hashes of
the steps read from, the code key), kept in the run database so that ``stratoflow runs show``
can say why a step ran again (:func:`rerun_reason`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import platform
import threading
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

# Files of a package folder that are not its sources.
_SKIP_DIRS = {"__pycache__"}
_SKIP_SUFFIXES = (".pyc", ".pyo")


class CodeIdentity:
    """Source digests and library versions of this process's environment.

    Each package's files are read and hashed once per instance (a few milliseconds for all of
    stratoflow); :meth:`clear` forgets them, e.g. after the sources change in a long-lived
    process. The registry of kinds owns one instance, :data:`CODE`.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sources: dict[str, str] = {}
        self._versions: dict[str, str] = {}

    def clear(self) -> None:
        with self._lock:
            self._sources.clear()
            self._versions.clear()

    def source_digest(self, package: str) -> str:
        """SHA-256 over the relative paths and contents of the files of ``package`` (every
        file of its folder except bytecode caches and hidden files), where ``import package``
        finds it now; ``"not installed"`` when it is not importable."""
        with self._lock:
            if package not in self._sources:
                self._sources[package] = _hash_package(package)
            return self._sources[package]

    def version(self, distribution: str) -> str:
        """The installed version of ``distribution``, or ``"not installed"``."""
        with self._lock:
            if distribution not in self._versions:
                try:
                    self._versions[distribution] = metadata.version(distribution)
                except metadata.PackageNotFoundError:
                    self._versions[distribution] = "not installed"
            return self._versions[distribution]

    def key(self, packages: tuple[str, ...], libraries: tuple[str, ...]) -> dict[str, Any]:
        """The code key of a command that imports ``packages`` and uses ``libraries``."""
        return {
            "stratoflow": self.version("stratoflow"),
            "python": platform.python_version(),
            "sources": {p: self.source_digest(p) for p in sorted(packages)},
            "libraries": {d: self.version(d) for d in sorted(libraries)},
        }


def _package_dir(package: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(spec.origin) if spec.origin else None


def _hash_package(package: str) -> str:
    root = _package_dir(package)
    if root is None:
        return "not installed"
    files = [root] if root.is_file() else []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        files += [Path(folder, n) for n in sorted(names)
                  if not n.startswith(".") and not n.endswith(_SKIP_SUFFIXES)]  # fmt: skip
    digest = hashlib.sha256()
    for path in files:
        rel = path.name if path == root else path.relative_to(root).as_posix()
        digest.update(rel.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


CODE = CodeIdentity()


def _digest(payload: Any) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class StepKey:
    """A step's identity: what it computes from (``inputs``: kind, adapter version,
    parameters, input-file contents, kind context), the step keys of the steps it reads
    (``deps``) and the code that runs it (``code``, see :meth:`CodeIdentity.key`)."""

    inputs: dict[str, Any]
    deps: tuple[str, ...] = ()
    code: dict[str, Any] = field(default_factory=dict)

    @property
    def inputs_hash(self) -> str:
        return _digest(self.inputs)

    @property
    def digest(self) -> str:
        """The step hash: equal digests mean the same result."""
        return _digest(self.inputs | {"deps": sorted(self.deps), "code": self.code})

    def to_json(self) -> str:
        """The parts, as recorded in the run database."""
        return json.dumps({"inputs_hash": self.inputs_hash, "deps": sorted(self.deps),
                           "code": self.code}, sort_keys=True)  # fmt: skip


def code_changes(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What differs between two code keys, e.g. ``["ens10 sources", "numpy 1.26.4 -> 2.0.0"]``."""
    changes = []
    for part in ("stratoflow", "python"):
        if before.get(part) != after.get(part):
            changes.append(f"{part} {before.get(part, '-')} -> {after.get(part, '-')}")
    old, new = before.get("sources", {}), after.get("sources", {})
    changes += [f"{p} sources" for p in sorted(old.keys() | new.keys()) if old.get(p) != new.get(p)]
    old, new = before.get("libraries", {}), after.get("libraries", {})
    changes += [f"{d} {old.get(d, '-')} -> {new.get(d, '-')}"
                for d in sorted(old.keys() | new.keys()) if old.get(d) != new.get(d)]  # fmt: skip
    return changes


def rerun_reason(key: StepKey, earlier: dict[str, Any] | None) -> str:
    """Why a step with ``key`` runs, given the earlier finished result of the same step
    (``earlier``: a steps row of the run database with ``run_id``, ``step_id`` and
    ``step_key``; None when there is none)."""
    if earlier is None or not earlier.get("step_key"):
        return "no earlier result"
    try:
        parts = json.loads(earlier["step_key"])
    except ValueError:
        return "no earlier result with a readable key"
    where = f"run {earlier['run_id']} step {earlier['step_id']}"
    if parts.get("inputs_hash") != key.inputs_hash:
        return f"parameters or input files changed since {where}"
    changes = code_changes(parts.get("code", {}), key.code)
    if changes:
        return f"code changed since {where}: {', '.join(changes)}"
    if sorted(parts.get("deps", [])) != sorted(key.deps):
        return f"a step it reads from changed since {where}"
    return f"the result of {where} is no longer usable"
