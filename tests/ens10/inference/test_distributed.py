"""LeNet (halo 4) on a lat-lon decomposition with halo exchange, bitwise vs one process."""

from __future__ import annotations

import numpy as np
import pytest

from ens10.inference import InferenceProgram, export_model
from ens10.inference.distributed import DistributedInference, default_layout
from tests.ens10.inference.models import random_checkpoint, random_members


def test_default_layout_divides_longitudes():
    """Square-ish layouts whose longitude count divides the grid."""
    assert default_layout(4, 36) == (2, 2)
    assert default_layout(6, 720) in ((2, 3), (3, 2))
    assert default_layout(1, 36) == (1, 1)


@pytest.mark.parallel(nprocs=4)
def test_lenet_decomposed_2x2_is_bitwise_equal():
    """4 ranks (2 in latitude over 19 uneven rows, 2 in longitude, periodic) give exactly the
    single-process result of the same exported LeNet (np.array_equal), including the poles."""
    from mapping.cluster import MPIComm

    comm = MPIComm()
    net, ckpt = random_checkpoint("lenet", hidden=4, channels=2)
    ex = export_model(net, ckpt, loops=False)  # the stacked layout, unrolled for numpy
    fields = random_members(ex.variables, ex.shape)
    names = ex.forecast_inputs
    stack = np.stack([fields[n] for n in names])
    dist = DistributedInference(ex, comm, "numpy", layout=(2, 2))
    got = dist(lambda la, lo: stack[:, la, lo])
    if comm.rank == 0:
        ref = InferenceProgram(ex, "numpy")(fields)
        assert np.array_equal(got[0], ref[0]) and np.array_equal(got[1], ref[1])
    else:
        assert got is None


def test_one_layout_check_for_every_path() -> None:
    """``check_layout`` (used by the postprocess configuration and DistributedInference) refuses
    factors below 1, products of 1 from negative factors, and a rank count that differs."""
    from ens10.inference.distributed import check_layout
    from ens10.inference.errors import ExportError

    check_layout(None)
    check_layout((2, 2), 4)
    for layout, ranks, message in (((0, 2), None, "whole numbers >= 1"),
                                   ((-1, -1), 1, "whole numbers >= 1"),
                                   ((1, 0), 1, "whole numbers >= 1"),
                                   ((2, 2), 1, "needs 4 MPI ranks, but the job has 1")):  # fmt: skip
        with pytest.raises(ExportError, match=message):
            check_layout(layout, ranks)
