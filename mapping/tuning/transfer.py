"""Transfer tuning: try the best schedules of a stencil's nearest neighbours in embedding space.

After Trümper, Ben-Nun et al., "Performance Embeddings" (ICS 2023): a new stencil is embedded
(:mod:`mapping.tuning.features`), its k nearest tuned stencils in the database are found
(Euclidean distance on standardised features), and only their best schedules are validated and
measured on the new stencil; the fastest valid one wins.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from mapping.tuning.db import TuningDB
from mapping.tuning.encoder import log_profile
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
    query: Embedding,
    pool: Sequence[Embedding],
    k: int,
    embed: Callable[[Embedding], np.ndarray] | None = None,
) -> list[tuple[str, float]]:
    """The ``k`` stencils of ``pool`` closest to ``query`` (itself excluded), with distances:
    Euclidean on ``embed`` (default: the features standardised over ``pool`` and ``query``;
    a :class:`~mapping.tuning.encoder.LearnedEncoder`'s ``encode`` for the learned embedding)."""
    others = [e for e in pool if e.stencil != query.stencil]
    if not others:
        raise TuningError(
            f"no tuned stencils to transfer from for {query.stencil!r}: run "
            "'stratoflow tune search' on a few stencils first"
        )
    embed = embed or Standardiser(others + [query])
    q = embed(query)
    dists = [(e.stencil, float(np.linalg.norm(embed(e) - q))) for e in others]
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


def consensus_candidates(
    db: TuningDB, neighbours: Sequence[tuple[str, float]], domain: tuple[int, ...], n: int
) -> list[Schedule]:
    """The ``n`` schedules that are fastest over the ``neighbours`` together (:func:`consensus`)."""
    return consensus([(db.evaluations(name, domain), dist) for name, dist in neighbours], n)


def consensus(neighbours: Sequence[tuple[Mapping[str, Evaluation], float]], n: int) -> list[Schedule]:
    """The ``n`` schedules that are fastest over all neighbours together.

    ``neighbours``: (evaluations by schedule key, distance) per neighbour. Each neighbour's
    runtimes are normalised by its own best; a schedule's score is the distance-weighted
    (1 / (d + 0.1)) mean of log(runtime / best) over the neighbours, a schedule invalid or
    unmeasured on a neighbour counting as that neighbour's slowest valid one. One noisy
    neighbour measurement does not decide alone, as it does under the best-per-neighbour rule
    when many schedules are within noise of each other.
    """
    schedules: dict[str, Schedule] = {}
    total_w = 0.0
    per: list[tuple[float, dict[str, float], float]] = []
    for evaluations, dist in neighbours:
        logs = log_profile(evaluations)
        if not logs:
            continue
        for k in logs:
            schedules.setdefault(k, evaluations[k].schedule)
        w = 1.0 / (dist + 0.1)
        per.append((w, logs, max(logs.values())))
        total_w += w
    scores = {key: sum(w * logs.get(key, worst) for w, logs, worst in per) / total_w for key in schedules}
    ranked = sorted(schedules, key=lambda k: (scores[k], k))
    return [schedules[k] for k in ranked[:n]]


def with_fusions(cands: Sequence[Schedule], program_calls: int | None) -> list[Schedule]:
    """``cands`` for a stencil (``program_calls`` None: fusion removed) or for a program of
    ``program_calls`` calls (each with every fusion option), deduplicated in order."""
    from mapping.tuning.programs import fusion_options

    fusions = [()] if program_calls is None else fusion_options(program_calls, cands)
    out: dict[str, Schedule] = {}
    for s in cands:
        for fuse in fusions:
            t = s.with_fuse(fuse)
            out.setdefault(t.key, t)
    return list(out.values())


#: How transfer picks the candidates from the neighbours' results.
CANDIDATE_RULES = ("best", "consensus")


def transfer(
    query: Embedding,
    db: TuningDB,
    domain: tuple[int, ...],
    evaluate: Callable[[list[Schedule]], list[Evaluation]],
    k: int = 3,
    per_neighbour: int = 1,
    pool: Sequence[Embedding] | None = None,
    space_size: int = 0,
    rule: str = "best",
    candidates: int | None = None,
    program_calls: int | None = None,
    embed: Callable[[Embedding], np.ndarray] | None = None,
) -> TransferResult:
    """Evaluate candidate schedules from ``query``'s k nearest neighbours; keep the fastest.

    ``rule="best"``: the best ``per_neighbour`` schedules of each neighbour;
    ``rule="consensus"``: the ``candidates`` (default k) best by :func:`consensus_candidates`.
    Neighbours are stencils or programs with at least one valid schedule besides the baseline.
    For a stencil the candidates lose any fusion (a program neighbour's); for a program of
    ``program_calls`` calls each candidate is tried with every fusion of
    :func:`mapping.tuning.programs.fusion_options` (none, all calls fused, and the fusions of
    neighbour programs with as many calls). ``embed`` maps embeddings into the space where
    neighbours are nearest (a :class:`~mapping.tuning.encoder.LearnedEncoder`'s ``encode``;
    default the z-scored hand features).
    """
    if k < 1:
        raise TuningError(f"--k must be >= 1, got {k}")
    if rule not in CANDIDATE_RULES:
        raise TuningError(f"unknown candidate rule {rule!r}; use one of {CANDIDATE_RULES}")
    pool = list(pool) if pool is not None else db.embeddings(domain)
    tuned = [e for e in pool if sum(ev.ok for ev in db.evaluations(e.stencil, domain).values()) >= 2]
    neighbours = nearest(query, tuned, k, embed)
    if rule == "consensus":
        cands = consensus_candidates(db, neighbours, domain, candidates or k)
    else:
        cands = candidates_from(db, neighbours, domain, per_neighbour)
    cands = with_fusions(cands, program_calls)
    log.info("%s: neighbours %s -> %d candidate schedules", query.stencil, neighbours, len(cands))
    result = TransferResult(query.stencil, neighbours, cands, space_size=space_size)
    result.evaluations = evaluate(cands) if cands else []
    return result
