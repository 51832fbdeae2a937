"""fv3core: the FV3 finite-volume cubed-sphere dynamical core in GTScript (see docs/fv3core)."""
