"""Generic inputs of a tuning target have the levels and dtypes its stencil declares: interface
fields one level longer than the compute domain, integer fields as integers."""

from __future__ import annotations

import os

import numpy as np
import pytest
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import FORWARD, computation, interval

from mapping.tuning.errors import TuningError
from mapping.tuning.schedule import Schedule
from mapping.tuning.targets import resolve
from mapping.tuning.worker import measure_one, reference_outputs, validate

HERE = __name__


def level_index(top: gtscript.Field[gtscript.IJ, np.int64], count: gtscript.Field[np.int64]):
    with computation(FORWARD):
        with interval(0, 1):
            count = top + 1
        with interval(1, None):
            count = count[0, 0, -1] + 1  # noqa: F841 (an output)


def reads_below(a: gtscript.Field[np.float64], b: gtscript.Field[np.float64]):
    with computation(FORWARD), interval(0, None):
        b = a[0, 0, -1]  # noqa: F841 (an output)


def test_interface_field_gets_one_more_level_and_runs(tmp_path) -> None:
    """fv3core's layer_thickness, ``dp2 = pe2(k+1) - pe2(k)``, reads the interface pressure one
    level past the last layer: ``pe2`` has nz + 1 levels, the layer fields nz, and the numpy
    build's output equals ``np.diff`` of the generated ``pe2`` (reference: NumPy)."""
    t = resolve("fv3core.vertical.remapping:layer_thickness")
    assert dict(t.field_levels) == {"pe2": 1}
    domain = t.domain(6, 5, 4)
    arrays = t.allocate(domain, seed=3)
    assert arrays["pe2"].shape == domain.shape[:2] + (5,)
    assert arrays["dp2"].shape == arrays["delp"].shape == domain.shape
    out = reference_outputs(t, domain, 3, str(tmp_path))
    want = np.diff(arrays["pe2"], axis=2)[domain.interior]
    np.testing.assert_allclose(out["dp2"][domain.interior], want, rtol=1e-15)
    np.testing.assert_allclose(out["delp"][domain.interior], want, rtol=1e-15)


def test_integer_fields_are_allocated_as_integers(tmp_path) -> None:
    """An int64 IJ input and an int64 output come out as int64 arrays of their axes; the count
    the stencil accumulates down the column is ``top + 1 + k`` (reference: NumPy on the
    allocated ``top``)."""
    t = resolve(f"{HERE}:level_index")
    assert dict(t.field_dtypes) == {"top": np.dtype("int64"), "count": np.dtype("int64")}
    assert not t.field_levels
    domain = t.domain(4, 3, 5)
    arrays = t.allocate(domain)
    assert arrays["top"].dtype == np.int64 and arrays["top"].shape == domain.shape[:2]
    assert arrays["count"].dtype == np.int64 and arrays["count"].shape == domain.shape
    out = reference_outputs(t, domain, 0, str(tmp_path))
    first = arrays["top"][domain.interior[:2]] + 1
    want = first[:, :, None] + np.arange(domain.nz)[None, None, :]
    np.testing.assert_array_equal(out["count"][domain.interior], want)


def test_a_read_below_the_first_level_is_refused_with_the_field_named() -> None:
    """Tuning runs every stencil from level 0, so a field read below it cannot be allocated:
    the error names the stencil, the field and the levels."""
    with pytest.raises(TuningError, match=r"reads_below.*field 'a' 1 level"):
        resolve(f"{HERE}:reads_below")


def test_interface_and_column_fields_validate_on_a_cpp_backend(tmp_path) -> None:
    """fv3core's energy_deficit reads ``pe``/``peln``/``pk`` one level past the last layer and writes
    column (IJ) fields: built with ``gt:cpu_ifirst`` (no bounds checks) it matches the numpy
    backend on every output (reference: GT4Py's numpy backend on the same inputs), and a
    perturbed column output is caught."""
    t = resolve("fv3core.vertical.energy_fixer:energy_deficit")
    assert dict(t.field_levels) == {"pe": 1, "peln": 1, "pk": 1} and t.field_axes["te"] == "IJ"
    domain = t.domain(8, 7, 5)
    reference = reference_outputs(t, domain, 0, str(tmp_path))
    cache = os.environ["STRATOFLOW_CACHE_DIR"]  # the suite's build cache (tests/conftest.py)
    rec = measure_one(t, Schedule("gt:cpu_ifirst"), domain, reference, cache, repeats=1, warmup=0)
    assert rec["status"] == "ok", rec.get("error")
    bad = {k: v.copy() for k, v in reference.items()}
    bad["te"][domain.halo + 1, domain.halo + 2] *= 1.0 + 1e-6
    assert "'te'" in validate(bad, reference, domain, t.field_axes)


def test_pressure_stencils_get_a_hydrostatic_column(tmp_path) -> None:
    """fv3core registers its pressure stencils' inputs (fv3core.tuning.inputs): interface_pressure
    on them gives ``pe = ptop + cumsum(delp)`` above each level and ``peln = log(pe)``
    (reference: NumPy on the allocated ``delp``), all finite and increasing downwards."""
    t = resolve("fv3core.stencils.geopk:interface_pressure")
    domain = t.domain(5, 4, 6)
    arrays = t.allocate(domain)
    assert (arrays["delp"] > 0).all() and t.scalars(domain) == {"ptop": 300.0}
    out = reference_outputs(t, domain, 0, str(tmp_path))
    want = 300.0 + np.concatenate([np.zeros((5, 4, 1)), np.cumsum(arrays["delp"], axis=2)[:, :, :-1]], axis=2)
    np.testing.assert_allclose(out["pe"], want, rtol=1e-14)
    np.testing.assert_allclose(out["peln"], np.log(want), rtol=1e-14)
    assert (np.diff(out["pe"], axis=2) > 0).all()


def test_map_layers_runs_its_level_search_on_the_column(tmp_path) -> None:
    """fv3core's remapping loop (map_layers, integer IJ fields ``lev``/``kk``, scalar ``km`` = the
    level count from the column maker) mapping the column onto itself: each target layer is the
    whole source layer, so ``q2`` is the mean of the PPM profile over it, ``(a2 + a3) / 2 + a4 /
    6`` (reference: the integral of FV3's PPM parabola, in NumPy on the allocated inputs), and the
    search ends in the last layer."""
    t = resolve("fv3core.vertical.remapping:map_layers[by_dp2=false,factored=false]")
    domain = t.domain(4, 3, 5)
    assert t.scalars(domain) == {"km": 5}
    arrays = t.allocate(domain, seed=1)
    assert arrays["pe1"].shape[2] == 6 and arrays["lev"].dtype == np.int64
    np.testing.assert_array_equal(arrays["pe1"], arrays["pe2"])
    out = reference_outputs(t, domain, 1, str(tmp_path))
    want = 0.5 * (arrays["a4_2"] + arrays["a4_3"]) + arrays["a4_4"] / 6.0
    np.testing.assert_allclose(out["q2"], want, rtol=1e-12)
    assert (out["lev"] == domain.nz - 1).all()
