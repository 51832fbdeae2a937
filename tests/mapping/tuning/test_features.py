"""Embeddings: static features against hand counts, standardisation, nearest neighbours."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mapping.tuning.errors import TuningError
from mapping.tuning.features import (
    FEATURES,
    Embedding,
    Standardiser,
    dynamic_features,
    static_features,
)
from mapping.tuning.registry import Tunable
from mapping.tuning.targets import discover, resolve
from mapping.tuning.transfer import nearest


def test_static_features_match_hand_counts() -> None:
    """Checked against counting the GTScript source by hand."""
    lap = static_features(resolve("laplacian_2d"))
    assert lap["reads"] == 5 and lap["extent_h"] == 1 and lap["extent_k"] == 0
    assert lap["parallel"] == 1 and lap["forward"] == 0
    hdiff = static_features(resolve("hdiff"))
    # COSMO hdiff reads in_field at 13 offsets up to +-2 (lap of flux of lap), coeff at 1
    assert hdiff["reads"] == 14 and hdiff["footprint_max"] == 13 and hdiff["extent_h"] == 2
    assert hdiff["compares"] >= 2  # the two flux limiters
    vadv = static_features(resolve("vadv"))
    assert vadv["forward"] == 1 and vadv["backward"] == 1 and vadv["parallel"] == 0
    assert vadv["extent_h"] == 0 and vadv["n_intervals"] == 5
    assert set(lap) == set(FEATURES) - {"log_ns_per_point", "bandwidth_fraction", "ipc"}


def test_dynamic_features_formula() -> None:
    """bandwidth fraction = 8 B x (inputs + outputs) x points / time / STREAM (by hand)."""
    target = resolve("laplacian_2d")  # 1 input, 1 output
    f = dynamic_features(target, (10, 10, 10), baseline_seconds=1e-3, stream_gbs=10.0)
    assert f["bandwidth_fraction"] == pytest.approx(8 * 2 * 1000 / 1e-3 / 1e10, rel=1e-12)
    assert f["log_ns_per_point"] == pytest.approx(math.log10(1e6 / 1000), rel=1e-12)
    assert math.isnan(f["ipc"])
    with pytest.raises(TuningError, match="baseline time"):
        dynamic_features(target, (10, 10, 10), 0.0, 10.0)


def test_standardiser_is_zscore_and_drops_nan_and_constant_information() -> None:
    """Checked against numpy mean/std by hand."""
    es = [Embedding(str(i), {"reads": r, "flops": 3.0, "ipc": float("nan")}) for i, r in enumerate([1.0, 2.0, 6.0])]
    std = Standardiser(es, names=("reads", "flops", "ipc"))
    assert std.names == ("reads", "flops")
    z = std(es[2])
    assert z[0] == pytest.approx((6.0 - 3.0) / np.std([1.0, 2.0, 6.0]), rel=1e-12)
    assert z[1] == 0.0  # constant feature: no contribution


def test_nearest_neighbours_by_hand() -> None:
    pool = [Embedding(n, {"reads": r, "flops": f}) for n, r, f in
            [("a", 0, 0), ("b", 1, 0), ("c", 10, 10), ("q", 0.9, 0.2)]]
    got = nearest(pool[3], pool, k=2)
    assert [n for n, _ in got] == ["b", "a"]
    with pytest.raises(TuningError, match="no tuned stencils"):
        nearest(pool[3], [pool[3]], k=1)


def test_unknown_stencil_names_the_choices() -> None:
    with pytest.raises(TuningError, match="unknown stencil 'nope'.*hdiff"):
        resolve("nope")
    with pytest.raises(TuningError, match="cannot import"):
        resolve("stencils.library:no_such_stencil")


def test_module_function_targets_and_discovery() -> None:
    """A GTScript definition addressed by module:function gets a halo from its read offsets."""
    t = resolve("stencils.library.hdiff:hdiff")
    assert t.halo == 2 and t.outputs == ("out_field",) and set(t.inputs) == {"in_field", "coeff"}
    found = discover([Tunable("library", ("stencils.library",))])
    assert "stencils.library.hdiff:hdiff" in found and "stencils.library.vadv:vertical_advection" in found
