"""Exported stencil programs vs PyTorch inference of the same baselines on the same inputs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ens10.inference import ExportError, InferenceProgram, export_model
from ens10.inference.stacked import loops_supported
from stencils import COMPILED_BACKENDS
from tests.ens10.inference.models import random_checkpoint, random_members, torch_reference

# float64 on both sides: the stencil program and the PyTorch model (.double()) agree to rounding
TOL = 1e-12
SMALL = {"mlp": {"hidden": 4}, "lenet": {"hidden": 4, "channels": 2}}
_CACHE: dict = {}


def exported(model: str, target: str = "t850", stats: str = "members", layout: str = "stacked",
             loops: bool = False):
    key = (model, target, stats, layout, loops)
    if key not in _CACHE:
        net, ckpt = random_checkpoint(model, target, **SMALL.get(model, {}))
        _CACHE[key] = (net, ckpt, export_model(net, ckpt, stats=stats, layout=layout, loops=loops))
    return _CACHE[key]


def check(model: str, backend: str, target: str = "t850", sst_land: bool = False, layout: str = "stacked") -> None:
    net, ckpt, ex = exported(model, target, layout=layout, loops=loops_supported(backend))
    fields = random_members(ex.variables, ex.shape, sst_land=sst_land)
    mu, sigma = InferenceProgram(ex, backend)(fields)
    ref_mu, ref_sigma = torch_reference(net, ckpt, fields)
    assert np.all(np.isfinite(mu)) and np.all(sigma > 0)
    np.testing.assert_allclose(mu, ref_mu, rtol=0, atol=TOL * np.abs(ref_mu).max())
    np.testing.assert_allclose(sigma, ref_sigma, rtol=0, atol=TOL * np.abs(ref_sigma).max())


@pytest.mark.parametrize("layout", ["stacked", "fields"])
@pytest.mark.parametrize("model", ["emos", "emos_global", "mlp", "lenet"])
def test_numpy_backend_matches_pytorch(model, layout):
    """Stencil program (numpy backend; stacked layout with unrolled channels, and the
    one-field-per-channel layout) vs the PyTorch model in float64, ensemble mean/std of the
    same random members: equal within 1e-12 of the output magnitude."""
    check(model, "numpy", layout=layout)


@pytest.mark.parametrize("backend", ["numpy", "debug"])
def test_surface_target_with_sea_mask_matches_pytorch(backend):
    """t2m MLP: SST members NaN over 'land' -> sea mask channel and NaN -> 0 predictors, as in
    ens10.baselines.data; vs PyTorch float64 within 1e-12 (debug: channel loops)."""
    check("mlp", backend, target="t2m", sst_land=True)


def test_given_statistics_match_members_path():
    """stats='given' (preprocessed mean/std in) equals the members path when fed the numpy
    population mean/std of the same members (within 1e-12)."""
    _, _, ex_m = exported("mlp")
    _, _, ex_g = exported("mlp", stats="given")
    fields = random_members(ex_m.variables, ex_m.shape)
    given = {}
    for v in ex_g.variables:
        m = np.stack([fields[f"{v}_m{k}"] for k in range(10)])
        given[f"{v}_mean"], given[f"{v}_std"] = m.mean(0), m.std(0)
    a = InferenceProgram(ex_m)(fields)
    b = InferenceProgram(ex_g)(given)
    for x, y in zip(a, b):
        np.testing.assert_allclose(x, y, rtol=0, atol=TOL * np.abs(y).max())


def test_halo_is_accumulated_over_the_lenet_chain():
    """conv3 (1) + pool (1) + dilated conv (3) = 4 = the 9x9 patch radius; pointwise models 0."""
    assert exported("lenet")[2].halo == 4
    assert exported("lenet")[2].program.required_halo()["T_m0"] == 4
    assert exported("mlp")[2].halo == 0


@pytest.mark.parametrize("model", ["emos", "mlp", "lenet"])
def test_debug_backend(model):
    """The stacked layout with GTScript channel loops on the debug backend vs PyTorch float64
    within 1e-12."""
    check(model, "debug")


@pytest.mark.parametrize("model", ["emos", "mlp"])
def test_compiled_backend(model):
    """Local EMOS (members -> stats -> EMOS with parameter fields) and the MLP (channel loops
    over data-dimension fields, weights as GlobalTables) on gt:cpu_ifirst (C++) vs PyTorch
    float64 within 1e-12."""
    check(model, "gt:cpu_ifirst")


@pytest.mark.slow
@pytest.mark.parametrize("model", ["emos_global", "mlp", "lenet"])
@pytest.mark.parametrize("backend", COMPILED_BACKENDS)
def test_compiled_backends_mlp_lenet(backend, model):
    """Global EMOS, the MLP and LeNet (stacked layout, channel loops) on every C++ backend vs
    PyTorch float64 within 1e-12."""
    check(model, backend)


def test_weights_are_tables_and_builds_are_shared():
    """Stacked layout: the generated sources do not depend on the weights (two checkpoints of
    one architecture give identical stencils, so one build serves both) and the weights are
    the program's GlobalTable parameters, equal to the PyTorch tensors."""
    net_a, ckpt_a = random_checkpoint("lenet", seed=0, **SMALL["lenet"])
    net_b, ckpt_b = random_checkpoint("lenet", seed=5, **SMALL["lenet"])
    a, b = export_model(net_a, ckpt_a), export_model(net_b, ckpt_b)
    assert a.sources == b.sources
    tables = a.program.tables
    np.testing.assert_array_equal(tables["conv2_w"], net_a.features[3].weight.detach().double().numpy())
    assert not np.array_equal(tables["conv2_w"], b.program.tables["conv2_w"])
    assert a.forecast_inputs == b.forecast_inputs and "conv2_w" not in a.forecast_inputs


def test_channel_loops_need_a_backend_that_indexes_them():
    """The numpy backend cannot index data dimensions with loop counters: a clear ExportError
    says to export with loops=False."""
    _, _, ex = exported("mlp", loops=True)
    with pytest.raises(ExportError, match="loops=False"):
        InferenceProgram(ex, "numpy")


class _Persistence(torch.nn.Module):
    """A hand-made baseline outside the exported architectures: the raw ensemble."""

    def forward(self, x, mean, std, members=None):
        return mean, std


def test_unsupported_models_fail_clearly():
    """A model outside the six baselines is not exportable; an MLP with a Tanh is not either:
    ExportError names them (reference: the supported PyTorch layer patterns)."""
    _, ckpt = random_checkpoint("mlp", hidden=4)
    with pytest.raises(ExportError, match="supported models are emos, emos_global, mlp, lenet, unet, transformer"):
        export_model(_Persistence(), dict(ckpt, model="persistence"))
    net, ckpt = random_checkpoint("mlp", hidden=4)
    net.net[1] = torch.nn.Tanh()
    with pytest.raises(ExportError, match="Tanh"):
        export_model(net, ckpt)
