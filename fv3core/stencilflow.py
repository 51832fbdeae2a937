"""FV3's routines as StencilFlow programs: ``fv3:ROUTINE[:N]`` specs of ``stratoflow map``.

Each builder constructs the fv3core class of the routine on one rank of a C``N`` cube (layout
1x1, so the rank touches all four tile corners; tile 0 for the ``fv3:`` specs, any tile by the
builders' ``tile``) with GT4Py's numpy backend, binds it to
seeded inputs and runs its launch sequence through a
:class:`mapping.spatial.recorded.LaunchRecorder`: every stencil launch (GTIR with the
externals the class built it with, origin, domain, fields) and every corner fill is recorded
while it runs, and the recording is bridged into one StencilFlow program whose outputs GT4Py's
run produced (kept for the bitwise comparison). Importing this module registers the family.

Routines: ``fv_tp_2d`` (FV3 ``fv_tp_2d`` hord 8 with ``deln_flux`` nord 2,
:class:`FiniteVolumeTransport` and :class:`DelnFlux`), ``fv_tp_2d_hord10`` (the same with hord
10), ``geopk`` (FV3's hydrostatic geopotential, :class:`Geopotential`: vertical recurrences).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
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


def _setup(n: int, tile: int) -> tuple[SubdomainSpec, GridStorages, Any]:
    from stencils.factory import StencilFactory

    spec = SubdomainSpec(n, tile, 0, n, 0, n)
    cube = CubedSphere.build(n, radius=UFS.radius, omega=UFS.omega)
    return spec, GridStorages(cube.metric_terms(spec), "numpy"), StencilFactory("numpy")


def _recorder(factory: Any, grid: GridStorages | None, fields: dict[str, Any]) -> LaunchRecorder:
    """A recorder that names the routine's fields and the grid's metric terms by FV3's names."""
    terms = {k: v for k, v in vars(grid).items() if hasattr(v, "shape")} if grid is not None else {}
    return LaunchRecorder(factory, {**terms, **fields})


def _run_steps(rec: LaunchRecorder, steps: Any) -> None:
    """Record and run a bound sequence: stencil launches and FV3's cube-corner fills (steps
    with ``point_copies``: batches of signed point copies, each batch reading the one before)."""
    from fv3core.stencils.d2a2c_vect import _nothing
    from stencils.launch import BoundStencil

    for step in steps:
        if isinstance(step, BoundStencil):
            rec.launch(step)
        elif step is _nothing:  # a corner fill of a rank without cube corners
            continue
        elif hasattr(step, "point_copies"):
            batches = step.point_copies
            if not batches:
                raise TypeError(f"cannot record step {step!r}: a copy that does not say what it copies")
            for k, rows in enumerate(batches):  # the step runs once, after the last batch
                rec.gather("corners", rows, step if k == len(batches) - 1 else _no_op)
        else:
            raise TypeError(f"cannot record step {step!r}: neither a stencil launch nor a corner fill")


def _no_op() -> None:
    """Stands for a batch of a corner fill that runs with its last batch."""


def _storages(values: dict[str, np.ndarray]) -> dict[str, Any]:
    from stencils.storage import from_numpy

    return {k: from_numpy(np.array(v, dtype=np.float64), "numpy") for k, v in values.items()}


def fv_tp_2d(n: int, hord: int = 8, nord: int = 2, damp_c: float = 0.12, *, tile: int = 0) -> RecordedProgram:
    """FV3 ``fv_tp_2d`` with ``deln_flux`` as ``d_sw`` runs it on ``delp`` (hord ``hord``, del-n
    order ``nord``, coefficient ``damping_coefficient(damp_c, da_min, nord)``) on one rank at
    C``n``: fluxes ``fx``, ``fy`` and q with its corner halos filled. Courant numbers in
    (-0.8, 0.8); swept areas their product with the upwind ``dxa`` and the face length
    (FV3's ``xfx = crx * dxa * dy``)."""
    from fv3core.stencils.deln_flux import DelnFlux, damping_coefficient
    from fv3core.stencils.fv_tp_2d import FiniteVolumeTransport
    from stencils.dims import GridIndexing

    spec, grid, factory = _setup(n, tile)
    h = spec.n_halo
    on_grid = factory.on_grid(GridIndexing(n, n, LEVELS, h))
    transport = FiniteVolumeTransport(on_grid, grid, spec, hord)
    damp = damping_coefficient(damp_c, grid.da_min, nord)
    deln = DelnFlux(on_grid, grid, spec, nord, damp, add=True)
    rng = np.random.default_rng(n)
    cells, xs, ys = (n + 2 * h, n + 2 * h, LEVELS), (n + 2 * h + 1, n + 2 * h, LEVELS), (n + 2 * h, n + 2 * h + 1, LEVELS)
    dxa, dya = np.asarray(grid.dxa), np.asarray(grid.dya)
    dx, dy = np.asarray(grid.dx), np.asarray(grid.dy)
    crx = rng.uniform(-0.8, 0.8, xs)
    cry = rng.uniform(-0.8, 0.8, ys)
    up_x = np.where(crx > 0, np.roll(dxa, 1, axis=0)[: xs[0], : xs[1], None], dxa[: xs[0], : xs[1], None])
    up_y = np.where(cry > 0, np.roll(dya, 1, axis=1)[: ys[0], : ys[1], None], dya[: ys[0], : ys[1], None])
    store = _storages({
        "q": 1.0e5 * (1.0 + 0.1 * rng.standard_normal(cells)),
        "crx": crx, "cry": cry,
        "xfx": crx * up_x * dy[: xs[0], : xs[1], None],
        "yfx": cry * up_y * dx[: ys[0], : ys[1], None],
        "fx": np.zeros(xs), "fy": np.zeros(ys),
    })  # fmt: skip
    rec = _recorder(factory, grid, store)
    bound = transport.bind(*(store[k] for k in ("q", "crx", "cry", "xfx", "yfx", "fx", "fy")))
    _run_steps(rec, [*bound.steps, *deln.bind(store["q"], store["fx"], store["fy"])])
    return rec.program(f"fv3_fv_tp_2d_hord{hord}_nord{nord}_c{n}", ["fx", "fy", "q"])


