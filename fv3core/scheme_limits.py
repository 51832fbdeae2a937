"""The option values fv3core's schemes accept, importable without GT4Py (config checks)."""

#: FV3 ``hord`` values (PPM flux limiters) that fv3core's PPM implements
SUPPORTED_HORD = (5, 6, 8, 10)

#: largest d4_bg accepted: the explicit del4 step is stable for nu4 * dt * max|eig|^2 < 2,
#: max|eig| ~ 8 / da_min on the corner grid, i.e. d4_bg < 1 / sqrt(32) ~ 0.177
MAX_D4_BG = 0.16
