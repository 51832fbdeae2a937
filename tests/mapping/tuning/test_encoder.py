"""The learned encoder and the leave-one-out ablation on synthetic tuning databases."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from mapping.tuning.ablation import METHODS, LeaveOneOut, search_ratio
from mapping.tuning.encoder import LearnedEncoder, fit_metric, log_profile, profile_distance
from mapping.tuning.errors import TuningError
from mapping.tuning.features import Embedding
from mapping.tuning.measure import Evaluation
from mapping.tuning.schedule import Schedule
from mapping.tuning.transfer import consensus, nearest

SPACE = [Schedule("numpy")] + [Schedule("gt:cpu_ifirst", threads=t) for t in (1, 2)] + [
    Schedule("gt:cpu_kfirst", threads=t) for t in (1, 2)
]


def _ev(s: Schedule, t: float | None) -> Evaluation:
    if t is None:
        return Evaluation(s, "invalid", error="mismatch")
    return Evaluation(s, "ok", median_s=t, min_s=t, max_s=t, noise=0.0)


def test_profile_distance_by_hand() -> None:
    """Reference: the RMS over the union of schedules computed by hand, with a schedule missing
    on one stencil standing for its slowest valid one."""
    a = {"s1": 0.0, "s2": math.log(2.0), "s3": math.log(4.0)}
    b = {"s1": math.log(2.0), "s2": 0.0}
    expect = math.sqrt(((0 - math.log(2)) ** 2 + math.log(2) ** 2 + (math.log(4) - math.log(2)) ** 2) / 3)
    assert profile_distance(a, b) == pytest.approx(expect, rel=1e-12)
    assert profile_distance(a, a) == 0.0
    evs = {"x": _ev(SPACE[0], 2.0), "y": _ev(SPACE[1], 1.0), "z": _ev(SPACE[2], None)}
    assert log_profile(evs) == pytest.approx({"x": math.log(2.0), "y": 0.0}, rel=1e-12)


def test_fit_recovers_a_known_linear_metric() -> None:
    """Reference: analytic. Target distances are exactly ||A (z_i - z_j)|| for a random 2 x 6
    map A; the fit (dims 2, no ridge) reproduces every pair's distance to 1e-3 relative RMS."""
    rng = np.random.default_rng(3)
    z = rng.normal(size=(25, 6))
    a = rng.normal(size=(2, 6))
    target = np.linalg.norm((z[:, None, :] - z[None, :, :]) @ a.T, axis=-1)
    w, rms = fit_metric(z, target, dims=2, ridge=0.0, restarts=3)
    fitted = np.linalg.norm((z[:, None, :] - z[None, :, :]) @ w.T, axis=-1)
    i, j = np.triu_indices(25, 1)
    assert rms / target[i, j].mean() < 1e-3
    np.testing.assert_allclose(fitted[i, j], target[i, j], rtol=1e-2, atol=1e-3 * target.mean())


def _synthetic(n: int = 16) -> tuple[dict[str, Embedding], dict[str, dict[str, Evaluation]]]:
    """Two families of stencils: ifirst-fast ones (feature parallel=1) and kfirst-fast ones;
    the other features are noise. Timings follow the family."""
    rng = np.random.default_rng(0)
    embs, evs = {}, {}
    for i in range(n):
        fam = i % 2
        feats = {"parallel": float(fam), "flops": float(rng.normal()), "reads": float(rng.normal()),
                 "n_inputs": float(rng.integers(1, 5))}
        name = f"s{i}"
        embs[name] = Embedding(name, feats)
        base = 1.0 + 0.1 * rng.random()
        times = [3.0, 1.0, 0.8, 1.6, 1.4] if fam else [3.0, 1.6, 1.4, 1.0, 0.8]
        evs[name] = {s.key: _ev(s, base * t * (1 + 0.01 * rng.random())) for s, t in zip(SPACE, times)}
    return embs, evs


def test_learned_encoder_finds_the_family_and_round_trips(tmp_path) -> None:  # noqa: ANN001
    """Reference: the synthetic construction. Stencils of one family share a profile, so the
    learned nearest neighbours are of the query's family; the saved file loads to the same map."""
    embs, evs = _synthetic()
    profiles = {n: log_profile(e) for n, e in evs.items()}
    enc = LearnedEncoder.fit(list(embs.values()), profiles, dims=2)
    for name, emb in embs.items():
        fam = int(name[1:]) % 2
        for nb, _ in nearest(emb, list(embs.values()), 3, enc.encode):
            assert int(nb[1:]) % 2 == fam, (name, nb)
    path = tmp_path / "encoder.json"
    enc.save(path)
    back = LearnedEncoder.load(path)
    np.testing.assert_array_equal(back.encode(embs["s3"]), enc.encode(embs["s3"]))
    path.write_text(json.dumps({"format": "other"}))
    with pytest.raises(TuningError, match="not a stratoflow tuning encoder"):
        LearnedEncoder.load(path)
    path.write_text("{")
    with pytest.raises(TuningError, match="line 1"):
        LearnedEncoder.load(path)


