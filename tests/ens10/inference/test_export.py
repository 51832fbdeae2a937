"""Exported stencil programs vs PyTorch inference of the same baselines on the same inputs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ens10.inference import ExportError, InferenceProgram, export_model
from stencils import COMPILED_BACKENDS
from tests.ens10.inference.models import random_checkpoint, random_members, torch_reference

# float64 on both sides: the stencil program and the PyTorch model (.double()) agree to rounding
TOL = 1e-12
SMALL = {"mlp": {"hidden": 4}, "lenet": {"hidden": 4, "channels": 2}}
_CACHE: dict = {}


def exported(model: str, target: str = "t850", stats: str = "members"):
    key = (model, target, stats)
    if key not in _CACHE:
        net, ckpt = random_checkpoint(model, target, **SMALL.get(model, {}))
        _CACHE[key] = (net, ckpt, export_model(net, ckpt, stats=stats))
    return _CACHE[key]


def check(model: str, backend: str, target: str = "t850", sst_land: bool = False) -> None:
    net, ckpt, ex = exported(model, target)
    fields = random_members(ex.variables, ex.shape, sst_land=sst_land)
    mu, sigma = InferenceProgram(ex, backend)(fields)
    ref_mu, ref_sigma = torch_reference(net, ckpt, fields)
    assert np.all(np.isfinite(mu)) and np.all(sigma > 0)
    np.testing.assert_allclose(mu, ref_mu, rtol=0, atol=TOL * np.abs(ref_mu).max())
    np.testing.assert_allclose(sigma, ref_sigma, rtol=0, atol=TOL * np.abs(ref_sigma).max())


@pytest.mark.parametrize("model", ["emos", "emos_global", "mlp", "lenet"])
def test_numpy_backend_matches_pytorch(model):
    """Stencil program (numpy backend) vs the PyTorch model in float64, ensemble mean/std of
    the same random members: equal within 1e-12 of the output magnitude."""
    check(model, "numpy")


def test_surface_target_with_sea_mask_matches_pytorch():
    """t2m MLP: SST members NaN over 'land' -> sea mask channel and NaN -> 0 predictors, as in
    ens10.baselines.data; vs PyTorch float64 within 1e-12."""
    check("mlp", "numpy", target="t2m", sst_land=True)


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


def test_debug_backend():
    """EMOS on the debug backend vs PyTorch float64 within 1e-12."""
    check("emos", "debug")


def test_compiled_backend_emos():
    """Local EMOS (members -> stats -> EMOS with parameter fields) on gt:cpu_ifirst (C++) vs
    PyTorch float64 within 1e-12."""
    check("emos", "gt:cpu_ifirst")


@pytest.mark.slow
@pytest.mark.parametrize("backend", COMPILED_BACKENDS)
def test_compiled_backends_mlp_lenet(backend):
    """Global EMOS, the MLP and LeNet on every C++ backend vs PyTorch float64 within 1e-12."""
    check("emos_global", backend)
    check("mlp", backend)
    check("lenet", backend)


def test_unsupported_models_fail_clearly():
    """U-Net is not exportable; an MLP with a Tanh is not either: ExportError names them."""
    net, ckpt = random_checkpoint("unet")
    with pytest.raises(ExportError, match="supported models are emos, emos_global, mlp, lenet"):
        export_model(net, ckpt)
    net, ckpt = random_checkpoint("mlp", hidden=4)
    net.net[1] = torch.nn.Tanh()
    with pytest.raises(ExportError, match="Tanh"):
        export_model(net, ckpt)
