"""SDFG transformations of a schedule on a real stencil's SDFG (no compilation).

Reference: DaCe's own ``Vectorization.can_be_applied_to`` on the SDFG GT4Py generates for
fv3core's ``ppm_flux_stencil`` (dace:cpu_kfirst, ``OnTheFlyMerging`` skipped), where it applies to
2 of 18 maps.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest

import mapping.tuning.sdfg_transforms as st
from mapping.tuning.building import compile_definition
from mapping.tuning.schedule import Schedule
from mapping.tuning.targets import resolve

PPM = (
    "fv3core.stencils.ppm:ppm_flux_stencil[DI=0,DI2=0,DJ=1,DJ2=2,ea=I[0]-10000,eb=I[-1]+10000,"
    "ec=J[0]+11,ed=J[0]+12,iord=8,sa=I[0]-10000,sb=I[-1]+10000,sc=J[0],sd=J[0]+1]"
)


class _Captured(Exception):
    def __init__(self, sdfg: Any) -> None:
        super().__init__("captured")
        self.sdfg = sdfg


def _sdfg_before_vectorize(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The SDFG the ``vectorize`` step receives in a real GT4Py build (stopped there)."""

    def capture(sdfg: Any, width: int = 4) -> int:
        raise _Captured(sdfg)

    monkeypatch.setitem(st.TRANSFORMS, "vectorize", capture)
    target = resolve(PPM)
    s = Schedule("dace:cpu_kfirst", oir_skip=("OnTheFlyMerging",), sdfg=(("vectorize", (("width", 4),)),))
    with pytest.raises(_Captured) as got:
        compile_definition(target.definition, target.externals, s, tmp_path, rebuild=True)
    monkeypatch.undo()
    return got.value.sdfg


def _applicable(sdfg: Any) -> int:
    from dace.sdfg import nodes
    from dace.transformation.dataflow import Vectorization

    return sum(
        Vectorization.can_be_applied_to(state.sdfg, options={"vector_len": 4}, map_entry=node)
        for node, state in sdfg.all_nodes_recursive()
        if isinstance(node, nodes.MapEntry)
    )


def test_vectorize_applies_once_per_map_and_ends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``vectorize`` returns the number of maps Vectorization applies to (2 here), ends within
    a minute (DaCe's repeated application does not end: each remainder map it adds matches
    again), and leaves a valid SDFG whose only maps that still
    match are those remainder maps."""
    sdfg = _sdfg_before_vectorize(tmp_path, monkeypatch)
    before = _applicable(sdfg)
    assert before == 2

    def too_long(*_: object) -> None:
        raise TimeoutError("vectorize did not end within 60 s")

    old = signal.signal(signal.SIGALRM, too_long)
    signal.alarm(60)
    try:
        assert st.vectorize(sdfg, width=4) == before
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    sdfg.validate()
    assert _applicable(sdfg) == before  # one scalar remainder map per vectorized map
