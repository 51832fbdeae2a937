"""FV3's shallow-water dynamics in GTScript (:mod:`fv3core.dycore.shallow_water`, run by the driver
with FV3's scheme) against the NumPy transliteration of FV3's Fortran
(:mod:`tests.fv3core.transliteration`, which equals GFDL's Fortran FV3 to round-off on TC2:
tests/fv3core/test_fv3_transliteration.py) on the cases the Fortran reference does not cover:
Williamson TC5, TC6 and Galewsky's jet, each with the TC2 reference run's namelist with only
``test_case`` and the run length changed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fv3core.config import FV3Config
from fv3core.experiments.driver import run
from tests.fv3core.transliterated_run import assert_run_equals_transliteration

NAMELIST = Path(__file__).parent / "data" / "tc2_C24_d1_input.nml"
HOURS = 2


@pytest.mark.parametrize("case", ["williamson5", "williamson6", "galewsky"])
def test_case_equals_the_transliteration(case: str) -> None:
    """After 2 h (6 large steps of 2 acoustic steps, nord 2, d4_bg 0.12, hord 8) at C24: the
    GTScript core's depth and A-grid winds equal the transliteration's bit for bit, and mass is
    conserved to round-off (|relative change| < 1e-14)."""
    cfg = FV3Config.from_namelist(NAMELIST, case=case, days=HOURS / 24)
    assert_run_equals_transliteration(cfg)


@pytest.mark.slow
def test_compiled_backend_equals_numpy_and_fortran() -> None:
    """gt:cpu_ifirst, TC2 C24 after 6 h from the reference namelist: within the default suite's
    tolerances of the Fortran output (depth 1e-12 relative, winds 1e-10 m/s) and of the numpy
    backend's result (depth 1e-13 relative, winds 1e-11 m/s; the compiled ``exp`` of geopk
    differs from NumPy's in the last bit at some points, tests/fv3core/test_fv3_pressure_gradient.py)."""
    from fv3core.validation.extract import load_extract

    out = load_extract(Path(__file__).parent / "data" / "fv3_tc2_c24_6h.npz").output
    runs = {backend: run(FV3Config.from_namelist(NAMELIST, days=0.25, backend=backend),
                         progress=False) for backend in ("gt:cpu_ifirst", "numpy")}  # fmt: skip
    compiled, numpy_run = runs["gt:cpu_ifirst"], runs["numpy"]
    depth = compiled.fields["h"] - compiled.fields["surface"]
    assert np.abs(depth - out.depth).max() / np.abs(out.depth).max() < 1e-12
    numpy_depth = numpy_run.fields["h"] - numpy_run.fields["surface"]
    assert np.abs(depth - numpy_depth).max() / np.abs(numpy_depth).max() < 1e-13
    for name, fv3 in (("u", out.u), ("v", out.v)):
        assert np.abs(compiled.fields[name] - fv3).max() < 1e-10
        assert np.abs(compiled.fields[name] - numpy_run.fields[name]).max() < 1e-11
