"""InProcessExchange: the traced copies of all in-process ranks' exchanges.

Reference: ``HaloExchange`` itself (every rank's ``start()`` then ``wait()``), which the other
tests check against the 3-D cube oracle; all comparisons are exact (tolerance 0).
"""

from __future__ import annotations

import cube_oracle as oracle
import numpy as np
import pytest
from cluster_helpers import KINDS, build_local, exchange_all, make_spec

from mapping.cluster import (
    CubedSpherePartitioner,
    ExchangeGroup,
    HaloError,
    InProcessExchange,
    LocalComm,
    runs_in_process,
)
from mapping.cluster.exchange import HaloExchange
from stencils.storage import Domain, StackedStorages, stacked_zeros

CASES = [
    ("center", {}),
    ("corner", {"sync_edges": True}),
    ("corner", {"corner_fill": True}),
    ("C", {"corner_fill": True}),
    ("C", {"sync_edges": True, "depth": 1}),
    ("D", {"corner_fill": True}),
    ("D", {"sync_edges": True}),
]


def _setup(layout: int, kind: str, rng, stacked: bool = False):
    part = CubedSpherePartitioner((layout, layout))
    N, h, st = 6 * layout, 3, KINDS[kind]
    local = oracle.scatter(oracle.make_global(N, 2, st, rng), part, N, h, st, rng)
    if stacked:  # every rank's component c as a slice of one buffer, as ShallowWaterDynamics does
        for c in range(len(st)):
            views = stacked_zeros(Domain(N // layout + st[c][0], N // layout + st[c][1], 2, h),
                                  part.total_ranks, "numpy")  # fmt: skip
            for arrays, view in zip(local, views):
                view[...] = arrays[c]
                arrays[c] = view
    return part, h, local


@pytest.mark.parametrize("layout", [1, 2])
@pytest.mark.parametrize(("kind", "options"), CASES)
def test_in_process_update_equals_halo_exchange_bitwise(layout, kind, options, rng) -> None:
    """Halos, corner fills and synchronised edges after ``update()`` equal those after the
    exchanges' own start/wait, bit for bit; tracing at construction leaves the fields as they
    were."""
    part, h, local = _setup(layout, kind, rng)
    exchanges = build_local(part, lambda r: [make_spec(kind, local[r], h, **options)])
    before = [[a.copy() for a in arrays] for arrays in local]
    direct = InProcessExchange(exchanges)
    for arrays, olds in zip(local, before):
        for a, old in zip(arrays, olds):
            np.testing.assert_array_equal(a, old)
    exchange_all(exchanges)
    want = [[a.copy() for a in arrays] for arrays in local]
    for arrays, olds in zip(local, before):
        for a, old in zip(arrays, olds):
            a[...] = old
    direct.update()
    for rank, (arrays, wants) in enumerate(zip(local, want)):
        for c, (a, w) in enumerate(zip(arrays, wants)):
            assert np.array_equal(a, w), f"rank {rank} component {c} differs"


def test_fields_in_one_buffer_need_few_copies(rng) -> None:
    """With every rank's field a slice of one buffer (stacked_zeros) a D-grid vector exchange
    with corner fill over 6 tiles is at most 8 copies (u/v to u/v, two signs) instead of ~100,
    and still equals HaloExchange bit for bit."""
    results = []
    for stacked in (False, True):
        part, h, local = _setup(1, "D", np.random.default_rng(7), stacked)
        exchanges = build_local(
            part, lambda r, local=local, h=h: [make_spec("D", local[r], h, corner_fill=True)]
        )
        direct = InProcessExchange(exchanges)
        direct.update()
        results.append((direct.n_copies, [a.copy() for arrays in local for a in arrays]))
    (separate, a), (stacked, b) = results
    assert stacked <= 8 < separate
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_exchange_group_falls_back_outside_one_process(rng) -> None:
    """A group that is not all ranks of one LocalComm (here: ranks 0-4 of 6) runs the exchanges
    themselves; InProcessExchange refuses it with a message naming the ranks."""
    part, h, local = _setup(1, "center", rng)
    exchanges = build_local(part, lambda r: [make_spec("center", local[r], h)])
    assert runs_in_process(exchanges)
    assert ExchangeGroup(exchanges).direct is not None
    assert ExchangeGroup(exchanges, in_process=False).direct is None
    assert not runs_in_process(exchanges[:5])
    with pytest.raises(HaloError, match=r"one HaloExchange per rank 0\.\.5"):
        InProcessExchange(exchanges[:5])


def test_non_float64_fields_are_refused(rng) -> None:
    """Ids are exact only in float64: float32 fields get a clear error, and ExchangeGroup falls
    back to the exchanges."""
    part = CubedSpherePartitioner((1, 1))
    comms = LocalComm.create(6)
    fields = [np.zeros((12, 12, 1), dtype=np.float32) for _ in range(6)]
    exchanges = [HaloExchange(comms[r], part, [make_spec("center", [fields[r]], 3)],
                              packing="slicing") for r in range(6)]  # fmt: skip
    with pytest.raises(HaloError, match="float64"):
        InProcessExchange(exchanges)
    assert ExchangeGroup(exchanges).direct is None


def test_stacked_storages_share_one_allocation() -> None:
    """StackedStorages hands each owner a slice of one buffer per name, with the strides of
    a separately allocated field; another domain under a known name gets its own field."""
    pool = StackedStorages("numpy", 3)
    d = Domain(4, 5, 2, 1)
    views = [pool.allocator(i)("q", d) for i in range(3)]
    assert all(v.shape == d.shape for v in views)
    assert all(np.shares_memory(views[0].base, v) for v in views[1:])
    assert views[1].strides == np.zeros(d.shape).strides
    other = pool.allocator(0)("q", Domain(3, 3, 1, 1))
    assert other.shape == (5, 5, 1) and not np.shares_memory(other, views[0])


class _ZeroingExchange(HaloExchange):
    """A HaloExchange whose ``wait()`` also zeroes the first halo row (as a boundary
    condition would); ``scale`` != 1 makes it compute values instead of copying them."""

    scale = 1.0

    def wait(self) -> None:
        super().wait()
        for a in self._arrays:
            a[0, :, :] = 0.0
            a[1, :, :] *= self.scale


def _zeroing_setup(rng, scale: float):
    part, h, local = _setup(1, "center", rng)
    comms = LocalComm.create(6)
    exchanges = []
    for r in range(6):
        ex = _ZeroingExchange(comms[r], part, [make_spec("center", local[r], h)],
                              packing="slicing")  # fmt: skip
        ex.scale = scale
        exchanges.append(ex)
    return local, exchanges


def test_zero_filled_points_are_reproduced(rng) -> None:
    """Reference: the exchange's own start/wait (exact): points it sets to 0.0 are zeroed
    by ``update()`` too, whatever they held before."""
    local, exchanges = _zeroing_setup(rng, 1.0)
    direct = InProcessExchange(exchanges)
    before = [[a.copy() for a in arrays] for arrays in local]
    exchange_all(exchanges)
    want = [[a.copy() for a in arrays] for arrays in local]
    assert all(np.all(w[0][0] == 0.0) for w in want)
    assert all(np.any(b[0][0] != 0.0) for b in before)  # so the zero fill must happen
    for arrays, olds in zip(local, before):
        for a, old in zip(arrays, olds):
            a[...] = old
    direct.update()
    for rank, (arrays, wants) in enumerate(zip(local, want)):
        for a, w in zip(arrays, wants):
            assert np.array_equal(a, w), f"rank {rank} differs"


def test_exchange_that_computes_values_falls_back_to_messages(rng) -> None:
    """An exchange that scales halo values cannot be traced as copies: InProcessExchange says
    so, and ExchangeGroup runs the exchanges themselves (equal to start/wait by definition)."""
    _, exchanges = _zeroing_setup(rng, 0.5)
    with pytest.raises(HaloError, match="computed values instead of copying"):
        InProcessExchange(exchanges)
    assert ExchangeGroup(exchanges).direct is None
