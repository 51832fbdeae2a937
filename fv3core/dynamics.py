"""The acoustic step of the shallow-water dynamical core (FV3's ``dyn_core`` loop body, nz = 1).

:class:`ShallowWaterDynamics` runs one acoustic step for all ranks of this process: the
phases of :class:`CGridShallowWater` (``c_sw``) and :class:`DGridShallowWater` (``d_sw``) of
every rank, with FV3's halo updates and the cube-vertex fixes between them:

1. ``u, v`` D-grid vector update with corner fill (FV3 before ``c_sw``; the neighbour owns
   the shared boundary edges)
2. ``d2a2c`` + ``c_sw``: A-grid winds, absolute vorticity, C-grid winds and depth at the half
   step, C-grid wind update (vorticity, kinetic energy, pressure gradient)
3. C-grid vector update of the half-step normal winds (FV3 after ``c_sw``)
4. ``d_sw``: Courant numbers and swept areas, ``fvtp2d`` depth fluxes (synchronised on shared
   faces, so mass is conserved to round-off), depth update, ``fvtp2d`` vorticity fluxes
5. scalar update of the new depth (FV3 before the pressure gradient), corner potential with
   divergence damping, D-grid wind update
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from fv3core.decomposition import Decomposition, Rank
from fv3core.grid.shallow_water_geometry import cube_vertices
from fv3core.grid.storages import DynamicsGrid
from fv3core.state import ShallowWaterState, field_allocator
from fv3core.stencils.c_sw import CGridShallowWater
from fv3core.stencils.d_sw import DGridShallowWater
from fv3core.stencils.vertex_fixes import CubeVertexFixes, VertexInputs
from fv3core.testcases.williamson import ShallowWaterCase
from mapping.cluster import ExchangeGroup, ScalarHalo, VectorHalo
from stencils.dims import GridIndexing
from stencils.directions import X, Y
from stencils.factory import StencilFactory
from stencils.launch import Launch, stencil_major
from stencils.storage import Domain, StackedStorages


@dataclass(frozen=True)
class DynamicsConfig:
    """Acoustic-step settings: ``dt`` is one acoustic (sub)step (s); ``dddmp`` the
    dimensionless del2 divergence-damping coefficient (nu = dddmp * mean cell area / dt);
    ``hord`` the PPM variant of the depth and vorticity fluxes; ``nord`` 1 adds FV3's del4
    damping of the divergence with ``d4_bg`` (nu4 = (d4_bg * smallest cell area)^2 / dt, see
    :mod:`fv3core.stencils.divergence_damping`)."""

    dt: float
    hord: int = 8
    dddmp: float = 0.02
    nz: int = 1
    nord: int = 0
    d4_bg: float = 0.12


class Phase(Enum):
    """The stretches of one acoustic step between two halo updates or vertex fixes, in order;
    each runs launches of one rank that touch only that rank's fields."""

    #: d2a2c: A-grid winds, absolute vorticity, C-grid normal winds and depth fluxes (needs
    #: filled halos of h, u, v; the cube-vertex faces are fixed next)
    C_GRID_NORMAL_WINDS = "c_grid_normal_winds"
    #: the rest of c_sw: half-step depth and potential, C-grid wind update
    C_GRID_UPDATE = "c_grid_update"
    #: Courant numbers from the half-step C-grid winds, fvtp2d of h
    DEPTH_FLUXES = "depth_fluxes"
    #: flux-form depth update (after the face sync), fvtp2d of the absolute vorticity
    DEPTH_UPDATE_AND_VORTICITY_FLUXES = "depth_update_and_vorticity_fluxes"
    #: corner potential K + g h - nu div and the corner divergence (needs the new h's halo; the
    #: cube-vertex dual cells are fixed next)
    CORNER_POTENTIAL = "corner_potential"
    #: del4 damping (nord = 1; needs the corner divergence's halo ring), D-grid wind update
    WIND_UPDATE = "wind_update"


class Halo(Enum):
    """The halo updates of the step."""

    DEPTH = "depth"  # h, cell centres
    WIND = "wind"  # u, v: D-grid vector with corner fill
    C_GRID_WIND = "c_grid_wind"  # half-step normal winds: C-grid vector with corner fill
    FLUX_SYNC = "flux_sync"  # depth fluxes: the owner's value on shared faces
    DIVERGENCE = "divergence"  # the ring of corner divergences around the compute corners


