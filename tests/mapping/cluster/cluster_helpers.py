"""Helpers shared by the halo-exchange tests: run many in-process ranks against the oracle."""

from __future__ import annotations

from collections.abc import Callable

import cube_oracle as oracle
import numpy as np

from mapping.cluster import HaloExchange, LocalComm, ScalarHalo, VectorHalo

KINDS = {
    "center": [(0, 0)],
    "corner": [(1, 1)],
    "A": list(oracle.GRIDS["A"]),
    "C": list(oracle.GRIDS["C"]),
    "D": list(oracle.GRIDS["D"]),
}


def make_spec(kind: str, arrays: list, h: int, depth: int | None = None, **kw):
    if kind in ("center", "corner"):
        return ScalarHalo(arrays[0], n_halo=h, location=kind, depth=depth, **kw)
    return VectorHalo(arrays[0], arrays[1], n_halo=h, grid=kind, depth=depth, **kw)


def build_local(part, specs_of_rank: Callable[[int], list], **kw) -> list[HaloExchange]:
    comms = LocalComm.create(part.total_ranks)
    return [HaloExchange(comms[r], part, specs_of_rank(r), **kw) for r in range(part.total_ranks)]


def exchange_all(exchanges: list[HaloExchange]) -> None:
    """The in-process pattern: every rank starts, then every rank waits."""
    for ex in exchanges:
        ex.start()
    for ex in exchanges:
        ex.wait()
    assert exchanges[0].comm.pending_messages() == 0


def assert_bitwise(actual: list[list[np.ndarray]], expected: list[list[np.ndarray]]) -> None:
    for rank, (arrs, exps) in enumerate(zip(actual, expected)):
        for c, (a, e) in enumerate(zip(arrs, exps)):
            bad = np.argwhere(np.any(a != e, axis=-1) if a.ndim == 3 else a != e)
            assert bad.size == 0, f"rank {rank} component {c}: {len(bad)} wrong points, e.g. {bad[:5].tolist()}"
