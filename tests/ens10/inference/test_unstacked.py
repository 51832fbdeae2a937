"""The stacked stages of the U-Net and the Transformer written out one field per channel
(``layout="fields"``, :mod:`ens10.inference.unstacked`): the program StencilFlow maps. Their
values against PyTorch are checked through the StencilFlow simulation and the HLS C-simulation
in ``test_dataflow.py``; here the rewriting itself."""

from __future__ import annotations

import numpy as np
import pytest

from ens10.inference import export_model
from ens10.inference.unstacked import channel_name
from tests.ens10.inference.models import (
    TRANSFORMER_MEMBERS,
    TRANSFORMER_SMALL,
    UNET_SMALL,
    random_checkpoint,
)


@pytest.fixture(scope="module")
def unet_layouts():
    net, ckpt = random_checkpoint("unet", **UNET_SMALL)
    return net, export_model(net, ckpt, loops=False), export_model(net, ckpt, layout="fields")


def test_channel_names():
    """Channel (2, 0) of ``qkv`` is the field ``qkv_2_0``; a table entry names its external alike."""
    assert channel_name("qkv", (2, 0)) == "qkv_2_0" and channel_name("enc1_w0", "0, 3, 1, 2") == "enc1_w0_0_3_1_2"


def test_unet_fields_layout_has_only_scalar_fields_and_weights_as_externals(unet_layouts):
    """Same stencils as the unrolled stacked program (same fusion), no data dimensions, no
    tables; every weight of enc1's first convolution is an external with the model's value
    (reference: the PyTorch weight tensor)."""
    net, stacked, fields = unet_layouts
    assert [a.label for a in fields.program.accesses()] == [a.label for a in stacked.program.accesses()]
    assert fields.layout == "fields" and not fields.loops and fields.halo == stacked.halo == 26
    source = "\n".join(fields.sources.values())
    assert "GlobalTable" not in source and ".A[" not in source and "][" not in source
    ext = {k: v for e in fields.program.externals().values() for k, v in e.items()}
    w = net.enc1[0].weight.detach().double().numpy()
    for idx in np.ndindex(w.shape):
        assert ext[channel_name("enc1a_w0", idx)] == w[idx]
    assert set(fields.program.geometry_fields) <= set(fields.program.inputs)


def test_unet_fields_layout_channels_are_program_fields(unet_layouts):
    """Every channel of every layer output is a temporary of its own: enc2 (width 1: 2
    channels) gives ``enc2_y_0`` and ``enc2_y_1``, and no stacked name is left."""
    _, stacked, fields = unet_layouts
    temps = set(fields.program.temporaries)
    assert {"enc2_y_0", "enc2_y_1"} <= temps and "enc2_y" not in temps
    assert not getattr(fields.program, "data_dims", {})
    n_channels = sum(int(np.prod(d)) for d in stacked.program.data_dims.values())
    assert len(temps) <= n_channels + len(stacked.program.temporaries)


def test_transformer_fields_layout_is_one_stencil_after_the_statistics():
    """The Transformer stays one fused pointwise stencil (halo 0) after the ensemble statistics."""
    net, ckpt = random_checkpoint("transformer", **TRANSFORMER_SMALL)
    ex = export_model(net, ckpt, members=TRANSFORMER_MEMBERS, layout="fields")
    assert ex.halo == 0 and len(ex.program.accesses()) == 2 and ex.layout == "fields"
