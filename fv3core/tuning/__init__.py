"""fv3core's stencils as tuning targets (the stratoflow.tunable entry point)."""
