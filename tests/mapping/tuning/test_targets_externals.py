"""Targets that carry GTScript externals in their names (fv3core's directional stencils)."""

from __future__ import annotations

import pytest
from gt4py.cartesian.gtscript import I, J

from mapping.tuning.errors import TuningError
from mapping.tuning.targets import (
    canonical,
    discover_all,
    format_value,
    names_for_externals,
    parse_value,
    resolve,
    split_name,
    target_externals,
)
from stencils.directions import X, Y


def test_names_round_trip_and_are_canonical() -> None:
    """Parsing then formatting gives back the canonical spelling (direction first, keys sorted)."""
    base, d, ext = split_name("m.od:f[iord=8, x]")
    assert (base, d, ext) == ("m.od:f", "x", {"iord": 8})
    assert canonical("m.od:f[iord=8, x]") == "m.od:f[x,iord=8]"
    assert canonical("m.od:f[sa=I[0]+1,DI=1,flag=true,c=0.5]") == "m.od:f[DI=1,c=0.5,flag=true,sa=I[0]+1]"
    for text in ("I[0]", "I[0]+1", "J[-1]-10000", "3", "0.25", "true"):
        assert format_value(parse_value(text)) == text
    assert canonical("hdiff") == "hdiff"


@pytest.mark.parametrize("bad", ["m:f[z]", "m:f[1x=3]", "m:f[a=I[[0]]", "m:f[a=nonsense]"])
def test_bad_names_say_what_to_write(bad: str) -> None:
    with pytest.raises(TuningError):
        split_name(bad)


def test_direction_externals_follow_the_one_convention() -> None:
    """A name's ``[x]``/``[y]`` externals are stencils.directions' (one definition): offsets
    one/two cells along the direction; edge regions on the first/last compute cell, spanning
    the whole other axis."""
    x, y = target_externals("x", {}), target_externals("y", {})
    assert x == X.externals() and y == Y.externals()
    assert (x["DI"], x["DJ"], x["DI2"], x["DJ2"]) == (1, 0, 2, 0)
    assert (y["DI"], y["DJ"], y["DI2"], y["DJ2"]) == (0, 1, 0, 2)
    assert format_value(x["sa"]) == "I[0]" and format_value(x["eb"]) == "I[-1]+1"
    assert format_value(x["sc"]) == "J[0]-10000" and format_value(y["ed"]) == "J[-1]+1"
    assert repr(x["ea"]) == repr(I[-1]) and repr(y["sc"]) == repr(J[0])


def test_build_externals_map_to_tuned_names() -> None:
    """A build's externals find the direction-named target first, then explicit, then bare."""
    ext = {**Y.externals(), "iord": 5}
    names = names_for_externals("m:f", ext)
    assert names[0] == "m:f[y,iord=5]" and names[-1] == "m:f"
    assert names_for_externals("m:f", {}) == ["m:f"]


def test_fv3core_directional_stencils_resolve_with_externals() -> None:
    """ppm_flux_stencil reads q up to 3 cells upstream once composed through its temporaries
    (al at -1 reads q at -2..+1, flux reads b0 at -1): halo 3, as FV3's; dxa is an IJ field."""
    t = resolve("fv3core.stencils.ppm:ppm_flux_stencil[iord=5,x]")
    assert t.name == "fv3core.stencils.ppm:ppm_flux_stencil[x,iord=5]"
    assert t.externals["iord"] == 5 and t.externals["DI2"] == 2
    assert t.halo == 3 and t.field_axes["dxa"] == "IJ" and t.outputs == ("flux",)
    with pytest.raises(TuningError, match=r"\[x\]"):
        resolve("fv3core.stencils.ppm:ppm_flux_stencil[iord=5]")  # needs DI/DJ: the hint names [x]


def test_discovery_lists_x_and_y_variants_of_fv3core() -> None:
    """Definitions outside the recorded corpus are scanned per axis and externals value; a
    definition in the corpus is tuned only as the variant the models build."""
    tunable, skipped = discover_all()
    ppm = [name for name in tunable if name.startswith("fv3core.stencils.ppm:ppm_flux_stencil")]
    assert len(ppm) == 1 and "iord=8" in ppm[0] and "DJ=1" in ppm[0]  # the recorded y sweep
    assert "fv3core.stencils.d_sw_advection:normal_wind_courant[x]" in tunable
    assert "fv3core.stencils.d_sw_advection:normal_wind_courant[y]" in tunable
    assert "fv3core.stencils.flux_divergence:apply_flux_divergence" in tunable
    for name, why in skipped.items():  # definitions needing other externals say how to name them
        assert "KEY=VALUE" in why, (name, why)


def test_tuned_factory_matches_externals_variants() -> None:
    """A build of ppm_flux_stencil with y offsets, hord 8 and subdomain-specific regions finds
    the schedule applied to '...[y,iord=8]' (and not the x one)."""
    from gt4py.cartesian.gtscript import I, J

    from fv3core.stencils.ppm import ppm_flux_stencil
    from mapping.tuning.factory import stencil_names

    regions = {"sa": I[0] - 10000, "sc": J[0] + 2, "sd": J[0] + 3}  # as fv3core builds them
    names = stencil_names(ppm_flux_stencil, {**Y.externals(), **regions, "iord": 8})
    base = "fv3core.stencils.ppm:ppm_flux_stencil"
    assert names[0] == f"{base}[y,iord=8]" and f"{base}[x,iord=8]" not in names and names[-1] == base
