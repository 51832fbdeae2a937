"""Leave-one-out ablation of transfer tuning: which way of choosing candidates works.

For a held-out stencil, every method proposes ``n`` candidate schedules from the *other*
stencils' database records only (or, for the search baseline, from the held-out stencil's own
space):

``learned``        nearest ``k`` in a :class:`~mapping.tuning.encoder.LearnedEncoder` fit on the
                   other stencils, then their candidates by the rule below
``hand``           nearest ``k`` by Euclidean distance on the z-scored hand features
``random``         ``k`` neighbours drawn at random
``global_best``    the consensus of all other stencils: one schedule list for every stencil
``random_search``  ``n`` schedules drawn at random from the held-out stencil's own space

The neighbours' candidates (:data:`RULES`): ``consensus`` ranks the schedules every stencil
measured (the exhaustively searched space) by :func:`~mapping.tuning.transfer.consensus`;
``best`` takes each neighbour's fastest schedule of its whole record (nearest neighbour first,
as Trümper et al. transfer), which may come from a budgeted search of a larger space, and fills
up to ``n`` by consensus. All methods spend the same ``n`` evaluations on the held-out stencil,
so their results compare directly; the best of the stencil's own searches is the reference.

:func:`score_stencil` turns re-measured timings (every method's candidates and the exhaustive
search's finalists, measured in the same interleaved rounds) into each method's ratio to the
best with its bootstrap interval and verdict; :func:`summarize` gives, per method, the median
ratio over stencils with its interval, the verdict counts, and Wilcoxon's paired test of the
reference method (``learned``) against each other one.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mapping.tuning.encoder import LearnedEncoder, log_profile
from mapping.tuning.errors import TuningError
from mapping.tuning.features import Embedding
from mapping.tuning.measure import Evaluation
from mapping.tuning.schedule import Schedule
from mapping.tuning.stats import (
    VERDICTS,
    Interval,
    median_interval,
    paired_test,
    ratio_interval,
    verdict,
)
from mapping.tuning.transfer import consensus, nearest

METHODS = ("learned", "hand", "random", "global_best", "random_search")
#: The budgeted search of a larger space (optuna or random, ``Tuner.search``), scored beside them
#: with its own evaluation count when the benchmark runs it.
BUDGETED = "budgeted_search"
ALL_METHODS = (*METHODS, BUDGETED)
#: How neighbour methods turn their neighbours into candidates (see the module docstring).
RULES = ("consensus", "best")


@dataclass(frozen=True)
class Proposal:
    """One method's candidates for one held-out stencil."""

    method: str
    candidates: tuple[Schedule, ...]
    neighbours: tuple[str, ...] = ()
    spent: int | None = None  # evaluations used to find the candidates, if more than their number

    @property
    def evaluations(self) -> int:
        return len(self.candidates) if self.spent is None else self.spent


def _rng(seed: int, name: str) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


