"""ENS-10 post-processing baselines as stencil programs.

Trained EMOS, MLP and LeNet checkpoints are exported to :class:`stencils.program.StencilProgram`
objects of generated GTScript stencils (:mod:`ens10.inference.exporter`), run on any GT4Py
backend (:mod:`ens10.inference.runner`), applied to ENS-10 forecasts with CF-netCDF output
(:mod:`ens10.inference.postprocess`), mapped to StencilFlow (:mod:`ens10.inference.dataflow`) and
decomposed over MPI ranks (:mod:`ens10.inference.distributed`). This is the one place in ens10
that imports ``stencils`` and ``mapping``; core ens10 never imports it.
"""

import importlib
from typing import Any

from ens10.inference.errors import ExportError

# The public names, imported on first use so that building the CLI parser stays cheap
# (the exporter pulls in gt4py, dace and torch).
_LAZY = {
    "SUPPORTED_MODELS": "exporter",
    "ExportedModel": "exporter",
    "export_checkpoint": "exporter",
    "export_model": "exporter",
    "load_model": "exporter",
    "PostprocessConfig": "postprocess",
    "postprocess": "postprocess",
    "InferenceProgram": "runner",
    "pad_sphere": "runner",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"ens10.inference.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'ens10.inference' has no attribute {name!r}")


__all__ = ["ExportError", *_LAZY]