class RankDynamics:
    """One rank's grid, state and routines of the acoustic step."""

    def __init__(
        self,
        factory: StencilFactory,
        rank: Rank,
        config: DynamicsConfig,
        case: ShallowWaterCase,
        stacked: Callable[[str, Domain], Any] | None = None,
    ) -> None:
        """``stacked``: this rank's allocator of an allocation shared by the ranks of a process
        (each field one buffer for all ranks, :meth:`stencils.storage.StackedStorages.allocator`);
        default one storage per field."""
        self.rank, self.config, self.case = rank, config, case
        spec, metric, backend = rank.spec, rank.metric, factory.backend
        self.spec = spec
        indexing = GridIndexing(spec.nx, spec.ny, config.nz, spec.n_halo)
        grid_factory = factory.on_grid(indexing)
        allocate = field_allocator(indexing, backend, stacked)
        lon, lat = metric.lonlat_agrid
        self.grid = DynamicsGrid(metric, case.surface(lon, lat), backend)
        self.state = ShallowWaterState.initial(case, metric, allocate, backend)
        self.c_sw = CGridShallowWater(grid_factory, self.grid, self.state, allocate,
                                      case.gravity, config.dt)  # fmt: skip
        self.vertices = cube_vertices(spec)
        self.d_sw = DGridShallowWater(
            grid_factory, self.grid, metric, self.vertices, self.state, self.c_sw, allocate,
            gravity=case.gravity, dt=config.dt, hord=config.hord, dddmp=config.dddmp,
            nord=config.nord, d4_bg=config.d4_bg,
        )  # fmt: skip
        h = spec.n_halo
        self.halos = {
            Halo.DEPTH: ScalarHalo(self.state.h, n_halo=h, location="center"),
            Halo.WIND: VectorHalo(self.state.u, self.state.v, n_halo=h, grid="D", corner_fill=True),
            Halo.C_GRID_WIND: VectorHalo(self.c_sw.vn[X], self.c_sw.vn[Y], n_halo=h, grid="C",
                                         corner_fill=True),
            Halo.FLUX_SYNC: VectorHalo(self.d_sw.flux[X], self.d_sw.flux[Y], n_halo=h, grid="C",
                                       depth=1),
            Halo.DIVERGENCE: ScalarHalo(self.d_sw.div, n_halo=h, location="corner", depth=1),
        }  # fmt: skip
        self._phases: dict[Phase, list[Launch]] = {
            Phase.C_GRID_NORMAL_WINDS: self.c_sw.normal_winds,
            Phase.C_GRID_UPDATE: self.c_sw.update,
            Phase.DEPTH_FLUXES: self.d_sw.depth_fluxes,
            Phase.DEPTH_UPDATE_AND_VORTICITY_FLUXES: self.d_sw.depth_update_and_vorticity_fluxes,
            Phase.CORNER_POTENTIAL: self.d_sw.corner_potential,
            Phase.WIND_UPDATE: self.d_sw.wind_update,
        }

    def launches(self, phase: Phase) -> list[Launch]:
        """The launches of ``phase`` (bound stencils and corner fills), in order."""
        try:
            return list(self._phases[Phase(phase)])
        except ValueError:
            raise ValueError(
                f"unknown phase {phase!r}; phases: {', '.join(p.value for p in Phase)}"
            ) from None

    def run(self, phase: Phase) -> None:
        """Run :meth:`launches` of ``phase`` for this rank alone."""
        for launch in self._phases[phase]:
            launch()

    def vertex_fields(self) -> VertexInputs:
        return VertexInputs(
            w=self.c_sw.w, vn=self.c_sw.vn, hflux=self.c_sw.hflux, h=self.state.h,
            u=self.state.u, v=self.state.v, phib=self.d_sw.phib, div=self.d_sw.div,
            nu=self.d_sw.nu, grid=self.grid, metric=self.rank.metric, vertices=self.vertices,
        )  # fmt: skip


class ShallowWaterDynamics:
    """All ranks of this process; :meth:`step` is one acoustic step with FV3's halo updates.
    Each phase runs stencil-major over the ranks (every rank's first launch, then every
    rank's second, ...: bitwise the same as rank by rank)."""

    def __init__(
        self,
        factory: StencilFactory,
        decomposition: Decomposition,
        config: DynamicsConfig,
        case: ShallowWaterCase,
    ) -> None:
        ranks = decomposition.ranks
        stacked = StackedStorages(factory.backend, len(ranks))
        self.ranks = [RankDynamics(factory, r, config, case, stacked.allocator(i))
                      for i, r in enumerate(ranks)]  # fmt: skip
        self.vertex_fixes = CubeVertexFixes([r.vertex_fields() for r in self.ranks])
        halos = [h for h in Halo if h is not Halo.DIVERGENCE or config.nord == 1]
        comm = decomposition.communicator
        self.updaters: dict[Halo, ExchangeGroup] = {
            halo: comm.halo_updater({r.rank.rank: [r.halos[halo]] for r in self.ranks},
                                    packing="slicing")
            for halo in halos
        }  # fmt: skip
        self._phases = {phase: stencil_major([r.launches(phase) for r in self.ranks])
                        for phase in Phase}  # fmt: skip
        #: seconds spent in halo updates (all steps)
        self.halo_seconds = 0.0
        self._depth_halo_filled = False  # filled at the first step (all ranks take part)

    def exchange(self, halo: Halo) -> None:
        """Run the halo update ``halo`` of every rank (timed in :attr:`halo_seconds`)."""
        t0 = time.perf_counter()
        self.updaters[halo].update()
        self.halo_seconds += time.perf_counter() - t0

    def run(self, phase: Phase) -> None:
        """Run ``phase`` of every rank of this process."""
        for launch in self._phases[phase]:
            launch()

    def step(self) -> None:
        """One acoustic step."""
        if not self._depth_halo_filled:
            self.exchange(Halo.DEPTH)
            self._depth_halo_filled = True
        self.exchange(Halo.WIND)
        self.run(Phase.C_GRID_NORMAL_WINDS)
        self.vertex_fixes.faces()
        self.run(Phase.C_GRID_UPDATE)
        self.exchange(Halo.C_GRID_WIND)
        self.run(Phase.DEPTH_FLUXES)
        self.exchange(Halo.FLUX_SYNC)
        self.run(Phase.DEPTH_UPDATE_AND_VORTICITY_FLUXES)
        self.exchange(Halo.DEPTH)
        self.run(Phase.CORNER_POTENTIAL)
        self.vertex_fixes.vertices()
        if Halo.DIVERGENCE in self.updaters:
            self.exchange(Halo.DIVERGENCE)
        self.run(Phase.WIND_UPDATE)