class LeaveOneOut:
    """Proposals of every method of :data:`METHODS` for each held-out stencil.

    ``embeddings`` and ``evaluations`` (schedule key -> evaluation) are per stencil, all on one
    machine and domain; ``space`` is the schedule space the exhaustive search covered, and
    ``evaluations`` its search (the profiles the encoder and consensus compare). ``records``:
    per stencil every evaluation the database holds (default ``evaluations``), from which the
    ``best`` rule takes each neighbour's fastest schedule.
    """

    def __init__(
        self,
        embeddings: Mapping[str, Embedding],
        evaluations: Mapping[str, Mapping[str, Evaluation]],
        space: Sequence[Schedule],
        k: int = 3,
        candidates: int = 3,
        dims: int = 4,
        seed: int = 0,
        records: Mapping[str, Mapping[str, Evaluation]] | None = None,
        rule: str = "consensus",
    ) -> None:
        if rule not in RULES:
            raise TuningError(f"unknown candidate rule {rule!r}; use one of {RULES}")
        missing = sorted(set(embeddings) ^ set(evaluations))
        if missing:
            raise TuningError(f"leave-one-out: stencils without both an embedding and evaluations: {missing}")
        if len(embeddings) < 4:
            raise TuningError(f"leave-one-out needs at least 4 tuned stencils, got {len(embeddings)}")
        if k < 1 or candidates < 1:
            raise TuningError(f"k and candidates must be >= 1, got k={k}, candidates={candidates}")
        self.embeddings = dict(embeddings)
        self.evaluations = {n: dict(e) for n, e in evaluations.items()}
        self.space = list(space)
        self.k, self.n, self.dims, self.seed, self.rule = k, candidates, dims, seed, rule
        self.profiles = {n: log_profile(e) for n, e in self.evaluations.items()}
        self.records = {n: {**self.evaluations[n], **dict((records or {}).get(n, {}))} for n in self.evaluations}

    def others(self, name: str) -> list[str]:
        return [n for n in self.embeddings if n != name and self.profiles[n]]

    def encoder(self, name: str) -> LearnedEncoder:
        """The learned encoder fit without ``name`` (nothing of the held-out stencil is seen)."""
        pool = self.others(name)
        return LearnedEncoder.fit([self.embeddings[n] for n in pool], {n: self.profiles[n] for n in pool},
                                  dims=self.dims, seed=self.seed)  # fmt: skip

    def _consensus(self, method: str, neighbours: Sequence[tuple[str, float]]) -> Proposal:
        cands = consensus([(self.evaluations[n], d) for n, d in neighbours], self.n)
        return Proposal(method, tuple(cands), tuple(n for n, _ in neighbours))

    def _neighbour_best(self, method: str, neighbours: Sequence[tuple[str, float]]) -> Proposal:
        """Each neighbour's fastest recorded schedule, nearest first, then consensus up to ``n``."""
        picks: dict[str, Schedule] = {}
        for n, _ in neighbours:
            ok = [e for e in self.records[n].values() if e.ok]
            if ok and len(picks) < self.n:
                best = min(ok, key=lambda e: float(e.median_s))  # type: ignore[arg-type]
                picks.setdefault(best.schedule.key, best.schedule)
        for c in consensus([(self.evaluations[n], d) for n, d in neighbours], self.n):
            if len(picks) < self.n:
                picks.setdefault(c.key, c)
        return Proposal(method, tuple(picks.values()), tuple(n for n, _ in neighbours))

    def propose(self, name: str, methods: Sequence[str] = METHODS) -> dict[str, Proposal]:
        unknown = sorted(set(methods) - set(METHODS))
        if unknown:
            raise TuningError(f"unknown ablation methods {unknown}; use some of {METHODS}")
        if name not in self.embeddings:
            raise TuningError(f"leave-one-out: {name!r} is not among the tuned stencils")
        pool = self.others(name)
        query = self.embeddings[name]
        out: dict[str, Proposal] = {}
        for method in methods:
            if method == "learned":
                nb = nearest(query, [self.embeddings[n] for n in pool], self.k, self.encoder(name).encode)
            elif method == "hand":
                nb = nearest(query, [self.embeddings[n] for n in pool], self.k)
            elif method == "random":
                picks = _rng(self.seed, name).choice(len(pool), size=min(self.k, len(pool)), replace=False)
                nb = [(pool[i], 0.0) for i in sorted(picks)]
            elif method == "global_best":
                out[method] = self._consensus(method, [(n, 0.0) for n in pool])
                continue
            else:
                rng = _rng(self.seed + 1, name)
                picks = rng.choice(len(self.space), size=min(self.n, len(self.space)), replace=False)
                out[method] = Proposal(method, tuple(self.space[i] for i in sorted(picks)))
                continue
            out[method] = self._neighbour_best(method, nb) if self.rule == "best" else self._consensus(method, nb)
        return out


def search_ratio(proposal: Proposal, evaluations: Mapping[str, Evaluation]) -> float | None:
    """Fastest candidate / fastest schedule of ``evaluations`` (the stencil's searches), both
    from the search-time timings, over the candidates the searches evaluated; ``inf`` when none
    of those is valid, None when the searches evaluated none of the candidates."""
    ok = {k: float(e.median_s) for k, e in evaluations.items() if e.ok and e.median_s}  # type: ignore[arg-type]
    if not ok:
        raise TuningError("search_ratio: the stencil has no valid evaluation")
    seen = [c for c in proposal.candidates if c.key in evaluations]
    if not seen:
        return None
    return min(ok.get(c.key, float("inf")) for c in seen) / min(ok.values())


