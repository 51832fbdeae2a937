"""The exceptions of :mod:`mapping.spatial`."""

from __future__ import annotations


class StencilFlowError(ValueError):
    """A StencilFlow program, mapping or simulation problem.

    The message names the offending stencil/field/channel and says what to do.
    """


class CapacityError(StencilFlowError):
    """A program (or one stencil) needs more on-chip memory, operators or link bandwidth than
    the devices offer; the message names the device, its capacity and the need."""
