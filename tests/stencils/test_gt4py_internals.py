"""The GT4Py internals stratoflow relies on, one test each (stencils.gt4py_internals), and that
no other module of the project touches GT4Py internals.

References: GT4Py's own public behaviour (a stencil called through ``__call__`` is the
reference for the ``run`` fast path), and the internals' documented shapes as of gt4py 1.1.12.
A failure here after a GT4Py upgrade names the internal that moved."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import FORWARD, PARALLEL, computation, interval

from stencils import gt4py_internals as gi
from stencils.errors import StencilError
from stencils.factory import StencilFactory
from stencils.storage import from_numpy, to_numpy

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("stencils", "mapping", "fv3core", "ens10", "workflows", "benchmarks")
#: GT4Py modules that are internals (anything but gtscript, storage and the package roots)
INTERNAL_PREFIXES = ("gt4py.cartesian.gtc", "gt4py.cartesian.backend", "gt4py.cartesian.config",
                     "gt4py.cartesian.frontend", "gt4py.cartesian.stencil_object", "gt4py.eve")  # fmt: skip


def scale(a: gtscript.Field[np.float64], b: gtscript.Field[np.float64], k: float):
    with computation(PARALLEL), interval(...):
        b = k * a[1, 0, 0]  # noqa: F841 (the stencil's output)


def test_configure_builds_sets_cache_and_compile_flags(tmp_path, monkeypatch) -> None:
    """Internal: gt4py.cartesian.config.cache_settings, GT4PY_EXTRA_COMPILE_ARGS and
    build_settings['extra_compile_args']['cxx'] (reference: the values passed)."""
    from gt4py.cartesian import config as gt_config

    monkeypatch.setenv("GT4PY_EXTRA_COMPILE_ARGS", "-std=c++20 -DSTRATOFLOW_TEST")
    saved = (dict(gt_config.cache_settings), gt_config.GT4PY_EXTRA_COMPILE_ARGS)
    try:
        gi.configure_builds(tmp_path, "cache_name")
        assert gt_config.cache_settings["root_path"] == str(tmp_path)
        assert gt_config.cache_settings["dir_name"] == "cache_name"
        assert gt_config.GT4PY_EXTRA_COMPILE_ARGS == "-std=c++20 -DSTRATOFLOW_TEST"
        assert gi.CXX20 in gt_config.build_settings["extra_compile_args"]["cxx"]
    finally:
        gt_config.cache_settings.update(saved[0])
        gt_config.GT4PY_EXTRA_COMPILE_ARGS = saved[1]


def test_oir_pipeline_without_skips_the_named_pass() -> None:
    """Internal: DefaultPipeline.all_steps() and DefaultPipeline(skip=...)."""
    names = gi.oir_pass_names()
    assert "OnTheFlyMerging" in names
    pipeline = gi.oir_pipeline_without(["OnTheFlyMerging"])
    assert [p.__name__ for p in pipeline.steps] == [n for n in names if n != "OnTheFlyMerging"]
    with pytest.raises(StencilError, match="unknown GT4Py OIR passes"):
        gi.oir_pipeline_without(["NoSuchPass"])


def test_parse_gtir_and_the_node_classes_the_analyses_walk() -> None:
    """Internal: lazy_stencil(...).builder.gtir, gtscript._set_arg_dtypes, and the GTIR / common /
    eve names stencils.access, mapping.tuning.features and mapping.spatial.bridge use (reference:
    the definition's own parameters and statement)."""
    ir = gi.parse_gtir(scale)
    assert isinstance(ir, gi.gtir.Stencil)
    assert [p.name for p in ir.params] == ["a", "b", "k"]
    assert isinstance(ir.params[0], gi.gtir.FieldDecl) and isinstance(ir.params[2], gi.gtir.ScalarDecl)
    loop = ir.vertical_loops[0]
    assert loop.loop_order == gi.common.LoopOrder.PARALLEL
    assert loop.interval.start.level == gi.common.LevelMarker.START
    stmt = loop.body[0]
    assert isinstance(stmt, gi.gtir.ParAssignStmt) and stmt.left.name == "b"
    reads = list(stmt.right.walk_values().if_isinstance(gi.gtir.FieldAccess))
    assert [(r.name, r.offset.i, r.offset.j, r.offset.k) for r in reads] == [("a", 1, 0, 0)]
    assert reads[0].data_index == []
    for name in ("BinaryOp", "UnaryOp", "TernaryOp", "NativeFuncCall", "Cast", "Literal",
                 "ScalarAccess", "FieldIfStmt", "ScalarIfStmt", "HorizontalRestriction", "While",
                 "BlockStmt", "Interval", "VariableKOffset"):  # fmt: skip
        assert hasattr(gi.gtir, name), name
    assert issubclass(gi.eve.NodeVisitor, object) and hasattr(gi.eve.NodeVisitor, "visit")
    with pytest.raises(StencilError, match="does not parse"):
        gi.parse_gtir(lambda a: None)


def interfaces(pe: gtscript.Field[np.float64], dp: gtscript.Field[np.float64],
               top: gtscript.Field[np.float64]):
    with computation(FORWARD):
        with interval(0, 1):
            top = pe  # noqa: F841 (an output)
        with interval(1, None):
            dp = pe[0, 0, 1] - pe[0, 0, -1]  # noqa: F841 (an output)


def test_k_boundary_counts_levels_beyond_the_compute_domain() -> None:
    """Internal: gtc.passes.gtir_k_boundary.compute_k_boundary (reference: the offsets and
    intervals written in ``interfaces``: ``pe`` is read one level past the last level and, from
    the second level, one level back, which stays inside the domain; ``dp`` is written from the
    second level only, one level inside the domain's bottom edge)."""
    assert gi.k_boundary(gi.parse_gtir(interfaces)) == {"pe": (0, 1), "dp": (-1, 0), "top": (0, 0)}
    assert gi.k_boundary(gi.parse_gtir(scale)) == {"a": (0, 0), "b": (0, 0)}


def test_evaluated_annotations_leave_the_definition_as_it_was() -> None:
    """Internal: gtscript._set_arg_dtypes evaluates postponed (string) annotations; this module
    has ``from __future__ import annotations``, so the definition's own are strings."""
    before = dict(scale.__annotations__)
    got = gi.evaluated_annotations(scale)
    assert isinstance(before["a"], str) and not isinstance(got["a"], str)
    assert got["k"] is float
    assert scale.__annotations__ == before


def test_run_arguments_drive_stencil_object_run_like_call() -> None:
    """Internal: StencilObject.run(_domain_, exec_info, _origin_, fields..., params...) and
    field_info/parameter_info.  Reference: the same stencil through its checked __call__."""
    stencil = StencilFactory("numpy")(scale)
    obj = stencil.stencil_object
    rng = np.random.default_rng(0)
    a = rng.standard_normal((8, 6, 3))
    ref_b, got_b = from_numpy(np.zeros_like(a), "numpy"), from_numpy(np.zeros_like(a), "numpy")
    stencil(a=from_numpy(a, "numpy"), b=ref_b, k=2.5, origin=(1, 1, 0), domain=(5, 4, 3))
    kwargs = gi.run_arguments(obj, (1, 1, 0), (5, 4, 3), {"a": from_numpy(a, "numpy"), "b": got_b,
                                                          "k": 2.5})  # fmt: skip
    assert kwargs["_origin_"] == {"a": (1, 1, 0), "b": (1, 1, 0)}
    obj.run(**kwargs)
    np.testing.assert_array_equal(to_numpy(got_b), to_numpy(ref_b))
    assert gi.compiled_launch(obj, kwargs) is None  # numpy: no compiled extension


def test_compiled_launch_records_what_run_passes_its_extension() -> None:
    """Internal: the generated ``run`` calls ``pyext_module.run_computation`` from its module's
    globals.  A stand-in object with that structure is recorded exactly (the real GridTools
    extension path is checked bitwise in tests/stencils/test_launch.py)."""
    calls: list[tuple] = []
    namespace: dict = {"pyext_module": type("Ext", (), {
        "run_computation": staticmethod(lambda *args: calls.append(args))})}  # fmt: skip
    exec("def run(self, **kw):\n    pyext_module.run_computation(kw['_domain_'], kw['x'])",
         namespace)  # fmt: skip
    fake = type("FakeStencil", (), {"backend": "gt:cpu_ifirst", "run": namespace["run"]})()
    launch = gi.compiled_launch(fake, {"_domain_": (2, 2, 1), "x": "field"})
    assert launch is not None and calls == []
    function, args = launch
    assert args == ((2, 2, 1), "field")
    function(*args)
    assert calls == [((2, 2, 1), "field")]


def test_install_sdfg_option_registers_a_versioned_backend_option() -> None:
    """Internal: dace_backend.DaceCPUBackend (and KJI, k-first) ``options`` and
    ``DaCeExtGenerator.__call__`` (builds through the option are tested end to end by the tuning
    tests that apply SDFG transformations)."""
    from gt4py.cartesian.backend import dace_backend as db

    seen: list = []
    gi.install_sdfg_option("stratoflow_test_option", lambda sdfg, value: seen.append(value))
    for cls in (db.DaceCPUBackend, db.DaceCPU_KJI, db.DaceCPUKFirstBackend):
        assert cls.options["stratoflow_test_option"] == {"versioning": True, "type": str}
    assert db.DaCeExtGenerator.__call__.__name__ == "generate"
    for name in ("SDFGManager", "_specialize_transient_strides", "DaCeComputationCodegen",
                 "DaCeBindingsCodegen"):  # fmt: skip
        assert hasattr(db, name), name


def _omp_schedule(sdfg, value: str) -> None:
    """Test transformation: every map's OpenMP schedule set to ``value``; ``keep`` changes nothing."""
    from dace import dtypes
    from dace.sdfg import nodes

    for node, _ in sdfg.all_nodes_recursive() if value != "keep" else ():
        if isinstance(node, nodes.MapEntry):
            node.map.omp_schedule = dtypes.OMPScheduleType[value]


def _dace_code(backend_opts: dict) -> list[str]:
    """The lines of C++ GT4Py generates for ``scale`` on ``dace:cpu`` with ``backend_opts`` (not
    compiled), sorted, with the object ids GT4Py puts into loop variable names
    (``__k_140251383193360``, different in any two lowerings) and the stencil ID's hash in the
    module name replaced. Sorted, because GT4Py's own order of the local declarations differs
    between an SDFG it lowers and one it loads from its ``.sdfgz`` cache file."""
    from gt4py.cartesian.backend import dace_backend as db
    from gt4py.cartesian.definitions import BuildOptions
    from gt4py.cartesian.stencil_builder import StencilBuilder

    original = scale.__annotations__
    scale.__annotations__ = gi.evaluated_annotations(scale)  # as gtscript.stencil evaluates them
    try:
        builder = StencilBuilder(scale, backend="dace:cpu",
                                 options=BuildOptions(name="scale", module=__name__, backend_opts=backend_opts))  # fmt: skip
        sources = db.DaCeExtGenerator(builder.class_name, builder.module_name, builder.backend)()
    finally:
        scale.__annotations__ = original
    code = sources["computation"]["computation.hpp"] + sources["bindings"]["bindings.cpp"]
    return sorted(re.sub(r"_(\d{9,}|[0-9a-f]{10})(?=\b|_)", "_ID", code).splitlines())


def test_sdfg_option_builds_reuse_the_lowered_sdfg_and_generate_the_same_code(monkeypatch) -> None:
    """Internal: ``DaCeExtGenerator`` and ``StencilBuilder``/``BuildOptions``. Builds that differ
    only in an SDFG-transformation option lower the stencil once (:data:`LOWERED_SDFGS`), and each
    generates the same C++ as a build that lowers afresh (reference: the same build after
    ``LOWERED_SDFGS.clear()``). The transformation of one build must not leak into the next:
    ``keep`` after ``Dynamic`` from the kept SDFG equals ``keep`` lowered anew. Another OIR
    pipeline is another lowering."""
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    gi.install_sdfg_option("stratoflow_test_schedule", _omp_schedule)
    lowered = gi.LOWERED_SDFGS
    lowered.clear()
    start = lowered.lowerings
    dynamic = _dace_code({"stratoflow_test_schedule": "Dynamic", "extra_opt_flags": "-O2"})
    kept = _dace_code({"stratoflow_test_schedule": "keep", "extra_opt_flags": "-O3"})
    assert lowered.lowerings == start + 1
    assert any("dynamic" in line for line in dynamic) and not any("dynamic" in line for line in kept)
    lowered.clear()
    assert _dace_code({"stratoflow_test_schedule": "keep"}) == kept
    _dace_code({"stratoflow_test_schedule": "keep", "oir_pipeline": gi.oir_pipeline_without(["OnTheFlyMerging"])})
    assert lowered.lowerings == start + 3


def _internal_imports(path: Path) -> list[str]:
    found = []
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id == "gtscript" and node.attr.startswith("_"):
            modules = [f"gtscript.{node.attr}"]  # a private gtscript name
            found.append(f"{path.relative_to(ROOT)}:{node.lineno} {modules[0]}")
            continue
        else:
            continue
        for m in modules:
            if m.startswith(INTERNAL_PREFIXES):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {m}")
                break
    return found


def test_no_module_but_gt4py_internals_touches_gt4py_internals() -> None:
    """Every import of a GT4Py internal module (and every private gtscript name) in the
    project's packages is in stencils/gt4py_internals.py (reference: an AST scan)."""
    offenders = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path == ROOT / "stencils" / "gt4py_internals.py":
                continue
            offenders += _internal_imports(path)
    assert not offenders, "GT4Py internals outside stencils/gt4py_internals.py:\n" + "\n".join(offenders)
    assert _internal_imports(ROOT / "stencils" / "gt4py_internals.py")  # the scan sees them
