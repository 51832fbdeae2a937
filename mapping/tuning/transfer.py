"""Transfer tuning: try the best schedules of a stencil's nearest neighbours in embedding space.

After Trümper, Ben-Nun et al., "Performance Embeddings" (ICS 2023): a new stencil is embedded
(:mod:`mapping.tuning.features`), its k nearest tuned stencils in the database are found
(Euclidean distance on standardised features), and only their best schedules are validated and
measured on the new stencil; the fastest valid one wins.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from mapping.tuning.db import TuningDB
from mapping.tuning.errors import TuningError
from mapping.tuning.features import Embedding, Standardiser
from mapping.tuning.measure import Evaluation
from mapping.tuning.schedule import Schedule

log = logging.getLogger(__name__)


@dataclass
class TransferResult:
    stencil: str
    neighbours: list[tuple[str, float]]  # (stencil, distance)
    candidates: list[Schedule]
    evaluations: list[Evaluation] = field(default_factory=list)
    space_size: int = 0

    @property
    def best(self) -> Evaluation | None:
        ok = [e for e in self.evaluations if e.ok]
        return min(ok, key=lambda e: e.median_s) if ok else None  # type: ignore[arg-type, return-value]


def nearest(
    query: Embedding, pool: Sequence[Embedding], k: int
) -> list[tuple[str, float]]:
    """The ``k`` stencils of ``pool`` closest to ``query`` (itself excluded), with distances."""
    others = [e for e in pool if e.stencil != query.stencil]
    if not others:
        raise TuningError(
            f"no tuned stencils to transfer from for {query.stencil!r}: run "
            "'stratoflow tune search' on a few stencils first"
        )
    std = Standardiser(others + [query])
    q = std(query)
    dists = [(e.stencil, float(np.linalg.norm(std(e) - q))) for e in others]
    return sorted(dists, key=lambda t: (t[1], t[0]))[:k]


def candidates_from(
    db: TuningDB, neighbours: Sequence[tuple[str, float]], domain: tuple[int, ...], per_neighbour: int = 1
) -> list[Schedule]:
    """The best ``per_neighbour`` valid schedules of each neighbour, nearest first, deduplicated."""
    out: dict[str, Schedule] = {}
    for name, _ in neighbours:
        evs = sorted(
            (e for e in db.evaluations(name, domain).values() if e.ok),
            key=lambda e: e.median_s,  # type: ignore[arg-type, return-value]
        )
        for e in evs[:per_neighbour]:
            out.setdefault(e.schedule.key, e.schedule)
    return list(out.values())


def transfer(
    query: Embedding,
    db: TuningDB,
    domain: tuple[int, ...],
    evaluate: Callable[[list[Schedule]], list[Evaluation]],
    k: int = 3,
    per_neighbour: int = 1,
    pool: Sequence[Embedding] | None = None,
    space_size: int = 0,
) -> TransferResult:
    """Evaluate the neighbours' best schedules on ``query``'s stencil; keep the fastest."""
    if k < 1:
        raise TuningError(f"--k must be >= 1, got {k}")
    pool = list(pool) if pool is not None else db.embeddings(domain)
    tuned = [e for e in pool if db.best(e.stencil, domain) is not None]
    neighbours = nearest(query, tuned, k)
    cands = candidates_from(db, neighbours, domain, per_neighbour)
    log.info("%s: neighbours %s -> %d candidate schedules", query.stencil, neighbours, len(cands))
    result = TransferResult(query.stencil, neighbours, cands, space_size=space_size)
    result.evaluations = evaluate(cands) if cands else []
    return result
