"""Scoring the leave-one-out methods on re-measured timings (synthetic, constructed samples)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mapping.tuning.ablation import FAILED, MethodScore, Proposal, score_stencil, summarize
from mapping.tuning.errors import TuningError
from mapping.tuning.schedule import Schedule
from mapping.tuning.stats import Interval

A = Schedule("gt:cpu_ifirst", threads=1)
B = Schedule("gt:cpu_ifirst", threads=2)
C = Schedule("gt:cpu_kfirst", threads=2)
D = Schedule("dace:cpu", threads=2)


def _samples(centre: float, n: int = 15, spread: float = 0.01) -> list[float]:
    return list(centre * (1.0 + spread * np.linspace(-1.0, 1.0, n)))


def test_score_stencil_ratios_and_verdicts() -> None:
    """Reference: the constructed samples. The best is the finalist with the lowest median (B at
    1.0 ms, not A at 1.5 ms); a method whose fastest candidate is B itself scores exactly 1
    ("same"), one at 2x scores 2 with an interval excluding 1 ("slower"), one whose only
    candidate did not run is FAILED, and a candidate faster than every finalist is "faster"."""
    samples = {A.key: _samples(1.5e-3), B.key: _samples(1.0e-3), C.key: _samples(2.0e-3),
               D.key: _samples(0.8e-3)}
    proposals = {
        "same": Proposal("same", (C, B)),
        "slow": Proposal("slow", (C,)),
        "none": Proposal("none", (Schedule("gt:cpu_kfirst", threads=1),)),
        "fast": Proposal("fast", (D, A)),
    }
    best, scores = score_stencil(proposals, samples, finalists=[A, B])
    assert best == B
    assert scores["same"].schedule == B and scores["same"].ratio.estimate == pytest.approx(1.0, rel=1e-12)
    assert scores["same"].verdict == "same"
    assert scores["slow"].ratio.estimate == pytest.approx(2.0, rel=1e-12)
    assert scores["slow"].ratio.low > 1.9 and scores["slow"].verdict == "slower"
    assert scores["none"].verdict == FAILED and scores["none"].ratio is None
    assert scores["fast"].schedule == D and scores["fast"].verdict == "faster"
    assert scores["fast"].ratio.estimate == pytest.approx(0.8, rel=1e-12)
    assert scores["slow"].evaluations == 1 and scores["same"].evaluations == 2
    with pytest.raises(TuningError, match="no finalist"):
        score_stencil(proposals, {C.key: _samples(1.0)}, finalists=[A, B])


def _score(method: str, ratio: float | None) -> MethodScore:
    if ratio is None:
        return MethodScore(method, 3, None, None, FAILED)
    iv = Interval(ratio, ratio * 0.98, ratio * 1.02)
    v = "faster" if iv.high < 1 else "slower" if iv.low > 1 else "same"
    return MethodScore(method, 3, A, iv, v)


def test_summarize_medians_counts_and_paired_test() -> None:
    """Reference: by hand. learned's ratios 1.00..1.07 beat global_best's (each 0.1 higher) on
    all 8 stencils: Wilcoxon's exact two-sided p for 8 same-sign pairs is 2 / 2**8; medians are
    those of the lists; a failed stencil counts as inf in the median and is left out of the
    paired test."""
    learned = [1.0 + 0.01 * i for i in range(8)]
    scores = [{"learned": _score("learned", x), "global_best": _score("global_best", x + 0.1)} for x in learned]
    scores.append({"learned": _score("learned", 1.0), "global_best": _score("global_best", None)})
    s = summarize(scores, methods=("learned", "global_best"))
    assert s["learned"]["median_ratio"] == pytest.approx(float(np.median(learned + [1.0])), rel=1e-12)
    assert s["learned"]["stencils"] == 9
    assert s["learned"]["verdicts"]["same"] == 4 and s["learned"]["verdicts"]["slower"] == 5  # +-2% intervals
    gb = s["global_best"]
    assert gb["verdicts"][FAILED] == 1 and gb["median_ratio_interval"] is None
    assert gb["median_ratio"] == pytest.approx(float(np.median([x + 0.1 for x in learned] + [math.inf])))
    t = gb["learned_vs_this"]
    assert (t["n"], t["wins"], t["losses"]) == (8, 8, 0)
    assert t["p_value"] == pytest.approx(2 / 2**8, rel=1e-9)
    assert t["median_log_ratio"] < 0
    iv = s["learned"]["median_ratio_interval"]
    assert iv["low"] <= s["learned"]["median_ratio"] <= iv["high"]
