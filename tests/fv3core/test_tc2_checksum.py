"""Regression pin: Williamson TC2 at C24 over one day writes the same fields, bit for bit, as
the reference computed before the architecture change (commit 7c81ea4).

Reference: SHA-256 of the float64 bytes of each output field, recorded by running the same
configuration on commit 7c81ea4 (numpy and gt:cpu_ifirst gave identical bytes) on x86-64 with
NumPy 2.4.6.  Tolerance 0: any change to the numerics, to the order of floating-point
operations, or to the grid generation changes a checksum.  A different CPU whose NumPy
dispatches other SIMD kernels for sin/cos/arccos can change the grid's last bits, and so the
checksums, without any change in stratoflow. NumPy picks its float64 sin/cos/exp/log kernels by
the CPU: with AVX512F it runs its own SIMD kernels, without it the C library's. The second pin
holds the fields without AVX512F, recorded on an AVX2-only x86-64 (NumPy 2.4.6) by commit
576213b, whose output on an AVX512F machine is the first pin; the failure message says which
fields differ.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from fv3core.config import FV3Config
from fv3core.driver import run
from tests.numpy_simd import numpy_has_avx512f

TC2_C24_ONE_DAY = {"case": "williamson2", "resolution": 24, "days": 1.0}
STEPS, DT = 109, 792.6605504587156
CHECKSUMS_AVX512F = {
    "h": "49064fba72adbf2cbc9f015d273a0eb6e0b383874527bf6931439fea9e671e48",
    "h_exact": "8edf4b8c72d32c8815944e4bcb9b825c877d74cd8347668b273f2ae72d5f0372",
    "u": "bafe31c70ab385683964e23ccacc076662dfc98d6b4573a0aade5336297fb39a",
    "v": "8d1bf815ab58be0d138231ae7f517f379a5e49ec098f6b5e5c903f1495ead2ee",
    "vorticity": "b7eb0d8c4da819697afd53cdc35221b428003e293e3bab8919dfca1e21bd9b73",
}
CHECKSUMS_WITHOUT_AVX512F = {
    "h": "91c187935c9cc5d55cbf6e512f1745bfb2bb1328aa12d2cb160e384cfc22988f",
    "h_exact": "bf8cf7232371b98248db61ccfab66a7af55af82dcb1f9a4ed20d80924621eb04",
    "u": "b4a680979d43e435cd375843d1a611b39ce045743c186ec3779a6107850134e4",
    "v": "b24531eae53ba0f902be51a980bfd9445e1f5ebc45167593e39c9ebdbe06e518",
    "vorticity": "953541cb7eb80a25b7b4e7808b5491810f192b9b7b87f2eea55b37df8515a806",
}
CHECKSUMS = CHECKSUMS_AVX512F if numpy_has_avx512f() else CHECKSUMS_WITHOUT_AVX512F


def _checksums(backend: str) -> dict[str, str]:
    result = run(FV3Config(backend=backend, **TC2_C24_ONE_DAY), progress=False)
    assert (result.steps, result.dt) == (STEPS, DT)
    return {
        name: hashlib.sha256(np.ascontiguousarray(a, dtype=np.float64).tobytes()).hexdigest()
        for name, a in result.fields.items()
    }


@pytest.mark.parametrize(
    "backend",
    # gt:cpu_ifirst builds ~20 C++ stencils (~8 min cold): slow; numpy is the default suite's
    ["numpy", pytest.param("gt:cpu_ifirst", marks=pytest.mark.slow)],
)
def test_tc2_c24_one_day_fields_are_bitwise_the_pinned_reference(backend: str) -> None:
    """Every output field's SHA-256 equals the pinned one (tolerance 0)."""
    got = _checksums(backend)
    assert sorted(got) == sorted(CHECKSUMS)
    differ = [name for name in CHECKSUMS if got[name] != CHECKSUMS[name]]
    assert not differ, (
        f"fields {differ} differ from the pinned TC2 C24 reference on {backend} "
        f"(AVX512F: {numpy_has_avx512f()})"
    )
