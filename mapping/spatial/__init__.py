"""StencilFlow: DAGs of heterogeneous stencils mapped onto spatial (FPGA) hardware.

Layers: model (:mod:`.model`, :mod:`.expr`) -> analysis (:mod:`.analysis`, :mod:`.partition`)
-> backends (:mod:`.reference`, :mod:`.simulator`, :mod:`.hls`, :mod:`.sdfg`).
"""

from mapping.spatial.errors import CapacityError, StencilFlowError

__all__ = ["CapacityError", "StencilFlowError"]
