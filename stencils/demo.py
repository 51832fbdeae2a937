"""The stencil library demo: compile, run and verify every library stencil, and tabulate it."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from stencils.factory import StencilFactory
from stencils.library import LIBRARY
from stencils.storage import Domain, from_numpy, to_numpy

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DemoResult:
    stencil: str
    backend: str
    build_s: float
    run_ms: float
    max_abs_error: float
    tolerance: float

    @property
    def ok(self) -> bool:
        return self.max_abs_error <= self.tolerance


def run_demo(
    backends: Iterable[str] = ("numpy",),
    shape: tuple[int, int, int] = (32, 32, 16),
    stencils: Iterable[str] | None = None,
    tolerance: float = 1e-11,
) -> list[DemoResult]:
    """Build each library stencil on each backend, run it once and compare with its reference."""
    from tqdm import tqdm

    names = list(stencils or LIBRARY)
    unknown = [n for n in names if n not in LIBRARY]
    if unknown:
        from stencils.errors import StencilError

        raise StencilError(f"unknown library stencils {unknown}; choose from {list(LIBRARY)}")
    jobs = [(b, n) for b in backends for n in names]
    results = []
    for backend, name in tqdm(jobs, desc="stencil demo", unit="stencil", disable=None):
        lib = LIBRARY[name]
        factory = StencilFactory(backend)
        dom = Domain(*shape, halo=lib.halo)
        arrays = lib.allocate(dom, seed=0)
        t0 = time.perf_counter()
        stencil = lib.build(factory)
        build = time.perf_counter() - t0
        fields = {k: from_numpy(v, backend, dom.origin) for k, v in arrays.items()}
        t0 = time.perf_counter()
        stencil(origin=dom.origin, domain=dom.domain, **fields, **lib.params)
        run_ms = 1e3 * (time.perf_counter() - t0)
        expected = lib.reference(halo=dom.halo, **arrays, **lib.params)
        err = max(
            float(np.abs(to_numpy(fields[o])[lib.interior(dom)] - expected[o]).max())
            for o in lib.outputs
        )
        results.append(DemoResult(name, backend, build, run_ms, err, tolerance))
        log.debug("%s on %s: error %.2e", name, backend, err)
    return results


def format_table(results: list[DemoResult]) -> str:
    header = f"{'stencil':<14} {'backend':<16} {'build s':>8} {'run ms':>8} {'max |err|':>10}  ok"
    lines = [header, "-" * len(header)]
    for r in results:
        lines.append(
            f"{r.stencil:<14} {r.backend:<16} {r.build_s:8.2f} {r.run_ms:8.2f} "
            f"{r.max_abs_error:10.1e}  {'yes' if r.ok else 'NO'}"
        )
    return "\n".join(lines)
