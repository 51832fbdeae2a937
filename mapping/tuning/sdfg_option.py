"""The ``stratoflow_sdfg`` build option: a schedule's SDFG transformations in GT4Py's dace
backends.

A schedule with SDFG transformations builds its stencil with the backend option
:data:`SDFG_OPTION`, the JSON list of ``[transformation, parameters]`` pairs; the option is
versioned, so each list gets its own entry in GT4Py's build cache.
:func:`stencils.gt4py_internals.install_sdfg_option` registers it with the dace CPU backends;
:func:`mapping.tuning.sdfg_transforms.apply_transforms` applies the list.
"""

from __future__ import annotations

import json
from typing import Any

SDFG_OPTION = "stratoflow_sdfg"


def _apply(sdfg: Any, value: str) -> None:
    from mapping.tuning.sdfg_transforms import apply_transforms

    apply_transforms(sdfg, json.loads(value))


def install() -> None:
    """Register :data:`SDFG_OPTION` with the dace CPU backends (idempotent)."""
    from stencils.gt4py_internals import install_sdfg_option

    install_sdfg_option(SDFG_OPTION, _apply)
