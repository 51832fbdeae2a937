"""The one exception of :mod:`mapping.spatial`."""

from __future__ import annotations


class StencilFlowError(ValueError):
    """A StencilFlow program, mapping or simulation problem.

    The message names the offending stencil/field/channel and says what to do.
    """
