"""GTScript stencils and the classes that run them (one class per FV3 routine)."""

# stencils.config sets the compiler flags gt4py reads once at import (c++20 for dace): import it
# before any module here imports gt4py, so builds are identical however fv3core is entered.
import stencils.config  # noqa: F401
