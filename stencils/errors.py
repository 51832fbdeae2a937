"""The stencils package's error."""


class StencilError(ValueError):
    """A stencil cannot be built or run as asked; the message names the field and requirement."""
