"""The halo updates of FV3's ``dyn_core`` acoustic loop, shared by the shallow-water and the
hydrostatic 3-D dynamics: the scalars (``delp``; the 3-D core: ``delp`` and ``pt``), the D-
and C-grid winds, the corner divergence (``nord > 0``) and, after the last acoustic step,
FV3's ``mpp_get_boundary`` (the D-grid winds with their shared edges synchronised)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from mapping.cluster import Communicator, ExchangeGroup, ScalarHalo, VectorHalo
from stencils.launch import Launch


class AcousticHalos:
    """The updaters of ``dyn_core``'s halo updates for the ranks of this process, built once;
    ``ranks[r]`` holds the storages ``u``, ``v``, ``uc``, ``vc``, ``divg_d`` and the scalars
    ``scalars(ranks[r])`` returns.  :meth:`exchange` times each update into :attr:`seconds`."""

    def __init__(self, communicator: Communicator, ranks: Mapping[int, Any], n_halo: int,
                 nord: int, scalars: Callable[[Any], list[Any]]) -> None:  # fmt: skip
        h = n_halo
        self._communicator, self._ranks = communicator, ranks
        updater = self.updater
        self.scalars = updater(lambda d: [ScalarHalo(a, h) for a in scalars(d)])
        self.d_winds = updater(lambda d: [VectorHalo(d.u, d.v, h, grid="D", sync_edges=False)])
        self.c_winds = updater(lambda d: [VectorHalo(d.uc, d.vc, h, grid="C", sync_edges=False)])
        self.divergence = (updater(lambda d: [ScalarHalo(d.divg_d, h, location="corner",
                                                         sync_edges=False)])
                           if nord > 0 else None)  # fmt: skip
        self.boundary = updater(lambda d: [VectorHalo(d.u, d.v, h, grid="D", sync_edges=True)])
        #: seconds spent in halo updates (all steps)
        self.seconds = 0.0

    def updater(self, halos: Callable[[Any], list[Any]]) -> ExchangeGroup:
        """The halo updater of ``halos(rank)`` (the halo specs of each rank's storages)."""
        return self._communicator.halo_updater({r: halos(d) for r, d in self._ranks.items()},
                                               packing="slicing")  # fmt: skip

    def exchange(self, group: ExchangeGroup | None) -> None:
        """``group.update()``, timed (nothing for None: ``nord = 0``'s divergence)."""
        if group is None:
            return
        t0 = time.perf_counter()
        group.update()
        self.seconds += time.perf_counter() - t0


def run_phase(ranks: Mapping[int, Any], phase: Callable[[Any], list[Launch]]) -> None:
    """Every rank's launches of ``phase`` (a function of the rank), rank by rank."""
    for d in ranks.values():
        for launch in phase(d):
            launch()
