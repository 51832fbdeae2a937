"""The U-Net exported as a stencil program (coarse levels "a trous", zero padding as masks)
vs the PyTorch model in float64."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ens10.inference import ExportError, InferenceProgram, export_model
from ens10.inference.stacked import loops_supported
from ens10.inference.unet_export import HALO, UNetGeometry
from stencils.storage import Domain
from tests.ens10.inference.models import (
    UNET_SMALL,
    random_checkpoint,
    random_members,
    torch_reference,
)

TOL = 1e-12  # float64 on both sides: equal to rounding, relative to the output magnitude
SMALL = UNET_SMALL
_CACHE: dict = {}


def exported(loops: bool):
    if loops not in _CACHE:
        net, ckpt = random_checkpoint("unet", **SMALL)
        _CACHE[loops] = (net, ckpt, export_model(net, ckpt, loops=loops))
    return _CACHE[loops]


def assert_matches(got: tuple[np.ndarray, np.ndarray], ref: tuple[np.ndarray, np.ndarray]) -> None:
    for a, r in zip(got, ref):
        assert np.all(np.isfinite(a))
        np.testing.assert_allclose(a, r, rtol=0, atol=TOL * np.abs(r).max())


def check(backend: str) -> None:
    net, ckpt, ex = exported(loops_supported(backend))
    fields = random_members(ex.variables, ex.shape)
    assert_matches(InferenceProgram(ex, backend)(fields), torch_reference(net, ckpt, fields))


def test_numpy_backend_matches_pytorch():
    """U-Net (6 x 10 grid, padded to 8 x 12 by replication; three levels, skip connections) on
    the numpy backend vs the PyTorch model in float64: equal within 1e-12 of the output
    magnitude."""
    check("numpy")


def test_halo_contents_do_not_matter():
    """The zero padding is a mask and the replicate padding is computed, so a halo of NaN
    (forecast and static fields) gives the same outputs as the spherical padding, and both
    equal the PyTorch model (float64) within 1e-12."""
    net, ckpt, ex = exported(False)
    fields = random_members(ex.variables, ex.shape)
    run = InferenceProgram(ex, "numpy")
    h = ex.halo
    padded = {}
    for name in ex.field_inputs:
        a = np.full((ex.shape[0] + 2 * h, ex.shape[1] + 2 * h), np.nan)
        a[h:-h, h:-h] = fields[name] if name in fields else ex.static[name]
        padded[name] = a
    got = run(padded, padded=True)
    np.testing.assert_array_equal(got[0], run(fields)[0])
    assert_matches(got, torch_reference(net, ckpt, fields))


def test_halo_is_the_receptive_field():
    """The analysed halo of the generated program is 26: replicate padding 3, then the reach
    of the two 3x3 convolutions per level (1, 2, 4 cells), the pools and the upsamplings."""
    ex = exported(False)[2]
    assert ex.halo == HALO == 26
    assert max(ex.program.required_halo().values()) == 26
    assert "unet_inside" not in ex.field_inputs and "unet_inside" in ex.program.inputs


def test_geometry_masks():
    """Masks for a 6 x 10 field (padded to 8 x 12): inside, replicate weights (one copy per
    point of the padded field), parities of level 0 and 1 (reference: UNet.forward's padding)."""
    geo = UNetGeometry()(Domain(6, 10, 1, 3))
    inner = (slice(3, 11), slice(3, 15))
    assert geo["unet_inside"].sum() == 8 * 12 and geo["unet_inside"][inner].all()
    assert geo["unet_valid"].sum() == 6 * 10
    reps = sum(geo[f"unet_rep_i{d}"] for d in range(4))
    np.testing.assert_array_equal(reps[:, 5], geo["unet_inside"][:, 5])
    assert geo["unet_rep_i2"][3 + 7].all() and not geo["unet_rep_i2"][3 + 6].any()
    np.testing.assert_array_equal(geo["unet_par1_j"][0, 3:11], [0, 0, 1, 1, 0, 0, 1, 1])


def test_unsupported_unet_layers_fail_clearly():
    """A U-Net with circular padding in a convolution is not the exported architecture:
    ExportError names the layer."""
    net, ckpt = random_checkpoint("unet", **SMALL)
    net.enc2[0].padding_mode = "circular"
    with pytest.raises(ExportError, match=r"enc2\[0\]"):
        export_model(net, ckpt)


@pytest.mark.slow
def test_compiled_backend_matches_pytorch():
    """The U-Net with GTScript channel loops on gt:cpu_ifirst vs PyTorch float64 within 1e-12
    (slow: 18 C++ stencil builds, about 5 minutes here)."""
    check("gt:cpu_ifirst")


def test_checkpoint_loads_as_supported(tmp_path):
    """load_model accepts a U-Net checkpoint (reference: ens10.train's checkpoint format)."""
    from ens10.inference import load_model

    net, ckpt = random_checkpoint("unet", step=36.0)  # default width: the training config has no width
    torch.save(ckpt, tmp_path / "unet_t850.pt")
    got, _ = load_model(tmp_path / "unet_t850.pt")
    assert type(got).__name__ == "UNet"
