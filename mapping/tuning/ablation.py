"""Leave-one-out ablation of transfer tuning: which way of choosing candidates works.

For a held-out stencil, every method proposes ``n`` candidate schedules from the *other*
stencils' database records only (or, for the search baseline, from the held-out stencil's own
space):

``learned``        nearest ``k`` in a :class:`~mapping.tuning.encoder.LearnedEncoder` fit on the
                   other stencils, then their consensus (:func:`~mapping.tuning.transfer.consensus`)
``hand``           nearest ``k`` by Euclidean distance on the z-scored hand features
``random``         ``k`` neighbours drawn at random, then their consensus
``global_best``    the consensus of all other stencils: one schedule list for every stencil
``random_search``  ``n`` schedules drawn at random from the held-out stencil's own space

All methods spend the same ``n`` evaluations on the held-out stencil, so their results compare
directly; the exhaustive search of the space is the reference.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from mapping.tuning.encoder import LearnedEncoder, log_profile
from mapping.tuning.errors import TuningError
from mapping.tuning.features import Embedding
from mapping.tuning.measure import Evaluation
from mapping.tuning.schedule import Schedule
from mapping.tuning.transfer import consensus, nearest

METHODS = ("learned", "hand", "random", "global_best", "random_search")


@dataclass(frozen=True)
class Proposal:
    """One method's candidates for one held-out stencil."""

    method: str
    candidates: tuple[Schedule, ...]
    neighbours: tuple[str, ...] = ()

    @property
    def evaluations(self) -> int:
        return len(self.candidates)


def _rng(seed: int, name: str) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


class LeaveOneOut:
    """Proposals of every method of :data:`METHODS` for each held-out stencil.

    ``embeddings`` and ``evaluations`` (schedule key -> evaluation) are per stencil, all on one
    machine and domain; ``space`` is the schedule space the exhaustive search covered.
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
    ) -> None:
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
        self.k, self.n, self.dims, self.seed = k, candidates, dims, seed
        self.profiles = {n: log_profile(e) for n, e in self.evaluations.items()}

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
                nb = [(n, 0.0) for n in pool]
            else:
                rng = _rng(self.seed + 1, name)
                picks = rng.choice(len(self.space), size=min(self.n, len(self.space)), replace=False)
                out[method] = Proposal(method, tuple(self.space[i] for i in sorted(picks)))
                continue
            out[method] = self._consensus(method, nb)
        return out


def search_ratio(proposal: Proposal, evaluations: Mapping[str, Evaluation]) -> float:
    """Fastest candidate / fastest schedule of ``evaluations`` (the exhaustive search), both from
    the search-time timings; ``inf`` when no candidate is valid."""
    ok = {k: float(e.median_s) for k, e in evaluations.items() if e.ok and e.median_s}  # type: ignore[arg-type]
    if not ok:
        raise TuningError("search_ratio: the stencil has no valid evaluation")
    times = [ok.get(c.key, float("inf")) for c in proposal.candidates]
    return min(times, default=float("inf")) / min(ok.values())
