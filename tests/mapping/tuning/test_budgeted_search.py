"""The budgeted (optuna TPE) search on the full space, with a stand-in evaluator whose timings
and invalid schedules are constructed (no build, no timing).

Reference: the construction. Every schedule with the ``vectorize`` SDFG transformation is
invalid (it does not apply, as for most stencils here); the timings favour ``gt:cpu_kfirst`` with
``OnTheFlyMerging`` skipped and two threads.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest

from mapping.tuning.db import TuningDB
from mapping.tuning.errors import SearchStopped, TuningError
from mapping.tuning.measure import TIMEOUT, Evaluation, MeasureConfig
from mapping.tuning.schedule import Schedule
from mapping.tuning.search import Tuner, search_spec
from mapping.tuning.space import full_space


def _invalid(s: Schedule) -> bool:
    return any(kind == "vectorize" for kind, _ in s.sdfg)


def _time(s: Schedule) -> float:
    t = {"numpy": 50.0, "gt:cpu_ifirst": 2.0, "gt:cpu_kfirst": 1.5}.get(s.backend, 3.0)
    if "OnTheFlyMerging" in s.oir_skip:
        t *= 0.5
    if s.threads == 2:
        t *= 0.6
    return 1e-3 * t * (1.0 + 0.01 * (zlib.crc32(s.key.encode()) % 7))


class StandIn:
    """Answers like :class:`~mapping.tuning.measure.Evaluator` from the construction above."""

    def __init__(self, tmp: Path) -> None:
        self.config = MeasureConfig(domain=(8, 8, 4), jobs=2, cache_dir=tmp)
        self.builds = self.runs = 0
        self.asked: list[Schedule] = []

    def __call__(self, schedules: list[Schedule], progress=None) -> list[Evaluation]:  # noqa: ANN001
        out = []
        for s in schedules:
            self.asked.append(s)
            if _invalid(s):
                ev = Evaluation(s, "invalid", error="SDFG transformation vectorize does not apply")
            else:
                t = _time(s)
                ev = Evaluation(s, "ok", median_s=t, min_s=t, max_s=t, noise=0.0)
            out.append(ev)
            if progress:
                progress(ev)
        return out


def test_invalid_proposals_teach_the_search_to_avoid_them(tmp_path: Path) -> None:
    """Invalid schedules are told to TPE as bad results, not dropped, and each knob is its own
    parameter: over seeds 0-3, in the second half of an 80-evaluation budget at most 15% of the
    new proposals are invalid (11% measured; 24% when invalid trials were dropped and a build was
    one integer index; a third of the dace builds carry ``vectorize``), and every search finds the
    constructed optimum's build."""
    late = []
    for seed in range(4):
        ev = StandIn(tmp_path)
        tuner = Tuner("laplacian_2d", ev, TuningDB(tmp_path / f"db{seed}.sqlite"))  # type: ignore[arg-type]
        res = tuner.search(full_space(), "optuna", budget=80, seed=seed)
        assert len(res.evaluations) == 80 and len({e.schedule.key for e in res.evaluations}) == 80
        late += ev.asked[40:]
        best = res.best.schedule
        assert (best.backend, best.oir_skip, best.threads) == ("gt:cpu_kfirst", ("OnTheFlyMerging",), 2)
    share = sum(_invalid(s) for s in late) / len(late)
    assert share <= 0.15, f"{share:.0%} of the late proposals are invalid"


def test_a_budget_tpe_cannot_fill_is_filled_at_random(tmp_path: Path, caplog) -> None:  # noqa: ANN001
    """A budget as large as the space (numpy + two builds x 12 OpenMP settings): TPE keeps
    proposing known schedules long before it has tried all (here after 17 of 25), and the rest
    are drawn at random, so the search spends exactly its budget on distinct schedules (the
    budget is what the ablation divides by)."""
    import logging

    from mapping.tuning.space import compact_space

    space = compact_space()[:25]
    ev = StandIn(tmp_path)
    tuner = Tuner("laplacian_2d", ev, TuningDB(tmp_path / "db.sqlite"))  # type: ignore[arg-type]
    with caplog.at_level(logging.INFO, logger="mapping.tuning.search"):
        res = tuner.search(space, "optuna", budget=25, seed=0)
    assert "8 more drawn at random" in caplog.text
    assert len(res.evaluations) == 25 == len({s.key for s in ev.asked})


