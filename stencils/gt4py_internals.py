"""Every use of GT4Py's (and its DaCe backends') internals, in one place.

stratoflow relies on a few things GT4Py does not promise as public API.  Each one is a
function (or a re-exported module) here, and ``tests/stencils/test_gt4py_internals.py`` has a
test per internal, so a GT4Py upgrade that moves one breaks here and in that test, nowhere
else.  The internals, by what they are for:

* build configuration: the cache location and the compile flags GT4Py reads from its
  ``config`` module (:func:`configure_builds`);
* OIR pass selection: GT4Py's default OIR pipeline without some passes
  (:func:`oir_pipeline_without`);
* front end: GTScript parsed into GTIR without code generation (:func:`parse_gtir`), the
  vertical extent each field is accessed over (:func:`k_boundary`), and the
  GTIR node classes the access analysis, the tuning features and the StencilFlow bridge walk
  (:data:`gtir`, :data:`common`, :data:`eve`);
* the launch fast path: the keyword arguments of ``StencilObject.run`` (:func:`run_arguments`)
  and, for the GridTools and DaCe CPU backends, the compiled ``run_computation`` with the
  positional arguments ``run`` passes it (:func:`compiled_launch`);
* a backend option of the DaCe CPU backends that applies SDFG transformations between
  simplification and code generation (:func:`install_sdfg_option`).
"""

from __future__ import annotations

import copy
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from gt4py import eve
from gt4py.cartesian.gtc import common, gtir

from stencils.errors import StencilError

log = logging.getLogger(__name__)

__all__ = [
    "common",
    "compiled_launch",
    "configure_builds",
    "evaluated_annotations",
    "eve",
    "gtir",
    "install_sdfg_option",
    "k_boundary",
    "LOWERED_SDFGS",
    "oir_pipeline_without",
    "parse_gtir",
    "run_arguments",
]

#: GCC flag the dace backends of gt4py 1.1.12 need with dace 2.x ('bit_cast' is not a member
#: of 'std')
CXX20 = "-std=c++20"


# -- build configuration ---------------------------------------------------------------------
def configure_builds(cache_root: Path, dir_name: str = "gt4py") -> None:
    """Point GT4Py's build cache at ``cache_root / dir_name`` and make its compile flags this
    process's ``GT4PY_EXTRA_COMPILE_ARGS`` plus C++20.

    GT4Py reads ``GT4PY_EXTRA_COMPILE_ARGS`` once, when it is imported, and hashes it into
    every stencil ID; setting it again from the environment keeps the ID independent of
    whether gt4py or :mod:`stencils.config` was imported first.  Internal:
    ``gt4py.cartesian.config.cache_settings``, ``GT4PY_EXTRA_COMPILE_ARGS`` and
    ``build_settings["extra_compile_args"]["cxx"]``."""
    from gt4py.cartesian import config as gt_config

    gt_config.cache_settings["root_path"] = str(cache_root)
    gt_config.cache_settings["dir_name"] = dir_name
    gt_config.GT4PY_EXTRA_COMPILE_ARGS = os.environ.get("GT4PY_EXTRA_COMPILE_ARGS", "")
    cxx_args = gt_config.build_settings["extra_compile_args"]["cxx"]
    if CXX20 not in cxx_args:
        cxx_args.append(CXX20)


# -- OIR passes ------------------------------------------------------------------------------
def oir_pipeline_without(passes: Sequence[str]) -> Any:
    """GT4Py's default OIR pipeline without the named passes (a backend option that enters the
    stencil's ID).  Skipping ``OnTheFlyMerging`` keeps a temporary that is read at several
    offsets a stored variable instead of recomputing it at each offset.  Internal:
    ``gt4py.cartesian.gtc.passes.oir_pipeline.DefaultPipeline``."""
    from gt4py.cartesian.gtc.passes.oir_pipeline import DefaultPipeline

    by_name = {p.__name__: p for p in DefaultPipeline.all_steps()}
    unknown = [p for p in passes if p not in by_name]
    if unknown:
        raise StencilError(f"unknown GT4Py OIR passes {unknown}: use names of {sorted(by_name)}")
    return DefaultPipeline(skip=[by_name[p] for p in passes])


def oir_pass_names() -> list[str]:
    """Names of the passes of GT4Py's default OIR pipeline, in order."""
    from gt4py.cartesian.gtc.passes.oir_pipeline import DefaultPipeline

    return [p.__name__ for p in DefaultPipeline.all_steps()]


# -- front end -------------------------------------------------------------------------------
def evaluated_annotations(definition: Callable[..., None]) -> dict[str, Any]:
    """The parameter annotations of ``definition`` evaluated as ``gtscript.stencil`` does (also
    postponed string annotations of modules with ``from __future__ import annotations``);
    ``definition`` is left as it was.  Internal: ``gtscript._set_arg_dtypes``."""
    from gt4py.cartesian import gtscript

    original = gtscript._set_arg_dtypes(definition, {})
    try:
        return dict(definition.__annotations__)
    finally:
        definition.__annotations__ = original


