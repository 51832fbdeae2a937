"""Shared benchmark machinery: STREAM triad, robust timing, machine info, atomic outputs.

Every benchmark measures the STREAM triad in the same run and reports its results as
fractions of it (and as ratios against a baseline), never as bare times.
"""

from __future__ import annotations

import json
import logging
import math
import os
import platform
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stencils.atomic import atomic_update_block, atomic_write_text
from stencils.errors import InputFileError
from stencils.textfile import read_json

log = logging.getLogger(__name__)

CSRC = Path(__file__).parent / "csrc"
DOCS_BENCH = Path(__file__).resolve().parent.parent / "docs" / "benchmarks"


class BenchmarkError(RuntimeError):
    """A benchmark could not be run (missing compiler, failed build, bad argument)."""


@dataclass(frozen=True)
class StreamResult:
    triad_gbs: float
    threads: int
    elements: int


#: the STREAM triad's array length: 2**26 doubles, three arrays of 512 MiB, each 16 times this
#: machine's 32 MiB L3 (STREAM's rule: 4 times the caches); ``$STRATOFLOW_STREAM_ELEMENTS``
#: replaces it (the test suite's 2**22, whose runs need the code path, not the machine's limit)
STREAM_ELEMENTS = 1 << 26


def stream_triad(elements: int | None = None, repeats: int = 10, threads: int | None = None) -> StreamResult:
    """Compile and run the C STREAM triad (gcc -O3 -fopenmp, all cores); best of ``repeats``;
    ``elements`` per array (default :data:`STREAM_ELEMENTS` or ``$STRATOFLOW_STREAM_ELEMENTS``)."""
    if elements is None:
        given = os.environ.get("STRATOFLOW_STREAM_ELEMENTS", "")
        elements = int(given) if given.isdigit() and int(given) > 0 else STREAM_ELEMENTS
    out = run_c_program(CSRC / "stream_triad.c", [str(elements), str(repeats)], threads)
    result = StreamResult(triad_gbs=float(out[0]), threads=int(out[1]), elements=elements)
    log.info("STREAM triad: %.1f GB/s on %d threads", result.triad_gbs, result.threads)
    return result


@dataclass(frozen=True)
class Timing:
    median_s: float
    min_s: float
    max_s: float
    repeats: int
    #: consecutive calls each sample is the mean of
    calls_per_sample: int = 1

    @property
    def median_ms(self) -> float:
        return 1e3 * self.median_s

    @property
    def spread(self) -> float:
        """Relative noise: (max - min) / median."""
        return (self.max_s - self.min_s) / self.median_s if self.median_s else 0.0


def time_call(
    fn: Callable[[], Any],
    repeats: int = 10,
    warmup: int = 2,
    sync: Callable[[], Any] | None = None,
) -> Timing:
    """Median of ``repeats`` warm calls of ``fn`` (after ``warmup`` untimed calls)."""
    for _ in range(warmup):
        fn()
    if sync:
        sync()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        if sync:
            sync()
        samples.append(time.perf_counter() - t0)
    return Timing(statistics.median(samples), min(samples), max(samples), repeats)


_GOMP: Any = None


def set_openmp_threads(n: int) -> None:
    """``omp_set_num_threads(n)`` in this process's OpenMP runtime (GCC's libgomp, which the
    compiled GT4Py/DaCe stencils use): later parallel regions started from this thread use
    ``n`` threads."""
    global _GOMP
    if _GOMP is None:
        import ctypes

        try:
            _GOMP = ctypes.CDLL("libgomp.so.1")
        except OSError as exc:
            raise BenchmarkError(f"cannot load libgomp.so.1 to set OpenMP threads: {exc}") from exc
    _GOMP.omp_set_num_threads(int(n))


def time_interleaved(
    fns: dict[str, Callable[[], Any]],
    repeats: int = 10,
    warmup: int = 1,
    min_round_seconds: float = 0.0,
) -> dict[str, Timing]:
    """Median of ``repeats`` warm calls of each of ``fns``, called in interleaved rounds (each
    round calls every function, starting with a different one each round), so that drift of a
    shared machine's speed affects all of them alike and their ratios stay fair.

    With ``min_round_seconds`` a function's turn in a round is that many consecutive calls that
    take at least ``min_round_seconds`` together (sized by one call after the warm-up), and a sample
    is their mean: the steady state of a run that calls the same function over and over,
    rather than one call right after the other functions have filled the caches with their
    data.  ``Timing.calls_per_sample`` says how many calls each sample averages."""
    names = list(fns)
    for _ in range(warmup):
        for name in names:
            fns[name]()
    batch = dict.fromkeys(names, 1)
    if min_round_seconds > 0:  # one more call each, after the warm-up, sizes the turns
        for name in names:
            t0 = time.perf_counter()
            fns[name]()
            seconds = max(time.perf_counter() - t0, 1e-9)
            batch[name] = max(1, math.ceil(min_round_seconds / seconds))
    samples: dict[str, list[float]] = {name: [] for name in names}
    for r in range(repeats):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            fn, calls = fns[name], batch[name]
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            samples[name].append((time.perf_counter() - t0) / calls)
    return {
        name: Timing(statistics.median(s), min(s), max(s), repeats, batch[name])
        for name, s in samples.items()
    }


