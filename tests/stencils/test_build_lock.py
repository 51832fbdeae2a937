"""Concurrent builds into one stencil cache (stencils.build_lock): a process that builds a
stencil whose build lock another process holds waits for it, then builds into the same cache;
its result equals a NumPy reference (out = 2 * in + 1)."""

from __future__ import annotations

import fcntl
import os
import select
import subprocess
import sys
from pathlib import Path

import numpy as np

from stencils.build_lock import build_lock

REPO = Path(__file__).resolve().parents[2]

BUILDER = """\
import sys
import numpy as np
from gt4py.cartesian.gtscript import PARALLEL, Field, computation, interval

from stencils.config import StencilConfig
from stencils.factory import StencilFactory


def affine(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = 2.0 * inp + 1.0


factory = StencilFactory(StencilConfig(backend="numpy", cache_dir=sys.argv[1]))
print("ready", flush=True)
stencil = factory(affine)
inp = np.arange(4 * 5 * 3, dtype=np.float64).reshape(4, 5, 3)
out = np.zeros_like(inp)
stencil(inp=inp, out=out, origin=(0, 0, 0), domain=inp.shape)
np.save(sys.argv[2], out)
print("built", flush=True)
"""


def test_the_lock_excludes_a_second_holder(tmp_path) -> None:
    """While the block runs, the lock file is flock-ed: a non-blocking flock from another
    open file description fails; after the block it succeeds."""
    with build_lock(tmp_path, "pkg.module.name"):
        fd = os.open(tmp_path / "locks" / "pkg.module.name.lock", os.O_RDWR)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                locked = False
            except BlockingIOError:
                locked = True
        finally:
            os.close(fd)
    assert locked
    fd = os.open(tmp_path / "locks" / "pkg.module.name.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # raises if still held
    finally:
        os.close(fd)


def test_a_build_waits_for_the_lock_then_builds_into_the_shared_cache(tmp_path) -> None:
    """A subprocess builds ``affine`` with the numpy backend while this test holds its lock:
    it prints nothing for 5 s; released, it builds and its result is 2 * in + 1."""
    cache = tmp_path / "cache"
    script = tmp_path / "builder.py"
    script.write_text(BUILDER)
    name = "__main__.affine@numpy"  # StencilFactory's lock: definition and backend
    with build_lock(cache, name):
        proc = subprocess.Popen(
            [sys.executable, str(script), str(cache), str(tmp_path / "out.npy")],
            cwd=REPO, stdout=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )  # fmt: skip
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        # the unlocked build takes about a second: five seconds of silence show it waits
        ready, _, _ = select.select([proc.stdout], [], [], 5.0)
        assert not ready and proc.poll() is None, "the build did not wait for the lock"
    line = proc.stdout.readline().strip()
    assert proc.wait(timeout=300) == 0 and line == "built"
    inp = np.arange(4 * 5 * 3, dtype=np.float64).reshape(4, 5, 3)
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), 2.0 * inp + 1.0)


def test_a_build_on_another_backend_does_not_wait(tmp_path) -> None:
    """The lock of the same definition on gt:cpu_ifirst held: the numpy build (its own cache
    folder) goes ahead and finishes while it is held; result 2 * in + 1."""
    cache = tmp_path / "cache"
    script = tmp_path / "builder.py"
    script.write_text(BUILDER)
    with build_lock(cache, "__main__.affine@gt:cpu_ifirst"):
        proc = subprocess.run(
            [sys.executable, str(script), str(cache), str(tmp_path / "out.npy")],
            cwd=REPO, capture_output=True, text=True, timeout=300,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )  # fmt: skip
        assert proc.returncode == 0 and proc.stdout.split() == ["ready", "built"]
    inp = np.arange(4 * 5 * 3, dtype=np.float64).reshape(4, 5, 3)
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), 2.0 * inp + 1.0)
