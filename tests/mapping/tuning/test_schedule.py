"""Schedules are data: JSON round trips, stable hashes, clear errors; spaces are big enough."""

from __future__ import annotations

import pytest

from mapping.tuning.errors import TuningError
from mapping.tuning.schedule import Schedule
from mapping.tuning.space import compact_space, full_space, get_space, tiny_space


def test_json_round_trip_and_hash() -> None:
    s = Schedule.from_dict(
        {
            "backend": "dace:cpu_KJI",
            "opt_flags": "-march=native",
            "oir_skip": ["OnTheFlyMerging"],
            "sdfg": [["omp_schedule", {"kind": "dynamic"}], ["tile", {"sizes": [32, 8]}]],
            "threads": 2,
            "proc_bind": "close",
            "wait_policy": "passive",
        }
    )
    again = Schedule.from_json(s.to_json())
    assert again == s
    assert again.key == s.key and again.build_key == s.build_key
    # run-time OpenMP settings share one build
    other = Schedule.from_dict({**s.to_dict(), "threads": 1, "wait_policy": ""})
    assert other.build_key == s.build_key and other.key != s.key
    assert s.environment(4) == {
        "OMP_NUM_THREADS": "2", "OMP_PROC_BIND": "close", "OMP_WAIT_POLICY": "passive"
    }


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"backend": "cuda"}, "not tunable"),
        ({"backend": "gt:cpu_ifirst", "sdfg": [["tile", {"sizes": [8, 8]}]]}, "need a dace backend"),
        ({"backend": "dace:cpu", "sdfg": [["warp", {}]]}, "unknown"),
        ({"backend": "numpy", "threads": 2}, "numpy backend"),
        ({"backend": "numpy", "colour": 1}, "colour: unknown key"),
        ({"backend": "gt:cpu_ifirst", "oir_skip": ["NoSuchPass"]}, "unknown passes"),
    ],
)
def test_invalid_schedules_name_the_problem(data: dict, message: str) -> None:
    with pytest.raises(TuningError, match=message):
        Schedule.from_dict(data)


def test_bad_json_is_a_tuning_error() -> None:
    with pytest.raises(TuningError, match="not valid JSON"):
        Schedule.from_json("{backend: numpy")


def test_spaces_are_large_and_unique() -> None:
    for space in (compact_space(), full_space()):
        assert len(space) >= 50
        assert len({s.key for s in space}) == len(space)
    assert len(full_space()) > 10 * len(compact_space())
    assert {s.backend for s in full_space()} == {
        "numpy", "gt:cpu_ifirst", "gt:cpu_kfirst", "dace:cpu", "dace:cpu_KJI", "dace:cpu_kfirst"
    }
    assert len(tiny_space()) == 3
    with pytest.raises(TuningError, match="unknown schedule space"):
        get_space("huge")