def parse_gtir(definition: Callable[..., None], externals: Mapping[str, Any] | None = None) -> Any:
    """A GTScript definition parsed into GTIR (``gtir.Stencil``; no code generation).

    ``lazy_stencil``, unlike ``gtscript.stencil``, does not evaluate the postponed (string)
    annotations of modules with ``from __future__ import annotations``; they are resolved the
    same way ``stencil`` does, then restored.  Internal: ``gtscript._set_arg_dtypes`` and
    ``LazyStencil.builder.gtir``."""
    from gt4py.cartesian import gtscript

    original = gtscript._set_arg_dtypes(definition, {})
    try:
        lazy = gtscript.lazy_stencil(
            backend="numpy", definition=definition, externals=dict(externals or {}),
            check_syntax=False,
        )  # fmt: skip
        return lazy.builder.gtir
    except Exception as exc:
        raise StencilError(
            f"GTScript definition {getattr(definition, '__name__', definition)!r} does not parse: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    finally:
        definition.__annotations__ = original


def k_boundary(stencil_ir: Any) -> dict[str, tuple[int, int]]:
    """Per field of a ``gtir.Stencil``: the levels it is accessed below the first level of the
    compute domain and beyond its last, ``(below, beyond)`` (``(0, 1)``: an interface field,
    one level longer than the domain; negative: that many levels inside the domain's edge are not
    accessed).  Accesses with a variable k offset are not counted.
    Internal: ``gtc.passes.gtir_k_boundary.compute_k_boundary``."""
    from gt4py.cartesian.gtc.passes.gtir_k_boundary import compute_k_boundary

    return {str(name): (int(lo), int(hi)) for name, (lo, hi) in compute_k_boundary(stencil_ir).items()}


# -- the launch fast path --------------------------------------------------------------------
def run_arguments(
    stencil_object: Any,
    origin: tuple[int, ...],
    domain: tuple[int, ...],
    arguments: Mapping[str, Any],
) -> dict[str, Any]:
    """The keyword arguments of ``StencilObject.run`` for a call at ``origin``/``domain``:
    every field and parameter, per-field origins (the call origin restricted to the field's
    axes, as ``StencilObject._normalize_origins`` makes them), ``_domain_`` and
    ``exec_info``.  Internal: the signature of ``StencilObject.run`` and ``field_info`` /
    ``parameter_info`` (``axes``, ``data_dims``)."""
    origins = {}
    for name, info in stencil_object.field_info.items():
        if info is None:
            continue
        axes = ["IJK".index(a) for a in info.axes]
        origins[name] = tuple(origin[a] for a in axes) + (0,) * len(info.data_dims)
    fields = {name: arguments.get(name) for name in stencil_object.field_info}
    params = {name: arguments.get(name) for name in stencil_object.parameter_info}
    return {"_domain_": tuple(domain), "exec_info": None, "_origin_": origins, **fields, **params}


class _Recorder:
    """Stands in for a compiled stencil module while one call of ``run`` is recorded."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def run_computation(self, *args: Any) -> None:
        self.calls.append(args)


def compiled_launch(
    stencil_object: Any, run_kwargs: dict[str, Any]
) -> tuple[Callable[..., None], tuple[Any, ...]] | None:
    """For the GridTools and DaCe CPU backends: the compiled ``run_computation`` and the
    positional arguments ``stencil_object.run(**run_kwargs)`` passes it (domain, then each field
    with its origin), recorded from one call of ``run`` with the module swapped for a recorder.
    Calling the extension with them is what ``run`` does, minus building the same lists again.
    ``None`` where ``run`` is not that thin wrapper.  Internal: the generated ``run`` calls
    ``pyext_module.run_computation`` from its module globals."""
    backend = str(getattr(stencil_object, "backend", ""))
    if not (backend.startswith("gt:cpu") or backend == "dace:cpu"):
        return None
    run = type(stencil_object).run
    module = run.__globals__.get("pyext_module")
    if module is None or not hasattr(module, "run_computation"):
        return None
    recorder = _Recorder()
    run.__globals__["pyext_module"] = recorder
    try:
        stencil_object.run(**run_kwargs)
    finally:
        run.__globals__["pyext_module"] = module
    if len(recorder.calls) != 1:
        return None
    return module.run_computation, recorder.calls[0]


# -- SDFG transformations in the dace backends -----------------------------------------------
_sdfg_lock = threading.Lock()
_sdfg_options: dict[str, Callable[[Any, str], None]] = {}
#: Backend options that reach only the C++ compiler, not the SDFG.
_COMPILER_ONLY_OPTIONS = frozenset({"extra_opt_flags"})
#: How many lowered SDFGs a process keeps (see :class:`LoweredSDFGs`).
LOWERED_SDFG_CAPACITY = 8


class LoweredSDFGs:
    """Simplified SDFGs of stencils before any transformation of the options of
    :func:`install_sdfg_option`, the least recently used dropped beyond ``capacity``.

    A build with such an option deep-copies the SDFG lowered for an earlier build of the same
    stencil that differs only in that option or in compiler flags, instead of lowering it again
    (schedule tree, SDFG, two simplifications: seconds for a stencil with many regions). A
    tuning build worker tries many transformation lists on one stencil. The key is everything
    the lowering reads: the backend, a content hash of the stencil's GTIR, the other backend
    options (the OIR pipeline among them) and ``OMP_NUM_THREADS``, which decides whether the
    vertical loop is pushed inside. Internal: ``eve.utils.content_hash`` of GTIR nodes, and the
    lowering of :func:`install_sdfg_option`."""

    def __init__(self, capacity: int = LOWERED_SDFG_CAPACITY) -> None:
        self.capacity = capacity
        self.lowerings = 0
        self._sdfgs: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(backend: Any) -> str:
        builder = backend.builder
        opts = builder.options.backend_opts
        rest = sorted((k, repr(v)) for k, v in opts.items()
                      if k not in _sdfg_options and k not in _COMPILER_ONLY_OPTIONS)  # fmt: skip
        return eve.utils.content_hash(backend.name, builder.gtir, rest, os.environ.get("OMP_NUM_THREADS"))

    def sdfg(self, backend: Any) -> Any:
        """A fresh copy of ``backend``'s stencil lowered and simplified, as GT4Py's own code
        generation prepares it."""
        from gt4py.cartesian.backend import dace_backend as db

        key = self.key(backend)
        with self._lock:
            lowered = self._sdfgs.get(key)
            if lowered is not None:
                self._sdfgs.move_to_end(key)
        if lowered is None:
            lowered = copy.deepcopy(db.SDFGManager(backend.builder).sdfg_via_schedule_tree())
            db._specialize_transient_strides(lowered, backend.storage_info)
            lowered.simplify(validate=True, skip={"ScalarToSymbolPromotion"})
            with self._lock:
                self.lowerings += 1
                self._sdfgs[key] = lowered
                while len(self._sdfgs) > self.capacity:
                    self._sdfgs.popitem(last=False)
        return copy.deepcopy(lowered)

    def clear(self) -> None:
        with self._lock:
            self._sdfgs.clear()


#: The process's lowered SDFGs, used by the builds of :func:`install_sdfg_option`.
LOWERED_SDFGS = LoweredSDFGs()


def install_sdfg_option(option: str, transform: Callable[[Any, str], None]) -> None:
    """Add the versioned backend option ``option`` (a string) to the dace CPU backends: a
    stencil built with it has ``transform(sdfg, value)`` applied to its SDFG between
    simplification and code generation.  Because the option is versioned, each value gets its
    own entry in GT4Py's build cache; without it the original code path runs.  The simplified
    SDFG comes from :data:`LOWERED_SDFGS`, so builds of one stencil that differ only in these
    options lower it once per process.  Idempotent.
    Internal: ``dace_backend.DaceCPUBackend.options`` (and the KJI / k-first variants),
    ``DaCeExtGenerator.__call__``, ``SDFGManager.sdfg_via_schedule_tree``,
    ``_specialize_transient_strides``, ``DaCeComputationCodegen`` and ``DaCeBindingsCodegen``."""
    with _sdfg_lock:
        first = not _sdfg_options
        _sdfg_options[option] = transform
        from gt4py.cartesian.backend import dace_backend as db

        for cls in (db.DaceCPUBackend, db.DaceCPU_KJI, db.DaceCPUKFirstBackend):
            if option not in cls.options:
                cls.options = {**cls.options, option: {"versioning": True, "type": str}}  # type: ignore[misc]
        if not first:
            return
        original = db.DaCeExtGenerator.__call__

        def generate(self: Any) -> dict[str, dict[str, str]]:
            opts = self.backend.builder.options.backend_opts
            chosen = [(name, opts[name]) for name in _sdfg_options if opts.get(name)]
            if not chosen:
                return original(self)
            sdfg = LOWERED_SDFGS.sdfg(self.backend)
            for name, value in chosen:
                _sdfg_options[name](sdfg, value)
            sdfg.validate()
            implementation = db.DaCeComputationCodegen.apply(self.backend.builder, sdfg)
            bindings = db.DaCeBindingsCodegen.apply(sdfg, self.module_name, backend=self.backend)
            return {
                "computation": {"computation.hpp": implementation},
                "bindings": {"bindings.cpp": bindings},
            }

        db.DaCeExtGenerator.__call__ = generate  # type: ignore[method-assign]
        log.debug("installed the SDFG-transformation option %s into gt4py's dace backends", option)
