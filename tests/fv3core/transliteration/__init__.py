"""A NumPy transliteration of FV3's Fortran shallow-water routines (GFDL_atmos_cubed_sphere
``model/sw_core.F90``, ``tp_core.F90``, ``a2b_edge.F90``, ``dyn_core.F90``), loop by loop in
FV3's own index space, with FV3's order of floating-point operations.

It is the executable reference of fv3core's FV3 scheme: it is compared against the Fortran
model's output (``../shared/fv3-reference``) and the GTScript routines are tested against it.
Arrays are :class:`tests.fv3core.transliteration.farray.FArray` views with FV3's index bounds
(``isd = 1 - ng`` ...), so each statement reads like the Fortran it ports.
"""