def test_leave_one_out_methods_on_two_families() -> None:
    """Reference: the synthetic construction. Learned and hand neighbours (the family feature
    dominates) transfer the held-out stencil's own best (ratio 1 within the 1% jitter); the
    global best, one list for both families, does not for every stencil; each method spends
    the same number of evaluations."""
    embs, evs = _synthetic()
    loo = LeaveOneOut(embs, evs, SPACE, k=3, candidates=1, dims=2)
    worse_global = 0
    for name in embs:
        props = loo.propose(name)
        assert set(props) == set(METHODS) and all(p.evaluations == 1 for p in props.values())
        assert name not in props["learned"].neighbours and name not in props["global_best"].neighbours
        assert search_ratio(props["learned"], evs[name]) < 1.02
        worse_global += search_ratio(props["global_best"], evs[name]) > 1.5
    assert worse_global >= len(embs) // 2 - 1
    with pytest.raises(TuningError, match="unknown ablation methods"):
        loo.propose("s0", ["magic"])


def test_consensus_weights_neighbours_by_distance() -> None:
    """Reference: hand computation. A near neighbour preferring schedule 1 outweighs a far one
    preferring schedule 2."""
    near = {s.key: _ev(s, t) for s, t in zip(SPACE[:3], (3.0, 1.0, 2.0))}
    far = {s.key: _ev(s, t) for s, t in zip(SPACE[:3], (3.0, 2.0, 1.0))}
    assert consensus([(near, 0.0), (far, 5.0)], 1) == [SPACE[1]]
    assert consensus([(near, 5.0), (far, 0.0)], 1) == [SPACE[2]]


def test_best_rule_transfers_each_neighbours_fastest_recorded_schedule() -> None:
    """Reference: the synthetic construction. Every stencil also records one schedule outside
    the exhaustive space (a code-changing build found by a budgeted search) that is 2x faster
    than its exhaustive best. The ``best`` rule proposes the neighbours' recorded schedules in
    order of distance, filled up by consensus, so the learned nearest neighbour (of the same
    family) gives the held-out stencil's own family build first; ``consensus`` only ranks
    schedules every stencil measured and cannot; global_best and random_search ignore the rule."""
    embs, evs = _synthetic()
    fast = {True: Schedule("gt:cpu_ifirst", "-march=native", ("OnTheFlyMerging",), threads=2),
            False: Schedule("gt:cpu_kfirst", "-march=native", ("OnTheFlyMerging",), threads=2)}  # fmt: skip
    records = {}
    for name, e in evs.items():
        ifirst = embs[name].features["parallel"] == 1.0
        best = min(float(x.median_s) for x in e.values() if x.ok)
        records[name] = {fast[ifirst].key: _ev(fast[ifirst], best / 2)}
    by_rule = {rule: LeaveOneOut(embs, evs, SPACE, k=3, candidates=2, dims=2, records=records, rule=rule)
               for rule in ("best", "consensus")}  # fmt: skip
    for name in embs:
        own = fast[embs[name].features["parallel"] == 1.0]
        best_rule = by_rule["best"].propose(name)
        for method in ("learned", "hand", "random"):
            prop = best_rule[method]
            picked = list(dict.fromkeys(fast[embs[n].features["parallel"] == 1.0] for n in prop.neighbours))[:2]
            assert list(prop.candidates[: len(picked)]) == picked, method
            assert len(prop.candidates) == 2 and all(c in SPACE for c in prop.candidates[len(picked):])
        assert best_rule["learned"].candidates[0] == own  # the nearest learned neighbour is of its family
        plain = by_rule["consensus"].propose(name)
        assert all(c in SPACE for c in plain["hand"].candidates)
        assert best_rule["global_best"] == plain["global_best"]
        assert best_rule["random_search"] == plain["random_search"]
    with pytest.raises(TuningError, match="unknown candidate rule"):
        LeaveOneOut(embs, evs, SPACE, rule="magic")