def geopk(n: int, *, tile: int = 0) -> RecordedProgram:
    """FV3 ``geopk`` on the D grid (:class:`Geopotential`, hydrostatic 3-D core: kappa, a model
    top of 300 Pa, ``cp_air``) on one rank at C``n`` with ``LEVELS`` + 4 layers: ``pk``, ``gz``,
    ``pe``, ``peln`` and ``pkz`` from ``delp``, ``pt`` and ``phis``: a FORWARD sweep, a BACKWARD
    sweep, a FORWARD sweep and a PARALLEL layer mean."""
    from fv3core.stencils.geopk import Geopotential
    from stencils.dims import GridIndexing

    nz = LEVELS + 4
    spec, grid, factory = _setup(n, tile)
    h = spec.n_halo
    geo = Geopotential(factory.on_grid(GridIndexing(n, n, nz, h)), cgrid=False, akap=UFS.kappa,
                       ptop=300.0, cp=UFS.cp_air)  # fmt: skip
    rng = np.random.default_rng(n)
    cells, ifaces = (n + 2 * h, n + 2 * h, nz), (n + 2 * h, n + 2 * h, nz + 1)
    store = _storages({
        "delp": 1.0e4 * (1.0 + 0.2 * rng.random(cells)),
        "pt": 300.0 / 1.0e5**UFS.kappa * (1.0 + 0.05 * rng.standard_normal(cells)),
        "phis": 1.0e3 * rng.random(cells[:2]),
        **{k: np.zeros(ifaces) for k in ("pk", "gz", "pe", "peln")}, "pkz": np.zeros(cells),
    })  # fmt: skip
    rec = _recorder(factory, grid, store)
    steps = geo.bind(store["delp"], store["pt"], store["phis"], store["pk"], store["gz"],
                     pressure=(store["pe"], store["peln"], store["pkz"]))  # fmt: skip
    _run_steps(rec, steps)
    return rec.program(f"fv3_geopk_c{n}", ["pk", "gz", "pe", "peln", "pkz"])


