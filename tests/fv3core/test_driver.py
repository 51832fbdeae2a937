"""The FV3 driver: configuration errors, decomposition-independent (bitwise) results, output."""

from __future__ import annotations

import numpy as np
import pytest

from fv3core.config import FV3Config
from fv3core.errors import FV3ConfigError
from fv3core.experiments.driver import run
from fv3core.output.netcdf import write_netcdf

#: FV3's TC1 at C12 for 6 hours: 6 steps of 3600 s, 2 acoustic steps each (its namelist's)
SMALL = {"resolution": 12, "days": 0.25, "dt": 3600.0, "n_split": 2}


def test_config_errors_name_the_problem(tmp_path) -> None:
    """User mistakes raise FV3ConfigError naming the key/value and the fix."""
    with pytest.raises(FV3ConfigError, match="williamson7"):
        FV3Config(case="williamson7")
    with pytest.raises(FV3ConfigError, match="not divisible by layout 5"):
        FV3Config(resolution=12, layout=5)
    with pytest.raises(FV3ConfigError, match="hord=3"):
        FV3Config(hord=3)
    with pytest.raises(FV3ConfigError, match=r"unknown key\(s\) \['resoluton'\]"):
        FV3Config.from_dict({"resoluton": 24})
    with pytest.raises(FV3ConfigError, match="unstable"):
        FV3Config(resolution=12, dt=1e6).steps_for(5e-5)
    with pytest.raises(FV3ConfigError, match=r"days=0.0001 \(8.64 s\) is shorter than half a "
                       r"time step \(dt = 1200 s\): ask for at least 0.0138889 days"):  # fmt: skip
        FV3Config(days=1e-4).steps_for(1e-5)
    assert FV3Config(days=0.01).steps_for(1e-5) == (1, 1200.0)  # 864 s: one step, said in a warning
    cfg = tmp_path / "run.yaml"
    cfg.write_text("case: williamson1\nresolution: 24\nhord: 5\n")
    assert FV3Config.from_yaml(cfg) == FV3Config(resolution=24, hord=5)
    cfg.write_text("- not a mapping\n")
    with pytest.raises(FV3ConfigError, match="mapping"):
        FV3Config.from_yaml(cfg)


def test_layouts_give_bitwise_identical_fields() -> None:
    """6 ranks (layout 1) and 24 ranks (layout 2), all in-process, give bit-for-bit the same h
    (same arithmetic per point; halos from the exchange equal the neighbours' interiors)."""
    a = run(FV3Config(layout=1, alpha=1.5, **SMALL), progress=False)
    b = run(FV3Config(layout=2, alpha=1.5, **SMALL), progress=False)
    assert a.steps == b.steps
    np.testing.assert_array_equal(a.fields["h"], b.fields["h"])


def test_netcdf_output_is_cf_and_plot_draws(tmp_path) -> None:
    """The output has CF units/standard names, dims (time, tile, y, x), and round-trips h
    exactly; the plot command writes a PNG."""
    import xarray as xr

    from fv3core.output.plots import plot_field

    result = run(FV3Config(**SMALL), progress=False)
    path = write_netcdf(result, tmp_path / "out.nc")
    with xr.open_dataset(path) as ds:
        assert ds["h"].dims == ("time", "tile", "y", "x")
        assert ds["h"].attrs["units"] == "m"
        assert ds["lat"].attrs["standard_name"] == "latitude"
        np.testing.assert_array_equal(ds["h"].values[0], result.fields["h"].transpose(0, 2, 1))
    png = plot_field(path, "h", tmp_path / "h.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(FV3ConfigError, match="no variable 'ps'"):
        plot_field(path, "ps")  # a shallow-water run has no surface pressure
    assert not list(tmp_path.glob(".*"))  # no temporary files left behind


@pytest.mark.parallel(nprocs=6)
def test_mpi_6_ranks_bitwise_equal_to_in_process() -> None:
    """mpiexec -n 6 (one rank per process, MPIComm) gives bit-for-bit the in-process result."""
    cfg = FV3Config(alpha=1.5, **SMALL)
    mpi_result = run(cfg, mpi=True, progress=False)
    if mpi_result.is_root:
        local = run(cfg, mpi=False, progress=False)
        np.testing.assert_array_equal(mpi_result.fields["h"], local.fields["h"])
