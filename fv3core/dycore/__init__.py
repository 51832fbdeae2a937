"""FV3's dynamical core: dyn_core and fv_dynamics, shallow-water and hydrostatic 3-D."""
