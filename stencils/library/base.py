"""What every library stencil provides."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from stencils.storage import Domain

if TYPE_CHECKING:
    from stencils.factory import Stencil, StencilFactory

F64 = np.float64


@dataclass(frozen=True)
class LibraryStencil:
    """A GTScript stencil with its NumPy reference and what it needs to run.

    ``reference(halo=h, **arrays, **params)`` takes the full numpy arrays (interior + halo ``h``)
    and returns each output on the interior columns and the ``levels`` the stencil computes.
    ``levels`` is the vertical range the stencil computes (e.g. ``slice(1, -1)`` for 3D stencils
    that need k-1 and k+1).
    """

    name: str
    definition: Callable[..., None]
    reference: Callable[..., dict[str, np.ndarray]]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    halo: int
    make_inputs: Callable[[Domain, np.random.Generator], dict[str, np.ndarray]]
    params: Mapping[str, float] = field(default_factory=dict)
    levels: slice = field(default_factory=lambda: slice(None))
    description: str = ""
    #: GT4Py OIR passes this stencil is built without (see :func:`stencils.gt4py_internals.
    #: oir_pipeline_without`): its schedule, chosen by measurement and bitwise the default
    #: pipeline's result; every backend and caller builds it so (:meth:`build`)
    oir_skip: tuple[str, ...] = ()

    def build(self, factory: StencilFactory) -> Stencil:
        """This stencil built by ``factory`` with its schedule (:attr:`oir_skip`)."""
        return factory(self.definition, oir_skip=self.oir_skip)

    def allocate(self, domain: Domain, seed: int = 0) -> dict[str, np.ndarray]:
        """Inputs from ``make_inputs`` plus zeroed outputs, as numpy arrays of ``domain.shape``."""
        if domain.halo < self.halo:
            domain = domain.with_halo(self.halo)
        arrays = self.make_inputs(domain, np.random.default_rng(seed))
        for name in self.outputs:
            arrays[name] = np.zeros(domain.shape, dtype=F64)
        return arrays

    def interior(self, domain: Domain) -> tuple[slice, slice, slice]:
        i, j, _ = domain.interior
        return (i, j, self.levels)

    def bytes_moved(self, domain: Domain, itemsize: int = 8) -> int:
        """Compulsory traffic: every input and output field read/written once over the domain."""
        return (len(self.inputs) + len(self.outputs)) * domain.points * itemsize


def smooth_field(domain: Domain, rng: np.random.Generator, amplitude: float = 1.0) -> np.ndarray:
    """A smooth random field (sum of a few Fourier modes plus small noise) of ``domain.shape``."""
    nx, ny, nz = domain.shape
    x = np.linspace(0.0, 2.0 * np.pi, nx)[:, None, None]
    y = np.linspace(0.0, 2.0 * np.pi, ny)[None, :, None]
    z = np.linspace(0.0, 1.0, nz)[None, None, :]
    f = np.zeros(domain.shape)
    for _ in range(3):
        kx, ky = rng.integers(1, 4, size=2)
        phase = rng.uniform(0, 2 * np.pi)
        f += np.sin(kx * x + ky * y + phase) * (1.0 + 0.5 * z)
    f += 0.05 * rng.standard_normal(domain.shape)
    return amplitude * f


def shifted(array: np.ndarray, halo: int, di: int, dj: int, dk: int = 0) -> np.ndarray:
    """The interior of ``array`` shifted by (di, dj, dk); k shifts drop the wrapped levels."""
    nx, ny, nz = array.shape
    i0, j0 = halo + di, halo + dj
    out = array[i0 : i0 + nx - 2 * halo, j0 : j0 + ny - 2 * halo, :]
    if dk:
        out = np.roll(out, -dk, axis=2)
    return out


def smooth_input(domain: Domain, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Inputs of single-field stencils: one smooth field named ``in_field``."""
    return {"in_field": smooth_field(domain, rng)}
