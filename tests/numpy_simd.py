"""Which SIMD kernels NumPy dispatches on this CPU (they change the last bits of transcendentals)."""

from __future__ import annotations


def numpy_has_avx512f() -> bool:
    """Whether NumPy runs its own AVX512F kernels for float64 exp/log/sin/cos (else the C
    library's functions)."""
    from numpy._core._multiarray_umath import __cpu_features__

    return bool(__cpu_features__.get("AVX512F"))
