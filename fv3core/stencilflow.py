"""FV3's routines as StencilFlow programs: ``fv3:ROUTINE[:N]`` specs of ``stratoflow map``.

Each builder constructs the fv3core class of the routine on one rank of a C``N`` cube (tile 0,
layout 1x1, so the rank touches all four tile corners) with GT4Py's numpy backend, binds it to
seeded inputs and runs its launch sequence through a
:class:`mapping.spatial.recorded.LaunchRecorder`: every stencil launch (GTIR with the
externals the class built it with, origin, domain, fields) and every corner fill is recorded
while it runs, and the recording is bridged into one StencilFlow program whose outputs GT4Py's
run produced (kept for the bitwise comparison). Importing this module registers the family.

Routines: ``fv_tp_2d`` (FV3 ``fv_tp_2d``, hord 8, :class:`FiniteVolumeTransport`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np

from fv3core.constants import UFS
from fv3core.grid.metric_terms import CubedSphere
from fv3core.grid.storages import GridStorages
from fv3core.grid.subdomain import SubdomainSpec
from mapping.spatial.recorded import LaunchRecorder, RecordedProgram, register_family

log = logging.getLogger(__name__)

#: vertical levels of the recorded programs (the routines are columns-independent here)
LEVELS = 2
DEFAULT_RESOLUTION = 12


def _setup(n: int) -> tuple[SubdomainSpec, GridStorages, Any]:
    from stencils.factory import StencilFactory

    spec = SubdomainSpec(n, 0, 0, n, 0, n)
    cube = CubedSphere.build(n, radius=UFS.radius, omega=UFS.omega)
    return spec, GridStorages(cube.metric_terms(spec), "numpy"), StencilFactory("numpy")


def _run_steps(rec: LaunchRecorder, steps: Any) -> None:
    """Record and run a bound sequence: stencil launches and FV3 corner fills."""
    from fv3core.stencils.fv_tp_2d import FlatCopy
    from stencils.launch import BoundStencil

    for step in steps:
        if isinstance(step, BoundStencil):
            rec.launch(step)
        elif isinstance(step, FlatCopy) and step.corners is not None:
            di, dj, si, sj = step.corners.indices(step.field.shape)
            rec.gather("corners", step.field, zip(di.tolist(), dj.tolist()), zip(si.tolist(), sj.tolist()), step)
        else:
            raise TypeError(f"cannot record step {step!r}: neither a stencil launch nor a corner fill")


def fv_tp_2d(n: int, hord: int = 8) -> RecordedProgram:
    """FV3 ``fv_tp_2d`` (hord ``hord``) of a cell scalar on one rank at C``n``: fluxes ``fx``,
    ``fy`` and q with its corner halos filled; Courant numbers in (-0.8, 0.8), swept areas
    their product with the face lengths (FV3's ``xfx = crx * dxa * dy``, upwind ``dxa``)."""
    from fv3core.stencils.fv_tp_2d import FiniteVolumeTransport
    from stencils.dims import GridIndexing
    from stencils.storage import from_numpy

    spec, grid, factory = _setup(n)
    h = spec.n_halo
    transport = FiniteVolumeTransport(factory.on_grid(GridIndexing(n, n, LEVELS, h)), grid, spec, hord)
    rng = np.random.default_rng(n)
    cells, xs, ys = (n + 2 * h, n + 2 * h, LEVELS), (n + 2 * h + 1, n + 2 * h, LEVELS), (n + 2 * h, n + 2 * h + 1, LEVELS)
    dxa, dya = np.asarray(grid.dxa), np.asarray(grid.dya)
    dx, dy = np.asarray(grid.dx), np.asarray(grid.dy)
    crx = rng.uniform(-0.8, 0.8, xs)
    cry = rng.uniform(-0.8, 0.8, ys)
    up_x = np.where(crx > 0, np.roll(dxa, 1, axis=0)[: xs[0], : xs[1], None], dxa[: xs[0], : xs[1], None])
    up_y = np.where(cry > 0, np.roll(dya, 1, axis=1)[: ys[0], : ys[1], None], dya[: ys[0], : ys[1], None])
    values = {
        "q": 1.0e5 * (1.0 + 0.1 * rng.standard_normal(cells)),
        "crx": crx, "cry": cry,
        "xfx": crx * up_x * dy[: xs[0], : xs[1], None],
        "yfx": cry * up_y * dx[: ys[0], : ys[1], None],
    }  # fmt: skip
    store = {k: from_numpy(v.copy(), "numpy") for k, v in values.items()}
    store["fx"], store["fy"] = from_numpy(np.zeros(xs), "numpy"), from_numpy(np.zeros(ys), "numpy")
    names = {**store, "area": grid.area, "dxa": grid.dxa, "dya": grid.dya}
    inputs = {**values, "area": np.asarray(grid.area), "dxa": dxa, "dya": dya}
    rec = LaunchRecorder(factory, names)
    bound = transport.bind(store["q"], store["crx"], store["cry"], store["xfx"], store["yfx"],
                           store["fx"], store["fy"])  # fmt: skip
    _run_steps(rec, bound.steps)
    return rec.program(f"fv3_fv_tp_2d_c{n}", inputs, ["fx", "fy", "q"])


ROUTINES: dict[str, Callable[[int], RecordedProgram]] = {"fv_tp_2d": fv_tp_2d}


def build(routine: str, n: int | None) -> RecordedProgram:
    """The program of ``fv3:ROUTINE[:N]`` (N: the cube's resolution, default C12)."""
    n = DEFAULT_RESOLUTION if n is None else n
    if n % 2 or n < 6:
        from mapping.spatial.errors import StencilFlowError

        raise StencilFlowError(f"fv3:{routine}:{n}: the resolution must be even and at least 6 (FV3's grid)")
    log.info("recording fv3:%s on one rank of C%d", routine, n)
    return ROUTINES[routine](n)


register_family("fv3", build, lambda: list(ROUTINES))
