"""Let GT4Py's dace backends build a stencil from a transformed SDFG.

GT4Py 1.1.12 lowers a stencil to an SDFG, simplifies it and generates C++ from it in
``DaCeExtGenerator.__call__``. :func:`install` adds one versioned backend option,
``stratoflow_sdfg`` (the JSON list of SDFG transformations), to the dace CPU backends and
wraps that method so the transformations are applied between simplification and code
generation. Because the option is versioned, each transformation list gets its own entry in
GT4Py's build cache. Without the option the original code path runs unchanged.
"""

from __future__ import annotations

import copy
import json
import logging
import threading

log = logging.getLogger(__name__)

SDFG_OPTION = "stratoflow_sdfg"
_lock = threading.Lock()
_installed = False


def install() -> None:
    """Idempotently register the option and wrap the dace code generator."""
    global _installed
    with _lock:
        if _installed:
            return
        from gt4py.cartesian.backend import dace_backend as db

        for cls in (db.DaceCPUBackend, db.DaceCPU_KJI, db.DaceCPUKFirstBackend):
            opts = dict(cls.options)
            opts[SDFG_OPTION] = {"versioning": True, "type": str}
            cls.options = opts  # type: ignore[misc]

        original = db.DaCeExtGenerator.__call__

        def tuned_call(self: db.DaCeExtGenerator) -> dict[str, dict[str, str]]:
            spec = self.backend.builder.options.backend_opts.get(SDFG_OPTION)
            if not spec:
                return original(self)
            from mapping.tuning.sdfg_transforms import apply_transforms

            manager = db.SDFGManager(self.backend.builder)
            sdfg = copy.deepcopy(manager.sdfg_via_schedule_tree())
            db._specialize_transient_strides(sdfg, self.backend.storage_info)
            sdfg.simplify(validate=True, skip={"ScalarToSymbolPromotion"})
            apply_transforms(sdfg, json.loads(spec))
            sdfg.validate()
            implementation = db.DaCeComputationCodegen.apply(self.backend.builder, sdfg)
            bindings = db.DaCeBindingsCodegen.apply(sdfg, self.module_name, backend=self.backend)
            return {
                "computation": {"computation.hpp": implementation},
                "bindings": {"bindings.cpp": bindings},
            }

        db.DaCeExtGenerator.__call__ = tuned_call  # type: ignore[method-assign]
        _installed = True
        log.debug("installed the stratoflow SDFG-transformation hook into gt4py's dace backends")
