"""Keep DaCe out of a process whose stencils use no ``dace:*`` backend (an MPI rank, mostly).

gt4py 1.1.12 imports dace whenever it is installed, whatever the backend:
``gt4py.storage.cartesian.interface`` (for the storages' ``__descriptor__``) and
``gt4py.cartesian.backend`` (to register the ``dace:*`` backends), both inside ``try: import
dace ... except ImportError`` (the storage module then sets ``dace = None``, the backend module
warns and registers every backend but the dace ones). dace in turn imports sympy, networkx and
mpi4py: ``import gt4py.cartesian.gtscript`` holds 195 MiB resident, 136 MiB without dace
(Python 3.11, gt4py 1.1.12, dace 2.0.0b1), and every rank of an ``mpiexec -n 6`` job pays it.

:func:`keep_dace_out`, called before anything imports gt4py, puts a finder first on
``sys.meta_path`` that refuses ``import dace`` (``ModuleNotFoundError``, as if dace were not
installed) and silences gt4py's warning about it; gt4py itself is not changed. The numpy,
debug and ``gt:*`` backends build and run the same stencils bit for bit (tests/stencils/
test_dace_guard.py); a ``dace:*`` backend asked for afterwards is refused by
:func:`stencils.config.check_backend` with the reason given here. Callers: the ``stratoflow fv3
run`` command without a tuning database (tuned schedules may name a dace backend), and the
ranks mpi-pytest starts for the test suite's ``parallel`` tests (tests/conftest.py).
"""

from __future__ import annotations

import importlib.abc
import sys
import warnings
from typing import Any

#: gt4py's warning when ``import dace`` fails (gt4py/cartesian/backend/__init__.py)
_GT4PY_WARNING = "GT4Py was unable to load DaCe"


class _RefuseDace(importlib.abc.MetaPathFinder):
    """A ``sys.meta_path`` finder that refuses ``dace`` and its submodules."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if fullname == "dace" or fullname.startswith("dace."):
            raise ModuleNotFoundError(f"dace is kept out of this process: {self.reason}",
                                      name=fullname)  # fmt: skip
        return None


def dace_refused() -> str | None:
    """Why this process refuses ``import dace`` (the ``reason`` given to :func:`keep_dace_out`),
    or None when it does not."""
    finder = next((f for f in sys.meta_path if isinstance(f, _RefuseDace)), None)
    return finder.reason if finder is not None else None


def keep_dace_out(backend: str, reason: str) -> bool:
    """Refuse ``import dace`` in this process from now on, unless ``backend`` is a dace backend
    or dace is already imported (then nothing changes). ``reason`` says who asked and why
    (shown when a dace backend is asked for later). True when dace is now refused."""
    if backend.startswith("dace") or "dace" in sys.modules:
        return False
    if dace_refused() is None:
        warnings.filterwarnings("ignore", message=_GT4PY_WARNING, category=UserWarning)
        sys.meta_path.insert(0, _RefuseDace(reason))
    return True
