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
@pytest.mark.parametrize("kind,fill,side", [("center", "x", "x"), ("C", True, "C"), ("D", False, None)])
def test_cupy_arrays_match_oracle(kind, fill, side, rng) -> None:
    """Exchange (and corner fill on the device) of CuPy arrays equals the oracle, exactly."""
    part = CubedSpherePartitioner((1, 1))
    N, h, st = 6, 2, KINDS[kind]
    G = oracle.make_global(N, 2, st, rng)
    local = oracle.scatter(G, part, N, h, st, rng)
    want = oracle.expected(local, G, part, N, h, h, st, corner_fill=side)
    device = [[cupy.asarray(a) for a in arrays] for arrays in local]
    exchange_all(build_local(part, lambda r: [make_spec(kind, device[r], h, corner_fill=fill)]))
    assert_bitwise([[cupy.asnumpy(a) for a in arrays] for arrays in device], want)
