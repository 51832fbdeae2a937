"""fv3core's tunable stencils (the ``stratoflow.tunable`` entry point, :mod:`mapping.tuning.registry`).

Every public module-level GTScript definition of :mod:`fv3core.stencils` and
:mod:`fv3core.vertical`. The definitions fv3core's models build are tuned as the variant the
models build most (``fv3core/tuning/corpus.json``, recorded by :mod:`fv3core.tuning.corpus`:
with the externals of FV3's 3-D hydrostatic and shallow-water cores). Of the others,
definitions that read ``iord`` are tuned once per PPM scheme fv3core runs (FV3 ``hord``,
``SUPPORTED_HORD``: 5 and 6 the unlimited fourth-order PPM, 8 the monotone limiter of Lin 2004,
10 Lin's modification of Huynh's constraint). The pressure stencils get the inputs of a
hydrostatic column (:mod:`fv3core.tuning.inputs`). Older tuning exports name targets by the
modules of their time: :data:`RENAMED` says where each is today.
"""

from fv3core.scheme_limits import SUPPORTED_HORD
from fv3core.tuning.corpus import load_corpus
from mapping.tuning.registry import Tunable

#: Definitions that take logarithms or powers of pressures, or search them: tuned on a
#: hydrostatic column.
PRESSURE_STENCILS = (
    "fv3core.stencils.geopk:geopotential",
    "fv3core.stencils.geopk:interface_pressure",
    "fv3core.vertical.remapping:eulerian_levels",
    "fv3core.vertical.remapping:map_layers",
)

#: the modules of older tuning exports (format 1) and where their definitions are today; the
#: C-D grid scheme that fv3core had beside FV3's is retired, and with it the definitions of
#: its modules (``c_sw``, ``d_sw``, ``divergence_damping``, ``del2cubed`` and ``fxadv``'s
#: ``courant_and_area_flux``), whose names FV3's routines now carry
RENAMED: dict[str, str | None] = {
    "fv3core.stencils.c_sw": None,
    "fv3core.stencils.d_sw": None,
    "fv3core.stencils.divergence_damping": None,
    "fv3core.stencils.del2cubed": None,
    "fv3core.stencils.transport:courant_and_area_flux": None,
    "fv3core.stencils.transport": "fv3core.stencils.fv_tp_2d",
    "fv3core.stencils.fv3_c_sw": "fv3core.stencils.c_sw",
    "fv3core.stencils.fv3_d_sw": "fv3core.stencils.d_sw",
    "fv3core.stencils.fv3_d2a2c": "fv3core.stencils.d2a2c_vect",
    "fv3core.stencils.fv3_deln_flux": "fv3core.stencils.deln_flux",
    "fv3core.stencils.fv3_delp_advection": "fv3core.stencils.d_sw_advection",
    "fv3core.stencils.fv3_divergence_damping": "fv3core.stencils.divergence_damping",
    "fv3core.stencils.fv3_pressure_gradient:geopotential": "fv3core.stencils.geopk",
    "fv3core.stencils.fv3_pressure_gradient:interface_pressure": "fv3core.stencils.geopk",
    "fv3core.stencils.fv3_pressure_gradient:layer_mean_pk": "fv3core.stencils.geopk",
    "fv3core.stencils.fv3_pressure_gradient": "fv3core.stencils.p_grad",
    "fv3core.stencils.fv3_regions": "fv3core.stencils.regions",
    "fv3core.stencils.fv3_tracer_2d": "fv3core.stencils.tracer_2d",
    "fv3core.stencils.fv3_xtp": "fv3core.stencils.xtp_u",
}

TUNABLE = Tunable(
    name="fv3core",
    modules=("fv3core.stencils", "fv3core.vertical"),
    externals={"iord": SUPPORTED_HORD},
    targets=load_corpus(),
    inputs={name: "fv3core.tuning.inputs:hydrostatic_field" for name in PRESSURE_STENCILS},
    renamed=RENAMED,
)