def machine_info() -> dict[str, Any]:
    return {
        "host": platform.node(),
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "load_avg_1min": os.getloadavg()[0],
        "l3_cache_bytes": _l3_cache_bytes(),
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def _l3_cache_bytes() -> int | None:
    """Size of the last-level cache (sysfs), to judge whether a working set fits in cache."""
    best = None
    for index in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            level = int((index / "level").read_text())
            size = (index / "size").read_text().strip()
        except (OSError, ValueError):
            continue
        factor = {"K": 1024, "M": 1024**2, "G": 1024**3}.get(size[-1], 1)
        value = int(size.rstrip("KMG")) * factor
        if best is None or level >= best[0]:
            best = (level, value)
    return best[1] if best else None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def git_revision() -> str:
    """``git describe --always --dirty`` of this checkout ("unknown" outside git)."""
    root = Path(__file__).resolve().parent.parent
    try:
        out = subprocess.run(["git", "-C", str(root), "describe", "--always", "--dirty"],
                             capture_output=True, text=True, check=True)  # fmt: skip
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def write_json(path: Path | str, payload: dict[str, Any]) -> Path:
    return atomic_write_text(path, json.dumps(payload, indent=2, sort_keys=False) + "\n")


def load_payload(path: Path, option: str = "--json") -> dict[str, Any]:
    """A benchmark's saved JSON (for ``--render-only``), read through :mod:`stencils.textfile`;
    a missing, unreadable, non-JSON or foreign file is a BenchmarkError naming it."""
    expected = "a benchmark result written by 'stratoflow bench NAME --json FILE'"
    try:
        payload = read_json(path, expected, what=f"{option} file")
    except InputFileError as exc:
        raise BenchmarkError(f"{exc}; run the benchmark without --render-only first") from None
    if not isinstance(payload, dict) or "benchmark" not in payload:
        raise BenchmarkError(
            f"{option} file {path} is not a benchmark result (no 'benchmark' key); expected "
            f"{expected}: run the benchmark without --render-only first"
        )
    return payload


def measured_or_loaded(args: Any, measure: Callable[[Any], dict[str, Any]]) -> dict[str, Any]:
    """The payload of a benchmark with ``--json`` and ``--render-only``: read from ``args.json``
    when rendering only, else ``measure(args)``, written to ``args.json`` first."""
    if args.render_only:
        return load_payload(Path(args.json))
    payload = measure(args)
    write_json(args.json, payload)
    return payload


def write_markdown(path: Path, text: str) -> Path:
    """Write a benchmark's generated Markdown as the ``benchmark`` block of ``path``
    (between ``<!-- benchmark:start -->`` and ``<!-- benchmark:end -->``): the hand-written
    text around it (how to run, methods, caveats) stays."""
    return atomic_update_block(path, "benchmark", text)


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def fmt(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.3g}" if abs(v) < 1e4 else f"{v:.4g}"
        return str(v)

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


#: flags of the C kernels built by compile_c (the same as the STREAM triad's)
C_FLAGS: tuple[str, ...] = ("-O3", "-march=native", "-fopenmp")


def run_c_program(source: Path, args: Sequence[str], threads: int | None = None) -> list[str]:
    """Compile ``source`` (:func:`compile_c`) in a temporary folder, run it with ``args`` on
    ``threads`` OpenMP threads (default: all cores) and return the words it printed;
    BenchmarkError if it fails."""
    build = Path(tempfile.mkdtemp(prefix=f"stratoflow-{source.stem}-"))
    try:
        exe = compile_c(source, build / source.stem)
        env = {**os.environ, "OMP_NUM_THREADS": str(threads or os.cpu_count() or 1)}
        proc = subprocess.run([str(exe), *args], capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            raise BenchmarkError(f"{source.name} failed (exit {proc.returncode}):\n{proc.stderr}")
        return proc.stdout.split()
    finally:
        shutil.rmtree(build, ignore_errors=True)


def compile_c(
    source: Path, output: Path, *, shared: bool = False, extra_flags: Sequence[str] = ()
) -> Path:
    """Compile ``source`` with ``$CC`` (default gcc) and :data:`C_FLAGS` into ``output`` (an
    executable, or a shared library with ``shared``); BenchmarkError if there is no compiler or
    the build fails."""
    cc = shutil.which(os.environ.get("CC", "gcc"))
    if cc is None:
        raise BenchmarkError(f"no C compiler found to build {source.name}: install gcc or set CC")
    cmd = [cc, *C_FLAGS, *extra_flags, *(["-shared", "-fPIC"] if shared else []),
           str(source), "-o", str(output)]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BenchmarkError(f"building {source.name} failed ({' '.join(cmd)}):\n{proc.stderr}")
    return output


def shown_path(path: Path | str) -> str:
    """``path`` relative to the checkout when it lies beside or inside it (as the docs name
    files: ``../shared/fv3-reference/...``, ``docs/benchmarks/...``), else as given."""
    root = Path(__file__).resolve().parent.parent
    resolved = Path(path).resolve()
    if resolved.is_relative_to(root.parent):
        return os.path.relpath(resolved, root)
    return str(path)