#: Verdict of a method none of whose candidates ran validly on the held-out stencil.
FAILED = "failed"


@dataclass(frozen=True)
class MethodScore:
    """One method on one held-out stencil: its fastest re-measured candidate against the best."""

    method: str
    evaluations: int
    schedule: Schedule | None  # the fastest valid candidate; None when none was valid
    ratio: Interval | None  # median(candidate) / median(best), with its bootstrap interval
    verdict: str  # one of VERDICTS, or FAILED

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method, "evaluations": self.evaluations,
            "schedule": self.schedule.to_dict() if self.schedule else None,
            "ratio": self.ratio.to_dict() if self.ratio else None, "verdict": self.verdict,
        }  # fmt: skip


def _median(x: Sequence[float]) -> float:
    return float(np.median(np.asarray(x, dtype=np.float64)))


def score_stencil(
    proposals: Mapping[str, Proposal], samples: Mapping[str, Sequence[float]],
    finalists: Sequence[Schedule], seed: int = 0,
) -> tuple[Schedule, dict[str, MethodScore]]:  # fmt: skip
    """The best schedule (the finalist with the lowest re-measured median) and each method's score.

    ``samples``: schedule key -> every timing of the re-measurement (absent or empty: the
    schedule did not run validly)."""
    timed = {k: list(v) for k, v in samples.items() if v}
    valid = [f for f in finalists if f.key in timed]
    if not valid:
        raise TuningError("score_stencil: no finalist of the exhaustive search re-measured validly")
    best = min(valid, key=lambda f: _median(timed[f.key]))
    scores: dict[str, MethodScore] = {}
    for method, prop in proposals.items():
        ran = [c for c in prop.candidates if c.key in timed]
        if not ran:
            scores[method] = MethodScore(method, prop.evaluations, None, None, FAILED)
            continue
        win = min(ran, key=lambda c: _median(timed[c.key]))
        ratio = ratio_interval(timed[win.key], timed[best.key], seed=seed)
        scores[method] = MethodScore(method, prop.evaluations, win, ratio, verdict(ratio))
    return best, scores


def summarize(
    scores: Sequence[Mapping[str, MethodScore]], methods: Sequence[str] = ALL_METHODS,
    reference: str = "learned", seed: int = 0,
) -> dict[str, Any]:  # fmt: skip
    """Per method over the held-out stencils: the median ratio to the best with its bootstrap
    interval (over stencils), the verdict counts, the evaluations used, and the paired test of
    ``reference`` against it (Wilcoxon on the per-stencil ratios of the stencils where both ran).
    A method that failed on a stencil counts there with ratio ``inf`` in the median."""
    out: dict[str, Any] = {}
    for m in methods:
        rows = [s[m] for s in scores if m in s]
        if not rows:
            continue
        ratios = [r.ratio.estimate if r.ratio else math.inf for r in rows]
        finite = [x for x in ratios if math.isfinite(x)]
        entry: dict[str, Any] = {
            "stencils": len(rows),
            "median_ratio": _median(ratios),
            "median_ratio_interval": (median_interval(finite, seed=seed).to_dict()
                                      if len(finite) == len(ratios) else None),
            "verdicts": {v: sum(r.verdict == v for r in rows) for v in (*VERDICTS, FAILED)},
            "median_evaluations": _median([r.evaluations for r in rows]),
        }  # fmt: skip
        if m != reference:
            pairs = [(s[reference].ratio.estimate, s[m].ratio.estimate) for s in scores
                     if reference in s and m in s and s[reference].ratio and s[m].ratio]  # fmt: skip
            if pairs:
                a, b = zip(*pairs, strict=True)
                entry[f"{reference}_vs_this"] = paired_test(a, b).to_dict()
        out[m] = entry
    return out
