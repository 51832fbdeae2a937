"""stencils.dace_guard: a process that keeps dace out imports gt4py without dace (nor sympy,
networkx), builds the non-dace backends' stencils bit for bit as a process with dace does, and
refuses a dace backend by name; the places that use it (mpi-pytest's ranks via tests/conftest.py,
the ranks of ``stratoflow fv3 run``) do keep dace out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from mapping.tuning.db import TuningDB
from stencils import Domain, StencilFactory, from_numpy, to_numpy
from stencils.dace_guard import dace_refused, keep_dace_out
from stencils.library import LIBRARY

ROOT = Path(__file__).resolve().parents[2]
#: what dace alone brings into a process that imports gt4py
DACE_STACK = ("dace", "sympy", "networkx")


def _python(code: str, tmp_path: Path, env: dict[str, str] | None = None) -> dict:
    """Run ``code`` in a fresh interpreter (the repository first on sys.path); its last stdout
    line, as JSON."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           **(env or {})}  # fmt: skip
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "unable to load DaCe" not in done.stderr  # gt4py's warning is silenced
    return json.loads(done.stdout.strip().splitlines()[-1])


def _hdiff(backend: str) -> np.ndarray:
    lib = LIBRARY["hdiff"]
    dom = Domain(11, 9, 7, halo=2)
    arrays = lib.allocate(dom, seed=3)
    fields = {k: from_numpy(v, backend, dom.origin) for k, v in arrays.items()}
    lib.build(StencilFactory(backend))(origin=dom.origin, domain=dom.domain, **fields, **lib.params)
    return to_numpy(fields[lib.outputs[0]])


@pytest.mark.parametrize("backend", ["numpy", "gt:cpu_ifirst"])
def test_without_dace_gt4py_builds_the_same_stencils(backend, tmp_path) -> None:
    """keep_dace_out before gt4py's import: no dace, sympy or networkx in sys.modules after a
    stencil is built and run, and COSMO hdiff's output equals this process's (dace loaded) bit
    for bit; a dace backend asked for then is refused, naming the reason."""
    out = tmp_path / "out.npy"
    got = _python(f"""
        import json, sys
        from stencils.dace_guard import keep_dace_out
        kept = keep_dace_out({backend!r}, "the test's reason")
        from stencils.config import check_backend
        from stencils.errors import StencilError
        from tests.stencils.test_dace_guard import _hdiff
        import numpy as np
        np.save({str(out)!r}, _hdiff({backend!r}))
        try:
            check_backend("dace:cpu")
            refusal = None
        except StencilError as exc:
            refusal = str(exc)
        print(json.dumps({{"kept": kept, "refusal": refusal, "gt4py": "gt4py.cartesian" in sys.modules,
                          "loaded": [m for m in {DACE_STACK!r} if m in sys.modules]}}))
    """, tmp_path)  # fmt: skip
    assert got["kept"] and got["gt4py"]
    assert got["loaded"] == []
    assert "the test's reason" in got["refusal"] and "'dace:cpu' needs dace" in got["refusal"]
    np.testing.assert_array_equal(np.load(out), _hdiff(backend))


def test_a_dace_backend_or_a_loaded_dace_is_left_alone(tmp_path) -> None:
    """Nothing changes for a dace backend, nor once dace is imported."""
    assert keep_dace_out("dace:cpu_KJI", "a dace run") is False
    assert dace_refused() is None or "a dace run" not in dace_refused()
    got = _python("""
        import json, sys, dace
        from stencils.dace_guard import dace_refused, keep_dace_out
        print(json.dumps({"kept": keep_dace_out("numpy", "too late"), "refused": dace_refused()}))
    """, tmp_path)  # fmt: skip
    assert got == {"kept": False, "refused": None}


def test_fv3_run_ranks_keep_dace_out(tmp_path) -> None:
    """``fv3 run`` as an MPI rank (mpi=True) without --tuning-db keeps dace out before the model
    imports gt4py (fv3core.experiments.driver stands in for the run); with --tuning-db, or not
    under MPI, it does not."""
    code = """
        import json, sys, types
        from workflows.cli import build_parser
        from workflows.commands import fv3

        seen = {}
        def run(config, **kwargs):
            import gt4py.cartesian.gtscript  # what the model's modules import
            seen["loaded"] = [m for m in ("dace", "sympy", "networkx") if m in sys.modules]
            return types.SimpleNamespace(is_root=False)
        sys.modules["fv3core.experiments.driver"] = types.SimpleNamespace(run=run, RunResult=object)
        args = build_parser("fv3").parse_args(["fv3", "run", "--case", "williamson2",
                                               "--resolution", "12"] + sys.argv[2:])
        fv3._run_case(args, mpi=sys.argv[1] == "mpi")
        print(json.dumps(seen))
    """
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    db = tmp_path / "tuning.sqlite"
    TuningDB(db)  # an empty tuning database (the run then builds every stencil untuned)
    for argv, loaded in ((["mpi"], []), (["serial"], list(DACE_STACK)),
                         (["mpi", "--tuning-db", str(db)], list(DACE_STACK))):  # fmt: skip
        done = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *argv], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout.strip().splitlines()[-1]) == {"loaded": loaded}, argv


@pytest.mark.parallel(nprocs=2)
def test_mpi_pytest_ranks_keep_dace_out() -> None:
    """The ranks mpi-pytest starts (tests/conftest.py) import gt4py without dace."""
    import gt4py.cartesian.gtscript  # noqa: F401

    assert "gt4py.cartesian" in sys.modules
    assert [m for m in DACE_STACK if m in sys.modules] == []
    assert "mpi-pytest" in (dace_refused() or "")
