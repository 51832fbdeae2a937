"""CuPy arrays (GPU gt4py storages): device packing kernels, host staging. Runs only where CuPy
and a GPU exist (skipped otherwise); reference: the 3-D cube oracle, exact."""

from __future__ import annotations

import cube_oracle as oracle
import pytest
from cluster_helpers import KINDS, assert_bitwise, build_local, exchange_all, make_spec

from mapping.cluster import CubedSpherePartitioner

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu


def _has_gpu() -> bool:
    try:
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no driver / no device
        return False


@pytest.mark.skipif(not _has_gpu(), reason="needs an NVIDIA GPU")
@pytest.mark.parametrize("kind", ["center", "D"])
def test_cupy_arrays_match_oracle(kind, rng) -> None:
    part = CubedSpherePartitioner((1, 1))
    N, h, st = 6, 2, KINDS[kind]
    G = oracle.make_global(N, 2, st, rng)
    local = oracle.scatter(G, part, N, h, st, rng)
    want = oracle.expected(local, G, part, N, h, h, st)
    device = [[cupy.asarray(a) for a in arrays] for arrays in local]
    exchange_all(
        build_local(part, lambda r: [make_spec(kind, device[r], h, corner_fill="x")]
                    if kind == "center" else [make_spec(kind, device[r], h)])
    )
    got = [[cupy.asnumpy(a) for a in arrays] for arrays in device]
    if kind == "center":  # corners are filled on the device; compare outside them
        for arrays, wants in zip(got, want):
            for a, w in zip(arrays, wants):
                for ci in (slice(0, h), slice(h + N, None)):
                    for cj in (slice(0, h), slice(h + N, None)):
                        a[ci, cj] = w[ci, cj]
    assert_bitwise(got, want)
