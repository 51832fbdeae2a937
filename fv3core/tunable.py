"""fv3core's tunable stencils (the ``stratoflow.tunable`` entry point, :mod:`mapping.tuning.registry`).

Every public module-level GTScript definition of :mod:`fv3core.stencils` and
:mod:`fv3core.vertical`. The definitions fv3core's models build are tuned as the variant the
models build most (``fv3core/tuning_corpus.json``, recorded by :mod:`fv3core.tuning_corpus`:
with the externals of FV3's 3-D hydrostatic and shallow-water cores). Of the others,
definitions that read ``iord`` are tuned once per PPM scheme fv3core runs (FV3 ``hord``,
``SUPPORTED_HORD``: 5 and 6 the unlimited fourth-order PPM, 8 the monotone limiter of Lin 2004,
10 Lin's modification of Huynh's constraint), and ``fxadv`` (``courant_and_area_flux``) once per
kind of face wind it takes (``normal_wind``). The pressure stencils get the inputs of a
hydrostatic column (:mod:`fv3core.tuning_inputs`).
"""

from fv3core.scheme_limits import SUPPORTED_HORD
from fv3core.tuning_corpus import load_corpus
from mapping.tuning.registry import Tunable

#: Definitions that take logarithms or powers of pressures, or search them: tuned on a
#: hydrostatic column.
PRESSURE_STENCILS = (
    "fv3core.stencils.fv3_pressure_gradient:geopotential",
    "fv3core.stencils.fv3_pressure_gradient:interface_pressure",
    "fv3core.vertical.remapping:eulerian_levels",
    "fv3core.vertical.remapping:map_layers",
)

TUNABLE = Tunable(
    name="fv3core",
    modules=("fv3core.stencils", "fv3core.vertical"),
    externals={"iord": SUPPORTED_HORD, "normal_wind": (False, True)},
    targets=load_corpus(),
    inputs={name: "fv3core.tuning_inputs:hydrostatic_field" for name in PRESSURE_STENCILS},
)
