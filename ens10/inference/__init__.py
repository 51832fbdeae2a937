"""ENS-10 post-processing baselines as stencil programs (issue 9).

Trained EMOS, MLP and LeNet checkpoints are exported to :class:`stencils.program.StencilProgram`
objects of generated GTScript stencils (:mod:`ens10.inference.exporter`), run on any GT4Py
backend (:mod:`ens10.inference.runner`), applied to ENS-10 forecasts with CF-netCDF output
(:mod:`ens10.inference.postprocess`), mapped to StencilFlow (:mod:`ens10.inference.dataflow`) and
decomposed over MPI ranks (:mod:`ens10.inference.distributed`). This is the one place in ens10
that imports ``stencils`` and ``mapping``; core ens10 never imports it.
"""

from ens10.inference.errors import ExportError
from ens10.inference.exporter import (
    SUPPORTED_MODELS,
    ExportedModel,
    export_checkpoint,
    export_model,
    load_model,
)
from ens10.inference.postprocess import PostprocessConfig, postprocess
from ens10.inference.runner import InferenceProgram, pad_sphere

__all__ = [
    "SUPPORTED_MODELS",
    "ExportError",
    "ExportedModel",
    "InferenceProgram",
    "PostprocessConfig",
    "export_checkpoint",
    "export_model",
    "load_model",
    "pad_sphere",
    "postprocess",
]
