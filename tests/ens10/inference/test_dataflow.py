"""Exported programs as StencilFlow DAGs: JSON, streaming simulation and HLS C-simulation vs
PyTorch, and the buffer/throughput report at 0.5 degree."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ens10.inference import ExportError, export_model
from ens10.inference.dataflow import GLOBAL_HALF_DEGREE, DataflowExport
from mapping.spatial.model import load_program
from tests.ens10.inference.models import (
    TRANSFORMER_MEMBERS,
    TRANSFORMER_SMALL,
    UNET_SMALL,
    random_checkpoint,
    random_members,
    torch_reference,
)

SMALL = {"mlp": {"hidden": 4}, "lenet": {"hidden": 4, "channels": 2}, "unet": UNET_SMALL,
         "transformer": TRANSFORMER_SMALL}
MEMBERS = {"transformer": TRANSFORMER_MEMBERS}


@pytest.fixture(scope="module", params=["emos", "mlp", "lenet", "unet", "transformer"])
def case(request):
    """U-Net and Transformer: their stacked stages written out one field per channel
    (ens10.inference.unstacked)."""
    net, ckpt = random_checkpoint(request.param, **SMALL.get(request.param, {}))
    members = MEMBERS.get(request.param, 10)
    ex = export_model(net, ckpt, layout="fields", members=members)
    fields = random_members(ex.variables, ex.shape, members=members)
    return net, ckpt, ex, fields, torch_reference(net, ckpt, fields, members=members)


def test_stacked_layout_is_refused():
    """StencilFlow streams one field per channel: a stacked export fails with an ExportError
    that says which layout to use."""
    net, ckpt = random_checkpoint("mlp", **SMALL["mlp"])
    with pytest.raises(ExportError, match="layout='fields'"):
        DataflowExport(export_model(net, ckpt))


def test_streaming_simulation_matches_pytorch(case):
    """Cycle-level StencilFlow simulation of the DAG vs PyTorch float64 within 1e-12 of the
    output magnitude (interior of the padded field)."""
    _, _, ex, fields, (ref_mu, ref_sigma) = case
    mu, sigma = DataflowExport(ex).simulate(fields)
    np.testing.assert_allclose(mu, ref_mu, rtol=0, atol=1e-12 * np.abs(ref_mu).max())
    np.testing.assert_allclose(sigma, ref_sigma, rtol=0, atol=1e-12 * np.abs(ref_sigma).max())


def test_hls_csimulation_matches_pytorch(case, tmp_path):
    """The emitted HLS C++ compiled with g++ and run (C simulation) vs PyTorch float64 within
    1e-12 of the output magnitude."""
    _, _, ex, fields, (ref_mu, ref_sigma) = case
    mu, sigma = DataflowExport(ex).csim(fields, tmp_path)
    np.testing.assert_allclose(mu, ref_mu, rtol=0, atol=1e-12 * np.abs(ref_mu).max())
    np.testing.assert_allclose(sigma, ref_sigma, rtol=0, atol=1e-12 * np.abs(ref_sigma).max())


def test_json_loads_in_stencilflow_and_report_at_half_degree(case, tmp_path):
    """The JSON reloads as the same DAG; at 361x720 (+ halo) the report's streamed shape,
    cycles >= points and positive on-chip buffers are consistent."""
    _, _, ex, _, _ = case
    d = DataflowExport(ex)
    prog = load_program(d.write_json(tmp_path / "p.json"))
    assert set(prog.stencils) == set(d.program.stencils) and prog.outputs == d.program.outputs
    json.loads((tmp_path / "p.json").read_text())
    rep = DataflowExport(ex, GLOBAL_HALF_DEGREE).report(clock_mhz=300.0)
    h = ex.halo
    assert rep.streamed_shape == (361 + 2 * h, 720 + 2 * h, 1)
    assert rep.cycles >= (361 + 2 * h) * (720 + 2 * h)
    assert rep.onchip_bytes > 0 and rep.fields_per_second == pytest.approx(300e6 / rep.cycles)
