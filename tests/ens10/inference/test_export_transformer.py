"""The ensemble Transformer exported as a stencil program (attention across the members at
each grid point) vs the PyTorch model in float64."""

from __future__ import annotations

import numpy as np
import pytest

from ens10.inference import ExportError, InferenceProgram, export_model
from ens10.inference.stacked import loops_supported
from tests.ens10.inference.models import (
    TRANSFORMER_MEMBERS,
    TRANSFORMER_SMALL,
    random_checkpoint,
    random_members,
    torch_reference,
)

TOL = 1e-12  # float64 on both sides: equal to rounding, relative to the output magnitude
MEMBERS = TRANSFORMER_MEMBERS
SMALL = TRANSFORMER_SMALL
_CACHE: dict = {}


def exported(loops: bool):
    if loops not in _CACHE:
        net, ckpt = random_checkpoint("transformer", **SMALL)
        _CACHE[loops] = (net, ckpt, export_model(net, ckpt, members=MEMBERS, loops=loops))
    return _CACHE[loops]


def check(backend: str) -> None:
    net, ckpt, ex = exported(loops_supported(backend))
    fields = random_members(ex.variables, ex.shape, members=MEMBERS)
    got = InferenceProgram(ex, backend)(fields)
    for a, r in zip(got, torch_reference(net, ckpt, fields, members=MEMBERS)):
        assert np.all(np.isfinite(a))
        np.testing.assert_allclose(a, r, rtol=0, atol=TOL * np.abs(r).max())


@pytest.mark.parametrize("backend", ["numpy", "debug"])
def test_matches_pytorch(backend):
    """Transformer (3 members, d_model 2, 2 heads, one post-norm encoder layer) vs the PyTorch
    model in float64 within 1e-12 of the output magnitude: numpy (unrolled) and debug
    (GTScript channel loops)."""
    check(backend)


def test_program_is_pointwise_and_reads_only_the_target():
    """One fused stencil after the ensemble statistics, halo 0, inputs: the target's members
    and the location features (reference: EnsembleTransformer.forward's inputs)."""
    ex = exported(False)[2]
    assert ex.halo == 0 and ex.variables == ("T",)
    assert ex.forecast_inputs == tuple(f"T_m{k}" for k in range(MEMBERS))
    assert len(ex.sources) == 2


def test_given_statistics_and_pre_norm_are_refused():
    """The Transformer reads the members, and only post-norm encoder layers are exported:
    ExportError says what to use."""
    net, ckpt = random_checkpoint("transformer", **SMALL)
    with pytest.raises(ExportError, match="stats='members'"):
        export_model(net, ckpt, members=MEMBERS, stats="given")
    net.encoder.layers[0].norm_first = True
    with pytest.raises(ExportError, match="post-norm"):
        export_model(net, ckpt, members=MEMBERS)


@pytest.mark.slow
def test_compiled_backend_matches_pytorch():
    """The Transformer with channel loops on gt:cpu_ifirst (C++, one fused stencil) vs PyTorch
    float64 within 1e-12 (slow: the fused stencil's C++ build takes 1-2 minutes here)."""
    check("gt:cpu_ifirst")
