"""GT4Py configuration in one place: backends, cache location, compiler flags, switches.

Everything that changes how stencils are built is read here, once, from a
:class:`StencilConfig` (explicit) or from the environment (``StencilConfig.from_env``):

``STRATOFLOW_BACKEND``     default backend (``numpy`` if unset)
``STRATOFLOW_CACHE_DIR``   where compiled stencils live (default ``./.stratoflow_cache``)
``STRATOFLOW_REBUILD``     ``1`` forces rebuilding stencils
``STRATOFLOW_VALIDATE``    ``0`` turns off GT4Py's per-call argument validation
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from stencils.errors import StencilError

# The dace backends of gt4py 1.1.12 need C++20 with dace 2.x ('bit_cast' is not a member of 'std').
# -g0 overrides the -g of Python's CFLAGS: no debug information, the same code, half the compile
# time and memory (a remapping stencil on gt:cpu_ifirst: 39 -> 22 s, cc1plus 1371 -> 798 MiB).
# gt4py reads this variable when it is first imported, so set it before anything imports gt4py.
for _flag in ("-std=c++20", "-g0"):
    if _flag not in os.environ.get("GT4PY_EXTRA_COMPILE_ARGS", "").split():
        os.environ["GT4PY_EXTRA_COMPILE_ARGS"] = (
            os.environ.get("GT4PY_EXTRA_COMPILE_ARGS", "") + " " + _flag
        ).strip()

# gt4py points DACE_CONFIG at ./.dace.conf on import; keep it in the stencil cache instead.
os.environ.setdefault(
    "DACE_CONFIG",
    str(Path(os.environ.get("STRATOFLOW_CACHE_DIR") or ".stratoflow_cache").resolve() / "dace.conf"),
)

#: Backends that work on this kind of machine (CPU), fastest to build first.
CPU_BACKENDS: tuple[str, ...] = (
    "numpy",
    "debug",
    "gt:cpu_ifirst",
    "gt:cpu_kfirst",
    "dace:cpu",
    "dace:cpu_kfirst",
    "dace:cpu_KJI",
)
#: Backends that compile C++ (15-20 s per stencil on 2 cores).
COMPILED_BACKENDS: tuple[str, ...] = tuple(b for b in CPU_BACKENDS if ":" in b)
#: Backends that need an NVIDIA GPU (and cupy).
GPU_BACKENDS: tuple[str, ...] = ("gt:gpu", "dace:gpu", "cuda")
ALL_BACKENDS: tuple[str, ...] = CPU_BACKENDS + GPU_BACKENDS

DEFAULT_BACKEND = "numpy"


def env_flag(name: str, default: bool) -> bool:
    """A boolean environment switch: unset or empty gives ``default``; 0/false/no/off are false."""
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() not in ("0", "false", "no", "off")


def default_backend() -> str:
    """The backend named by ``STRATOFLOW_BACKEND``, or ``numpy``."""
    return check_backend(os.environ.get("STRATOFLOW_BACKEND", DEFAULT_BACKEND) or DEFAULT_BACKEND)


def default_cache_dir() -> Path:
    return Path(os.environ.get("STRATOFLOW_CACHE_DIR") or ".stratoflow_cache").resolve()


def ensure_writable_dir(path: Path, what: str, variable: str) -> Path:
    """Create ``path`` if needed and check that files can be made in it (a probe file, which
    also catches read-only mounts and immutable folders); else StencilError naming ``what``,
    the path and the environment ``variable`` that chooses another folder."""
    hint = f"set {variable} to a writable folder"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise StencilError(f"{what} {path} is a file, not a folder; {hint}") from None
    except OSError as exc:
        raise StencilError(
            f"{what} {path} cannot be created ({exc.strerror or exc}); {hint}"
        ) from None
    try:
        fd, probe = tempfile.mkstemp(prefix=".write-probe-", dir=path)
    except OSError as exc:
        raise StencilError(f"{what} {path} is not writable ({exc.strerror or exc}); {hint}") from None
    os.close(fd)
    os.unlink(probe)
    return path


def check_compiler_env() -> None:
    """StencilError if ``$CXX`` names a compiler that is not on PATH (GT4Py runs it when it is
    imported, whatever the backend)."""
    cxx = os.environ.get("CXX")
    if cxx and shutil.which(cxx.split()[0]) is None:
        raise StencilError(
            f"CXX={cxx!r}: no such compiler on PATH; GT4Py runs it on import. Set CXX to an "
            "installed C++ compiler (e.g. g++) or unset it"
        )


def check_backend(backend: str) -> str:
    """Return ``backend`` if it is known and usable here, else raise a clear StencilError."""
    if backend not in ALL_BACKENDS:
        raise StencilError(
            f"unknown GT4Py backend {backend!r}; use one of: {', '.join(ALL_BACKENDS)} "
            "(set STRATOFLOW_BACKEND or pass backend=...)"
        )
    if backend.startswith("dace"):
        from stencils.dace_guard import dace_refused

        refused = dace_refused()
        if refused is not None:
            raise StencilError(
                f"backend {backend!r} needs dace, which this process keeps out ({refused}); "
                "build dace stencils in a process that does not call "
                "stencils.dace_guard.keep_dace_out, or use one of: "
                + ", ".join(b for b in CPU_BACKENDS if not b.startswith("dace"))
            )
    if backend in COMPILED_BACKENDS or backend in GPU_BACKENDS:
        cxx = os.environ.get("CXX", "g++")
        if shutil.which(cxx) is None:
            raise StencilError(
                f"backend {backend!r} compiles C++ but no compiler {cxx!r} was found on PATH; "
                "install g++ (Debian: apt-get install g++) or use backend='numpy'"
            )
    if backend in GPU_BACKENDS:
        try:
            import cupy  # noqa: F401
        except ImportError as exc:
            raise StencilError(
                f"backend {backend!r} needs an NVIDIA GPU and cupy (pip install cupy-cuda12x); "
                f"use one of the CPU backends: {', '.join(CPU_BACKENDS)}"
            ) from exc
    return backend


@dataclass(frozen=True)
class StencilConfig:
    """How stencils are built: backend, cache directory and build/validation switches."""

    backend: str = DEFAULT_BACKEND
    cache_dir: Path = field(default_factory=default_cache_dir)
    rebuild: bool = False
    validate_args: bool = True

    def __post_init__(self) -> None:
        check_backend(self.backend)
        object.__setattr__(self, "cache_dir", Path(self.cache_dir).resolve())

    @classmethod
    def from_env(cls, **overrides: object) -> StencilConfig:
        cfg = cls(
            backend=default_backend(),
            cache_dir=default_cache_dir(),
            rebuild=env_flag("STRATOFLOW_REBUILD", False),
            validate_args=env_flag("STRATOFLOW_VALIDATE", True),
        )
        return replace(cfg, **overrides) if overrides else cfg

    def with_backend(self, backend: str) -> StencilConfig:
        return replace(self, backend=backend)

    def apply(self) -> None:
        """Point GT4Py's and DaCe's caches at ``cache_dir`` (idempotent); StencilError if the
        folder cannot be written."""
        ensure_writable_dir(self.cache_dir, "the stencil cache", "STRATOFLOW_CACHE_DIR")
        from stencils.gt4py_internals import configure_builds

        configure_builds(self.cache_dir, "gt4py")
        if self.backend.startswith("dace"):
            import dace

            dace.config.Config.set(
                "default_build_folder", value=str(self.cache_dir / "dacecache")
            )
