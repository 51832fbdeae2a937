"""What :func:`fv3core.experiments.driver.run` runs: an :class:`Experiment` (a test case: its time-step
limit, its model, its diagnostics) and the :class:`Model` it builds (state, step, output)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from fv3core.grid.decomposition import Decomposition, Rank
from stencils.factory import StencilFactory

#: per rank of this process: output field name -> the rank's interior cells
RankFields = dict[int, dict[str, np.ndarray]]


def agrid_geometry(metrics: Mapping[int, Any]) -> RankFields:
    """:meth:`Model.cell_geometry` of models on FV3's grid: per rank's
    :class:`~fv3core.grid.metric_terms.MetricTerms`, the cell centres (``agrid``, degrees)
    and areas of the compute cells."""
    return {r: {"lon": np.rad2deg(m.interior("agrid")[..., 0]),
                "lat": np.rad2deg(m.interior("agrid")[..., 1]),
                "area": m.interior("area")} for r, m in metrics.items()}  # fmt: skip


@dataclass(frozen=True)
class GlobalGrid:
    """Cell centres and areas of the whole cube, (6, N, N) each: ``lon``, ``lat`` in degrees,
    ``area`` in m^2."""

    lon: np.ndarray
    lat: np.ndarray
    area: np.ndarray


@dataclass(frozen=True)
class Analysis:
    """What an experiment reports at the end of a run: global output fields and diagnostics."""

    fields: dict[str, np.ndarray]
    diagnostics: dict[str, float]


class Model(Protocol):
    """One process's part of a model on the ranks of a decomposition."""

    def step(self) -> None:
        """Advance every rank of this process by one time step."""

    def output_fields(self) -> RankFields:
        """The fields the experiment analyses, per rank, interior cells only."""

    def cell_geometry(self) -> RankFields:
        """Per rank: cell-centre ``lon``, ``lat`` (degrees) and ``area`` (m^2) of the grid the
        model runs on, interior cells only."""

    def run_diagnostics(self) -> dict[str, float]:
        """Diagnostics of the run itself (e.g. the acoustic time step, seconds spent in halo
        updates so far)."""


class Experiment(Protocol):
    """A test case: which model it runs, with which time step, and how it is diagnosed."""

    #: model steps per time step of the CFL estimate (acoustic steps per large step)
    substeps: int

    def cfl_rate(self, rank: Rank) -> float:
        """max over the rank's compute cells of (signal speed / cell length) (1/s) at t = 0."""

    def build(self, factory: StencilFactory, decomposition: Decomposition, dt: float) -> Model:
        """The model of this process's ranks for time steps of ``dt`` seconds."""

    def analyse(
        self, start: Mapping[str, np.ndarray], end: Mapping[str, np.ndarray], grid: GlobalGrid,
        t_end: float,
    ) -> Analysis:  # fmt: skip
        """Output fields and diagnostics from the gathered first and last output fields."""