def test_a_completed_search_is_recorded_and_read_back_without_sampling(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """Reference: the first search's own evaluations. The same search run again (same stencil,
    space, strategy, budget, seed and batch) returns them in the same order from the database's
    record, with TPE and the evaluator never called; another seed or batch is another search,
    which a replay that may not measure cannot run; a record whose evaluations were deleted is
    searched again, measuring only what is missing."""
    db = TuningDB(tmp_path / "db.sqlite")
    space = full_space()
    first = Tuner("laplacian_2d", StandIn(tmp_path), db).search(space, "optuna", budget=30, seed=0)  # type: ignore[arg-type]
    keys = [e.schedule.key for e in first.evaluations]
    assert db.search_keys("laplacian_2d", (8, 8, 4), search_spec(space, "optuna", 30, 0, 2)) == keys

    def no_tpe(*args: object, **kwargs: object) -> None:
        raise AssertionError("TPE ran although the search is recorded")

    monkeypatch.setattr(Tuner, "_optuna", no_tpe)
    ev = StandIn(tmp_path)
    again = Tuner("laplacian_2d", ev, db, stored_only=True).search(space, "optuna", budget=30, seed=0)  # type: ignore[arg-type]
    assert [e.schedule.key for e in again.evaluations] == keys and again.reused == 30 and ev.asked == []
    assert again.best.schedule == first.best.schedule
    monkeypatch.undo()

    other = {search_spec(space, "optuna", 30, 1, 2), search_spec(space, "optuna", 30, 0, 1),
             search_spec(space[:-1], "optuna", 30, 0, 2), search_spec(space, "random", 30, 0, 2)}  # fmt: skip
    assert search_spec(space, "optuna", 30, 0, 2) not in other and len(other) == 4
    with pytest.raises(TuningError, match="not in the database"):
        Tuner("laplacian_2d", StandIn(tmp_path), db, stored_only=True).search(space, "optuna", budget=30, seed=1)  # type: ignore[arg-type]

    import sqlite3

    with sqlite3.connect(db.path) as con:
        con.execute("DELETE FROM evaluations WHERE key=?", (keys[-1],))
    ev = StandIn(tmp_path)
    redo = Tuner("laplacian_2d", ev, db).search(space, "optuna", budget=30, seed=0)  # type: ignore[arg-type]
    assert [s.key for s in ev.asked] == [keys[-1]] and [e.schedule.key for e in redo.evaluations] == keys


def test_a_search_stopped_on_request_resumes_where_it_stopped(tmp_path: Path) -> None:
    """Reference: the same search run without a stop, on its own database. Told to stop after
    12 measurements, a search raises :class:`SearchStopped` with those 12 stored and no search
    recorded; run again, it measures exactly what the uninterrupted search measured after its
    12th (nothing twice) and ends with its evaluations, in the same order (TPE with the same
    seed, told the same stored timings)."""
    space = full_space()
    uninterrupted = StandIn(tmp_path)
    whole = Tuner("laplacian_2d", uninterrupted, TuningDB(tmp_path / "whole.sqlite"))  # type: ignore[arg-type]
    want = [e.schedule.key for e in whole.search(space, "optuna", budget=30, seed=0).evaluations]
    db = TuningDB(tmp_path / "db.sqlite")
    ev = StandIn(tmp_path)
    stopping = Tuner("laplacian_2d", ev, db, should_stop=lambda: len(ev.asked) >= 12)  # type: ignore[arg-type]
    with pytest.raises(SearchStopped, match="evaluations so far are stored"):
        stopping.search(space, "optuna", budget=30, seed=0)
    assert len(ev.asked) == 12 and len(db.evaluations("laplacian_2d", (8, 8, 4))) == 12
    assert db.search_keys("laplacian_2d", (8, 8, 4), search_spec(space, "optuna", 30, 0, 2)) is None
    again = StandIn(tmp_path)
    res = Tuner("laplacian_2d", again, db).search(space, "optuna", budget=30, seed=0)  # type: ignore[arg-type]
    assert [s.key for s in ev.asked] == [s.key for s in uninterrupted.asked[:12]]
    assert [s.key for s in again.asked] == [s.key for s in uninterrupted.asked[12:]]
    assert not {s.key for s in again.asked} & {s.key for s in ev.asked}
    assert [e.schedule.key for e in res.evaluations] == want


class TimesOutOnce(StandIn):
    """The stand-in, except that the 10th valid schedule it is asked for times out."""

    def __init__(self, tmp: Path) -> None:
        super().__init__(tmp)
        self.valid = 0
        self.victim: str | None = None

    def __call__(self, schedules: list[Schedule], progress=None) -> list[Evaluation]:  # noqa: ANN001
        out = []
        for ev in super().__call__(schedules):
            if ev.ok:
                self.valid += 1
                if self.valid == 10:
                    self.victim = ev.schedule.key
                    ev = Evaluation(ev.schedule, TIMEOUT, error="build crashed or timed out")
            out.append(ev)
            if progress:
                progress(ev)
        return out


def test_a_replay_reads_a_timed_out_schedule_as_the_failure_its_search_saw(tmp_path: Path) -> None:
    """Reference: the first search's own evaluations, one of which (the 10th valid one) timed
    out. The search completes and is recorded with it; a replay that may not measure
    (``--no-search``) returns the record unchanged, that schedule failed and the best the same;
    a tuner that may measure measures that schedule again first (TPE then goes on from its
    timing, so the rest of its search may differ)."""
    db = TuningDB(tmp_path / "db.sqlite")
    space = full_space()
    flaky = TimesOutOnce(tmp_path)
    first = Tuner("laplacian_2d", flaky, db).search(space, "optuna", budget=30, seed=0)  # type: ignore[arg-type]
    keys = [e.schedule.key for e in first.evaluations]
    assert flaky.victim in keys and db.evaluations("laplacian_2d", (8, 8, 4))[flaky.victim].status == TIMEOUT

    ev = StandIn(tmp_path)
    replay = Tuner("laplacian_2d", ev, db, stored_only=True).search(space, "optuna", budget=30, seed=0)  # type: ignore[arg-type]
    assert [e.schedule.key for e in replay.evaluations] == keys and ev.asked == []
    assert {e.schedule.key: e.status for e in replay.evaluations}[flaky.victim] == TIMEOUT
    assert replay.best.schedule == first.best.schedule

    ev = StandIn(tmp_path)
    redo = Tuner("laplacian_2d", ev, db).search(space, "optuna", budget=30, seed=0)  # type: ignore[arg-type]
    assert ev.asked[0].key == flaky.victim
    assert {e.schedule.key: e.status for e in redo.evaluations}[flaky.victim] == "ok"
