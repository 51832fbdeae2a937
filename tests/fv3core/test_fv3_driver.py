"""``stratoflow fv3 run --namelist`` with FV3's scheme against GFDL's
Fortran FV3.

Reference: the Fortran model's output and printed SWNORMS/SWINV norms of TC2 at C24 after 6 h
(``tests/fv3core/data/fv3_tc2_c24_6h.npz``, extracted from ``../shared/fv3-reference/tc2_C24_d1``
by ``python -m fv3core.validation.extract``), run from that reference run's own ``input.nml``
(``tests/fv3core/data/tc2_C24_d1_input.nml``, the file whose sha256 the extract records)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from fv3core.config import FV3Config
from fv3core.errors import FV3ConfigError
from fv3core.experiments.driver import RunResult, log_printout, printout_steps, run
from fv3core.validation.extract import ReferenceExtract, load_extract

DATA = Path(__file__).parent / "data"
NAMELIST = DATA / "tc2_C24_d1_input.nml"
EXTRACT = DATA / "fv3_tc2_c24_6h.npz"
#: fv3core's diagnostic of each printed FV3 norm
NORMS = {"h_l1": "l1", "h_l2": "l2", "h_linf": "linf", "v_l1": "wind_l1", "v_l2": "wind_l2",
         "v_linf": "wind_linf", "Hmin": "h_min", "Hmax": "h_max"}  # fmt: skip
INVARIANTS = {"energy_n": "energy_relative_change", "enstr_n": "enstrophy_relative_change"}


@pytest.fixture(scope="module")
def reference() -> ReferenceExtract:
    return load_extract(EXTRACT)


@pytest.fixture(scope="module")
def six_hours() -> RunResult:
    return run(FV3Config.from_namelist(NAMELIST, days=0.25, print_freq=3), progress=False)


def test_namelist_is_the_reference_runs_own(reference: ReferenceExtract) -> None:
    """The committed namelist is byte for byte the one the extract was made from."""
    (source,) = [s for s in reference.metadata["sources"] if s["name"] == "input.nml"]
    assert hashlib.sha256(NAMELIST.read_bytes()).hexdigest() == source["sha256"]


def test_tc2_c24_6h_fields_equal_fortran_fv3(six_hours: RunResult,
                                             reference: ReferenceExtract) -> None:  # fmt: skip
    """Depth within 1e-12 relative and A-grid winds within 1e-10 m/s of FV3's output after 6 h
    (measured 1.2e-15 and 1.9e-13 m/s); grid centres and areas are FV3's exactly."""
    assert (six_hours.steps, six_hours.dt) == (18, 1200.0)
    assert six_hours.diagnostics["acoustic_dt"] == 600.0
    out = reference.output
    depth = six_hours.fields["h"] - six_hours.fields["surface"]
    assert np.abs(depth - out.depth).max() / np.abs(out.depth).max() < 1e-12
    for ours, fv3 in ((six_hours.fields["u"], out.u), (six_hours.fields["v"], out.v)):
        assert np.abs(ours - fv3).max() < 1e-10
    np.testing.assert_array_equal(six_hours.area, reference.area)
    np.testing.assert_array_equal(six_hours.lon, reference.lon)


def test_tc2_c24_6h_norms_equal_fv3s_printed(six_hours: RunResult,
                                             reference: ReferenceExtract) -> None:  # fmt: skip
    """The run's diagnostics are FV3's printed SWNORMS/SWINV: error norms, Hmin/Hmax and the
    energy/enstrophy changes to 1e-9 relative (measured agreement: 13 digits and more), the mass
    change to 1e-15 absolute (it is round-off, -2.1e-16 in both)."""
    d, printed = six_hours.diagnostics, reference.printed
    for fv3, ours in {**NORMS, **INVARIANTS}.items():
        assert d[ours] == pytest.approx(printed[fv3], rel=1e-9), fv3
    assert abs(d["mass_relative_change"] - printed["mass_n"]) < 1e-15


def test_layouts_give_bitwise_identical_fields(six_hours: RunResult) -> None:
    """24 ranks (layout 2, in-process) give bit for bit the 6-rank result."""
    cfg = FV3Config.from_namelist(NAMELIST, days=0.25, layout=2)
    b = run(cfg, progress=False)
    for name in ("h", "u", "v", "vorticity"):
        np.testing.assert_array_equal(b.fields[name], six_hours.fields[name], err_msg=name)


@pytest.mark.parallel(nprocs=6)
def test_mpi_6_ranks_bitwise_equal_to_in_process() -> None:
    """mpiexec -n 6 (one rank per process) gives bit for bit the in-process result (one large
    step: every halo update of FV3's acoustic loop)."""
    cfg = FV3Config.from_namelist(NAMELIST, days=1200 / 86400)
    mpi_result = run(cfg, mpi=True, progress=False)
    if mpi_result.is_root:
        local = run(cfg, mpi=False, progress=False)
        for name in ("h", "u", "v"):
            np.testing.assert_array_equal(mpi_result.fields[name], local.fields[name])


def test_fv3_scheme_refuses_what_it_does_not_run() -> None:
    """Keys FV3's scheme in fv3core does not honour are refused by name."""
    with pytest.raises(FV3ConfigError, match="hord_mt=7"):
        FV3Config.from_namelist(NAMELIST, hord_mt=7)
    with pytest.raises(FV3ConfigError, match="nz=2"):
        FV3Config.from_namelist(NAMELIST, nz=2)


def test_print_freq_gives_fv3s_printouts(six_hours: RunResult, caplog) -> None:
    """print_freq = 3 h over 6 h: printouts at t = 0, 3 h and 6 h, the last equal to the run's
    final diagnostics; t = 0 has zero errors (FV3's SWNORMS are against the state at t = 0);
    each is logged as one line."""
    import logging

    assert [t for t, _ in six_hours.printouts] == [0.0, 10800.0, 21600.0]
    assert six_hours.printouts[0][1]["l2"] == 0.0
    last = six_hours.printouts[-1][1]
    for key in ("l1", "l2", "linf", "wind_l2", "energy_relative_change", "h_min"):
        assert last[key] == six_hours.diagnostics[key], key
    with caplog.at_level(logging.INFO, logger="fv3core.experiments.driver"):
        log_printout("williamson2", 10800.0, six_hours.printouts[1][1])
    (record,) = caplog.records
    assert record.getMessage().startswith("williamson2 day=0.125000 h l1=")
    assert (printout_steps(6, 1200.0), printout_steps(-4, 1200.0), printout_steps(0, 1.0)) == (
        18, 4, 0)  # fmt: skip
