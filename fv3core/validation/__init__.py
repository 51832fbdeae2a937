"""Validation of fv3core against GFDL's Fortran FV3: the reference runs of
``../shared/fv3-reference`` (:mod:`~fv3core.validation.reference`), the norms FV3 prints
(:mod:`~fv3core.validation.norms`) and the small committed extract CI compares against
(:mod:`~fv3core.validation.extract`).  docs/fv3core/validation.md has the comparison."""

from fv3core.validation.norms import (
    ALL_NAMES,
    GRAVITY,
    INVARIANT_NAMES,
    NORM_NAMES,
    Invariants,
    ShallowWaterFields,
    agreeing_digits,
    coriolis,
    dgrid_vorticity,
    global_sum,
    invariants,
    sw_norms,
)
from fv3core.validation.reference import (
    FV3Reference,
    NormTable,
    ReferenceGrid,
    ReferenceState,
    parse_norms,
    reference_root,
    reference_runs,
)

__all__ = [
    "ALL_NAMES",
    "GRAVITY",
    "INVARIANT_NAMES",
    "NORM_NAMES",
    "FV3Reference",
    "Invariants",
    "NormTable",
    "ReferenceGrid",
    "ReferenceState",
    "ShallowWaterFields",
    "agreeing_digits",
    "coriolis",
    "dgrid_vorticity",
    "global_sum",
    "invariants",
    "parse_norms",
    "reference_root",
    "reference_runs",
    "sw_norms",
]
