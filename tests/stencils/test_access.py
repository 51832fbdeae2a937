"""Access analysis from GTIR against GT4Py's own extent analysis and hand-derived footprints."""

import pytest

from stencils import StencilFactory
from stencils.access import analyse
from stencils.library import LIBRARY


@pytest.mark.parametrize("name", list(LIBRARY))
def test_extents_agree_with_gt4py(name):
    """Reference: GT4Py's field_info boundaries (its own extent analysis) must equal the min/max
    of the offsets our analysis composes through temporaries, for every field of every stencil."""
    lib = LIBRARY[name]
    acc = analyse(lib.definition)
    info = StencilFactory("numpy")(lib.definition).stencil_object.field_info
    for field, offsets in acc.reads.items():
        boundary = info[field].boundary
        for axis in range(2):  # horizontal extents (k extents are not tracked by field_info the same way)
            lo = max(0, -min(o[axis] for o in offsets))
            hi = max(0, max(o[axis] for o in offsets))
            assert (lo, hi) == tuple(boundary[axis]), (field, axis, offsets)
    assert set(acc.writes) == set(lib.outputs)


def test_hdiff_footprint_is_the_13_point_diamond():
    """Hand-derived: COSMO hdiff reads in_field on the diamond |di| + |dj| <= 2 (13 points)."""
    acc = analyse(LIBRARY["hdiff"].definition)
    diamond = {(i, j, 0) for i in range(-2, 3) for j in range(-2, 3) if abs(i) + abs(j) <= 2}
    assert acc.reads["in_field"] == diamond
    assert acc.reads["coeff"] == {(0, 0, 0)}


def test_vadv_is_a_column_sweep():
    acc = analyse(LIBRARY["vadv"].definition)
    assert acc.loop_orders == {"forward", "backward"}
    assert acc.vertical_dependency
    assert acc.scalars == ("dt_dz",)
