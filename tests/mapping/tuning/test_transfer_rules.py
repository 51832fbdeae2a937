"""Candidate rules of transfer tuning, on a hand-made database."""

from __future__ import annotations

from pathlib import Path

import pytest

from mapping.tuning.db import TuningDB
from mapping.tuning.errors import TuningError
from mapping.tuning.features import Embedding
from mapping.tuning.measure import Evaluation
from mapping.tuning.schedule import Schedule
from mapping.tuning.transfer import consensus_candidates, transfer

DOM = (8, 8, 4)
A = Schedule("gt:cpu_ifirst", threads=1)
B = Schedule("gt:cpu_kfirst", threads=1)
C = Schedule("dace:cpu", threads=1)


def _db(tmp_path: Path) -> TuningDB:
    """n1: B 1.00 (best by noise), A 1.01, C 3; n2: A 1, B 2, C 3; n3: A 1, C 1.5, B invalid."""
    db = TuningDB(tmp_path / "t.sqlite", machine="test")
    times = {"n1": {A: 1.01, B: 1.0, C: 3.0}, "n2": {A: 1.0, B: 2.0, C: 3.0}, "n3": {A: 1.0, C: 1.5, B: None}}
    for i, (name, ts) in enumerate(times.items()):
        db.put_embedding(Embedding(name, {"f": float(i)}), DOM, 1.0, 10.0)
        for s, t in ts.items():
            status = "ok" if t is not None else "invalid"
            db.put_evaluation(name, DOM, Evaluation(s, status, t, t, t, 0.0))
    return db


def test_consensus_ranks_by_weighted_mean_log_ratio(tmp_path: Path) -> None:
    """Equal distances: A scores mean(log 1.01, 0, 0) ~ 0.003, B mean(0, log 2, log 3 [n3's
    slowest valid, 1.5x]) -> worse than C? C: mean(log 3, log 3, log 1.5) = 0.87; B: mean(0,
    0.69, 0.41) = 0.37. Expected order A, B, C (computed by hand)."""
    db = _db(tmp_path)
    nb = [("n1", 1.0), ("n2", 1.0), ("n3", 1.0)]
    assert [s.key for s in consensus_candidates(db, nb, DOM, 3)] == [A.key, B.key, C.key]
    assert [s.key for s in consensus_candidates(db, nb, DOM, 1)] == [A.key]


def test_transfer_rules(tmp_path: Path) -> None:
    """'best' takes each neighbour's fastest (B from n1, A from n2/n3); 'consensus' the top k."""
    db = _db(tmp_path)
    query = Embedding("new", {"f": 0.1})

    def evaluate(cands: list[Schedule]) -> list[Evaluation]:
        return [Evaluation(c, "ok", 1.0, 1.0, 1.0, 0.0) for c in cands]

    best = transfer(query, db, DOM, evaluate, k=3, pool=db.embeddings(DOM), rule="best")
    assert {c.key for c in best.candidates} == {A.key, B.key}
    cons = transfer(query, db, DOM, evaluate, k=3, pool=db.embeddings(DOM), rule="consensus", candidates=1)
    assert [c.key for c in cons.candidates] == [A.key]
    with pytest.raises(TuningError, match="candidate rule"):
        transfer(query, db, DOM, evaluate, rule="nope")


def test_transfer_by_an_embedding_function(tmp_path: Path) -> None:
    """With ``embed`` the neighbours are nearest in its space: embedding every stencil by
    -f (computed by hand: query 0.1 -> -0.1; n1 0, n2 -1, n3 -2) keeps n1 nearest, and an embed
    that maps n3 onto the query makes n3 the single neighbour, so 'best' proposes n3's A."""
    import numpy as np

    db = _db(tmp_path)
    query = Embedding("new", {"f": 0.1})

    def evaluate(cands: list[Schedule]) -> list[Evaluation]:
        return [Evaluation(c, "ok", 1.0, 1.0, 1.0, 0.0) for c in cands]

    flip = transfer(query, db, DOM, evaluate, k=1, pool=db.embeddings(DOM),
                    embed=lambda e: np.array([-e.features["f"]]))  # fmt: skip
    assert [n for n, _ in flip.neighbours] == ["n1"]
    to_n3 = transfer(query, db, DOM, evaluate, k=1, pool=db.embeddings(DOM),
                     embed=lambda e: np.array([2.0 if e.stencil in ("new", "n3") else 0.0]))  # fmt: skip
    assert [n for n, _ in to_n3.neighbours] == ["n3"] and [c.key for c in to_n3.candidates] == [A.key]