def _winds(n: int, h: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Seeded D-grid winds ``u`` (y-faces) and ``v`` (x-faces), m/s, a smooth jet plus noise."""
    x = np.arange(n + 2 * h + 1) / n
    jet = 20.0 * np.cos(np.pi * (x - 0.5))
    u = jet[None, :, None] + rng.standard_normal((n + 2 * h, n + 2 * h + 1, LEVELS))
    v = 0.5 * jet[:, None, None] + rng.standard_normal((n + 2 * h + 1, n + 2 * h, LEVELS))
    return {"u": u, "v": v}


def c_sw(n: int, nord: int = 2, dt2: float = 112.5, *, tile: int = 0) -> RecordedProgram:
    """FV3 ``c_sw`` (:class:`CGridShallowWaterDynamics`, the 3-D core's ``pt`` transport,
    ``d2a2c_vect`` and ``divergence_corner`` included, with their cube-corner fills) on one rank
    at C``n``: ``uc``, ``vc``, ``ua``, ``va``, ``ut``, ``vt``, ``delpc``, ``ptc``, ``divg_d``
    and ``delp``, ``pt`` with their corner fills, from seeded winds, ``delp`` and ``pt``."""
    from fv3core.stencils.c_sw import CGridShallowWaterDynamics
    from stencils.dims import GridIndexing

    spec, grid, factory = _setup(n, tile)
    h = spec.n_halo
    csw = CGridShallowWaterDynamics(factory.on_grid(GridIndexing(n, n, LEVELS, h)), grid, spec, nord, dt2,
                                    sw_dynamics=False)  # fmt: skip
    rng = np.random.default_rng(n)
    cells, xs, ys, corners = ((n + 2 * h + a, n + 2 * h + b, LEVELS) for a, b in ((0, 0), (1, 0), (0, 1), (1, 1)))
    store = _storages({
        "delp": 1.0e3 * (1.0 + 0.1 * rng.random(cells)), "pt": 300.0 + rng.standard_normal(cells),
        **_winds(n, h, rng),
        "uc": np.zeros(xs), "vc": np.zeros(ys), "ua": np.zeros(cells), "va": np.zeros(cells),
        "ut": np.zeros(cells), "vt": np.zeros(cells), "delpc": np.zeros(cells), "ptc": np.zeros(cells),
        "divg_d": np.zeros(corners),
    })  # fmt: skip
    rec = _recorder(factory, grid, store)
    args = ("delp", "pt", "u", "v", "uc", "vc", "ua", "va", "ut", "vt", "delpc", "ptc", "divg_d")
    _run_steps(rec, csw.bind(*(store[k] for k in args)))
    return rec.program(f"fv3_c_sw_c{n}", ["uc", "vc", "ua", "va", "ut", "vt", "delpc", "ptc", "divg_d", "delp", "pt"])


def d_sw(n: int, hord: int = 8, nord: int = 2, dt: float = 225.0, *, tile: int = 0) -> RecordedProgram:
    """FV3 ``d_sw`` (:class:`DGridShallowWaterLagrangianDynamics`, ``SW_DYNAMICS``) with FV3's
    divergence damping (``nord``, ``dddmp`` 0.2, ``d4_bg`` 0.12) and vorticity damping
    (``nord_v`` 2, ``vtdm4`` 0.12: ``deln_flux`` of ``delp``, ``del6_vt_flux``), every hord
    ``hord``, on one rank at C``n``: ``delp``, ``u``, ``v`` and the work arrays it leaves
    (``uc``, ``vc``, ``divg_d``) from seeded winds and ``delp``."""
    from fv3core.stencils.d_sw import DGridShallowWaterLagrangianDynamics
    from fv3core.stencils.divergence_damping import DivergenceDamping
    from stencils.dims import GridIndexing

    spec, grid, factory = _setup(n, tile)
    h = spec.n_halo
    on_grid = factory.on_grid(GridIndexing(n, n, LEVELS, h))
    damping = DivergenceDamping(on_grid, grid, spec, nord, 0.2, 0.0, 0.12, dt)
    dsw = DGridShallowWaterLagrangianDynamics(on_grid, grid, spec, dt, hord, hord, hord, damping,
                                              nord_v=2, damp_v=0.12)  # fmt: skip
    rng = np.random.default_rng(n)
    cells, xs, ys, corners = ((n + 2 * h + a, n + 2 * h + b, LEVELS) for a, b in ((0, 0), (1, 0), (0, 1), (1, 1)))
    winds = _winds(n, h, rng)
    store = _storages({
        "delp": 1.0e4 * (1.0 + 0.1 * rng.random(cells)), **winds,
        "uc": winds["v"] + rng.standard_normal(xs), "vc": winds["u"] + rng.standard_normal(ys),
        "ua": rng.standard_normal(cells), "va": rng.standard_normal(cells),
        "divg_d": 1.0e-6 * rng.standard_normal(corners),
    })  # fmt: skip
    rec = _recorder(factory, grid, store)
    _run_steps(rec, dsw.bind(*(store[k] for k in ("delp", "u", "v", "uc", "vc", "ua", "va", "divg_d"))))
    return rec.program(f"fv3_d_sw_c{n}", ["delp", "u", "v", "uc", "vc", "divg_d"])


ROUTINES: dict[str, Callable[[int], RecordedProgram]] = {
    "d_sw": d_sw,
    "c_sw": c_sw,
    "fv_tp_2d": fv_tp_2d,
    "fv_tp_2d_hord10": partial(fv_tp_2d, hord=10),
    "geopk": geopk,
}


def build(routine: str, n: int | None, tile: int = 0) -> RecordedProgram:
    """The program of ``fv3:ROUTINE[:N]`` (N: the cube's resolution, default C12) on ``tile``."""
    n = DEFAULT_RESOLUTION if n is None else n
    if n % 2 or n < 6:
        from mapping.spatial.errors import StencilFlowError

        raise StencilFlowError(f"fv3:{routine}:{n}: the resolution must be even and at least 6 (FV3's grid)")
    log.info("recording fv3:%s on one rank of C%d", routine, n)
    return ROUTINES[routine](n, tile=tile)


register_family("fv3", build, lambda: list(ROUTINES))
