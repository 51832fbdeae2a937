"""benchmarks.peers: every NumPy, Numba and C peer of every library stencil against GT4Py."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from benchmarks.common import BenchmarkError
from benchmarks.peers import PEER_KINDS, PeerKernels, check_outputs
from stencils import Domain, StencilFactory, from_numpy, to_numpy
from stencils.library import LIBRARY

SHAPE = (16, 12, 8)
#: observed differences are 0 or a few ulps (<= 1e-15); 1e-12 leaves rounding room only
TOL = 1e-12

pytestmark = pytest.mark.skipif(
    __import__("shutil").which("gcc") is None, reason="the C peers need gcc"
)


@pytest.fixture(scope="module")
def peers():
    with PeerKernels(PEER_KINDS) as kernels:
        yield kernels


@pytest.fixture(scope="module")
def references() -> dict[str, dict[str, np.ndarray]]:
    """Each stencil's outputs from the GT4Py numpy backend on the SHAPE domain."""
    out = {}
    for name, lib in LIBRARY.items():
        dom = Domain(*SHAPE, halo=lib.halo)
        fields = {k: from_numpy(v, "numpy", dom.origin) for k, v in lib.allocate(dom, seed=0).items()}
        StencilFactory("numpy")(lib.definition)(origin=dom.origin, domain=dom.domain, **fields, **lib.params)
        out[name] = {o: to_numpy(fields[o])[lib.interior(dom)] for o in lib.outputs}
    return out


def _run_peer(peers: PeerKernels, kind: str, name: str) -> dict[str, np.ndarray]:
    lib = LIBRARY[name]
    dom = Domain(*SHAPE, halo=lib.halo)
    arrays = lib.allocate(dom, seed=0)
    inputs = {k: arrays[k].copy() for k in lib.inputs}
    peers.bind(kind, lib, arrays, dom.halo)()
    for k in lib.inputs:  # a peer only writes its outputs
        np.testing.assert_array_equal(arrays[k], inputs[k])
    return {o: arrays[o][lib.interior(dom)] for o in lib.outputs}


@pytest.mark.parametrize("kind", PEER_KINDS)
@pytest.mark.parametrize("name", list(LIBRARY))
def test_peer_matches_numpy_backend(peers, references, kind, name):
    """Reference: the GT4Py numpy backend's result of the same stencil on the same inputs
    (itself tested against the library's NumPy references); tolerance 1e-12 abs."""
    got = _run_peer(peers, kind, name)
    assert check_outputs(name, f"peer:{kind}", got, references[name], tol=TOL) <= TOL


@pytest.mark.parametrize("perturb", [1e-8, np.nan])
def test_wrong_peer_is_caught(references, perturb):
    """Reference: the definition -- an output off by 1e-8 (or NaN) at one point exceeds the
    1e-10 tolerance; the error names the stencil and the peer."""
    good = references["hdiff"]
    bad = {k: v.copy() for k, v in good.items()}
    bad["out_field"][3, 4, 5] += perturb
    with pytest.raises(BenchmarkError, match=r"hdiff: peer:c differs .*'out_field'"):
        check_outputs("hdiff", "peer:c", bad, good)


def test_missing_compiler_is_a_benchmark_error(monkeypatch):
    """Reference: the definition -- without a C compiler the C peers cannot be built."""
    monkeypatch.setenv("CC", "no-such-compiler-stratoflow")
    with pytest.raises(BenchmarkError, match="no C compiler"):
        PeerKernels(["c"])


def test_importing_the_benchmark_does_not_import_numba():
    """Reference: the design rule -- benchmarks/ modules load at every CLI start, numba only
    when its peers are built."""
    code = "import sys, benchmarks.peers, benchmarks.stencils; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_numba_peers_leave_openmp_nesting_as_it_was() -> None:
    """Numba's omp layer turns OpenMP nesting on (max-active-levels 255) when it starts; after
    the Numba peers are built and one has run, the process's limit is the one it had before
    (read from libgomp, in a fresh process so that no earlier test has started Numba)."""
    code = ("import ctypes, ctypes.util\n"
            "gomp = ctypes.CDLL(ctypes.util.find_library('gomp') or 'libgomp.so.1')\n"
            "before = gomp.omp_get_max_active_levels()\n"
            "from benchmarks.peers.numba_peers import build_kernels\n"
            "import numpy as np\n"
            "kernels = build_kernels()\n"
            "f = np.ones((6, 6, 3))\n"
            "kernels['laplacian_2d'](f, np.zeros_like(f), 1)\n"
            "print(before, gomp.omp_get_max_active_levels())\n")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=300).stdout.split()  # fmt: skip
    assert out[0] == out[1] == "1"
