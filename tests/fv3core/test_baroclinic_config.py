"""FV3Config for FV3's 3-D core (cases baroclinic, baroclinic_steady): the keys it fills with
FV3's hydrostatic JW options (the Fortran reference runs' namelist,
tests/fv3core/data/fortran/jw_C24_L26/input.nml) and the refusals, each naming its key."""

from __future__ import annotations

import pytest

from fv3core.config import BAROCLINIC_DEFAULTS, FV3Config
from fv3core.errors import FV3ConfigError


def test_baroclinic_defaults_are_fv3s_jw_options() -> None:
    """Missing keys are FV3's JW options; given keys win; the options objects carry them."""
    cfg = FV3Config.from_dict({"case": "baroclinic", "resolution": 24, "dt": 3600.0})
    assert (cfg.nz, cfg.k_split, cfg.n_split, cfg.hord_tm, cfg.hord_tr) == (26, 2, 4, 10, 8)
    assert (cfg.kord_mt, cfg.kord_tm, cfg.kord_tr, cfg.d2_bg_k1, cfg.d2_bg_k2) == (8, -8, 8, 0.15, 0.02)
    assert cfg.resolution == 24 and cfg.dt == 3600.0 and cfg.is_3d
    o = cfg.dynamics_options()
    assert o.k_split == 2 and o.dyn_core.n_split == 4 and o.dyn_core.is_ideal_case
    assert BAROCLINIC_DEFAULTS["nord"] == 1 and cfg.constants == "ufs"


@pytest.mark.parametrize("changes, key", [
    ({"nz": 3}, "nz=3"), ({"nz": 29}, "nz=29"), ({"dynamics": "fv3"}, "'dynamics'"),
    ({"kord_mt": 7}, "kord_mt=7"), ({"kord_tr": -8}, "kord_tr=-8"),
    ({"do_vort_damp": True, "vtdm4": 0.05}, "do_vort_damp"), ({"hord_tr": 9}, "hord_tr=9"),
    ({"d2_bg_k1": -1.0}, "d2_bg_k1"), ({"consv_te": 5.0}, "consv_te=5.0: .* use a value <= 1"),
    ({"d4_bg": 1.0}, "d4_bg=1.0: .* 0 <= d4_bg <= 0.16"),
])  # fmt: skip
def test_3d_refusals_name_the_key(changes, key) -> None:
    with pytest.raises(FV3ConfigError, match=key.replace("(", r"\(")):
        FV3Config.from_dict({"case": "baroclinic", **changes})


@pytest.mark.parametrize("changes, key", [({"nz": 26}, "nz=26"), ({"k_split": 2}, "k_split=2"),
                                          ({"kord_tm": 9}, "kord_tm=9"), ({"hord_tm": 5}, "hord_tm=5")])
def test_shallow_water_refuses_3d_keys(changes, key) -> None:
    with pytest.raises(FV3ConfigError, match=key):
        FV3Config.from_dict({"case": "williamson2", **changes})


def test_non_hydrostatic_keys_reach_the_options() -> None:
    """hydrostatic=False: FV3's non-hydrostatic keys (defaults a_imp 0.75, p_fac 0.05, kord_wz 8)
    reach NonHydrostaticOptions; hydrostatic: none."""
    assert FV3Config.from_dict({"case": "baroclinic"}).dynamics_options().nonhydrostatic is None
    cfg = FV3Config.from_dict({"case": "baroclinic", "hydrostatic": False, "a_imp": 1.0, "use_logp": True})
    nh = cfg.dynamics_options().nonhydrostatic
    assert (nh.a_imp, nh.p_fac, nh.use_logp, nh.kord_wz, nh.rf_cutoff) == (1.0, 0.05, True, 8, 3000.0)


@pytest.mark.parametrize("changes, key", [
    ({"a_imp": 0.3}, "RIM_2D"), ({"consv_te": 1.0}, "consv_te=1.0 with hydrostatic=False"),
    ({"kord_wz": 7}, "kord_wz=7"),
    ({"p_fac": 1.5}, "p_fac=1.5"), ({"fast_tau_w_sec": -1.0}, "fast_tau_w_sec=-1.0"),
])  # fmt: skip
def test_non_hydrostatic_refusals_name_the_key(changes, key) -> None:
    with pytest.raises(FV3ConfigError, match=key):
        FV3Config.from_dict({"case": "baroclinic", "hydrostatic": False, **changes})


def test_shallow_water_is_hydrostatic() -> None:
    with pytest.raises(FV3ConfigError, match="hydrostatic=False"):
        FV3Config.from_dict({"case": "williamson2", "hydrostatic": False})
