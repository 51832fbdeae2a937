"""The error of the ENS-10 inference exporter (shown to users without a traceback)."""

from __future__ import annotations

from ens10.errors import ENS10DataError


class ExportError(ENS10DataError):
    """A checkpoint, model layer or data set cannot be exported or post-processed as a stencil
    program; the message names the model, layer, file or field and what to do instead."""
