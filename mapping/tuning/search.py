"""Schedule search for one stencil: exhaustive, random, or model-based (optuna TPE).

Every evaluation is stored in the tuning database as it completes, and schedules already in the
database (same machine and domain) are not measured again, so searches resume after a crash and
an exhaustive search can be completed across several runs. A completed random or optuna search
also records which schedules it chose (:func:`search_spec` names it), so running the same search
again reads them instead of sampling anew.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from mapping.tuning import counters
from mapping.tuning.db import TuningDB
from mapping.tuning.errors import SearchStopped, TuningError
from mapping.tuning.features import Embedding, dynamic_features, program_features, static_features
from mapping.tuning.measure import TIMEOUT, Evaluation, Evaluator
from mapping.tuning.programs import ProgramCall, ProgramTarget
from mapping.tuning.schedule import SDFG_KINDS, Schedule
from mapping.tuning.targets import resolve

log = logging.getLogger(__name__)

STRATEGIES = ("exhaustive", "random", "optuna")


@dataclass
class SearchResult:
    """What a search tried and found."""

    stencil: str
    strategy: str
    space_size: int
    evaluations: list[Evaluation] = field(default_factory=list)
    reused: int = 0  # evaluations taken from the database instead of measured
    builds: int = 0  # compilations paid in this search
    runs: int = 0  # schedules measured in this search

    @property
    def valid(self) -> list[Evaluation]:
        return [e for e in self.evaluations if e.ok]

    @property
    def best(self) -> Evaluation | None:
        return min(self.valid, key=lambda e: e.median_s) if self.valid else None  # type: ignore[arg-type, return-value]

    def default(self) -> Evaluation | None:
        key = Schedule("numpy").key
        return next((e for e in self.evaluations if e.schedule.key == key and e.ok), None)


def build_knobs(s: Schedule) -> dict[str, str]:
    """A build's knobs as TPE parameters: C++ flags, skipped OIR passes, each SDFG
    transformation (its parameters, or ``-`` when absent) and a program's fusion."""
    knobs = {"flags": s.opt_flags, "skip": ",".join(s.oir_skip), "fuse": ",".join(map(str, s.fuse))}
    for kind in SDFG_KINDS:
        params = dict(s.sdfg).get(kind)
        knobs[f"sdfg:{kind}"] = "-" if params is None else ",".join(f"{k}={v}" for k, v in params) or "on"
    return knobs


def runtime_knobs(s: Schedule) -> dict[str, str]:
    """The OpenMP run-time knobs as TPE parameters."""
    return {"threads": str(s.threads), "bind": s.proc_bind, "wait": s.wait_policy}


class KnobChoice:
    """Chooses one of ``options`` knob by knob (one categorical TPE parameter per knob that
    varies among them), so the sampler can learn each knob's effect; a combination that is not
    an option falls back to the option that agrees on the most knobs (first in order on ties)."""

    def __init__(self, options: Sequence[Schedule], knobs: Callable[[Schedule], dict[str, str]]) -> None:
        self.options = list(options)
        self.values = [knobs(o) for o in self.options]
        choices = {k: sorted({v[k] for v in self.values}) for k in self.values[0]}
        self.varying = {k: vs for k, vs in choices.items() if len(vs) > 1}

    def suggest(self, trial: object, prefix: str) -> Schedule:
        want = {k: trial.suggest_categorical(prefix + k, vs) for k, vs in self.varying.items()}  # type: ignore[attr-defined]
        score = [sum(v[k] == x for k, x in want.items()) for v in self.values]
        return self.options[score.index(max(score))]


def search_spec(space: Sequence[Schedule], strategy: str, budget: int, seed: int, batch: int) -> str:
    """What fixes a random or optuna search's choices: strategy, budget, seed, the space (its
    keys in order, hashed) and, for optuna, how many schedules it asks for at a time."""
    digest = hashlib.sha256("\n".join(s.key for s in space).encode()).hexdigest()[:16]
    spec: dict[str, object] = {"strategy": strategy, "budget": budget, "seed": seed,
                               "space": f"{len(space)}:{digest}"}  # fmt: skip
    if strategy == "optuna":
        spec["batch"] = batch
    return json.dumps(spec, sort_keys=True)


class Tuner:
    """Searches one stencil's schedule space; ``Tuner(stencil, evaluator, db)``.

    ``stored_only``: replay searches from the database; a schedule it does not hold is a
    :class:`TuningError` instead of a measurement (the same seed proposes the same schedules),
    and a stored timeout is the failed evaluation it was in the search that met it.
    ``should_stop``: asked before each new measurement and after each one is stored; once it
    answers True the search raises :class:`SearchStopped` (run it again to resume).
    A random or optuna search the database has recorded (:func:`search_spec`) is read from
    it; one not recorded is sampled, and recorded once complete.
    """

    def __init__(
        self,
        stencil: str,
        evaluator: Evaluator,
        db: TuningDB,
        progress: Callable[[int], object] | None = None,
        stored_only: bool = False,
        should_stop: Callable[[], bool] | None = None,
    ) -> None:
        self.target = resolve(stencil)
        self.stencil = self.target.name  # canonical: the database key
        self.evaluator = evaluator
        self.db = db
        self.domain = evaluator.config.domain
        self.progress = progress
        self.stored_only = stored_only
        self.should_stop = should_stop

    # -- embedding --------------------------------------------------------------------
    def profile(self, stream_gbs: float) -> Embedding:
        """Static features + one profiled numpy-backend run; stored in the database."""
        base = self.evaluate([Schedule("numpy")])[0]
        if not base.ok:
            raise TuningError(
                f"stencil {self.stencil!r}: the baseline numpy run failed ({base.error}); "
                "fix the stencil before tuning it"
            )
        if isinstance(self.target, ProgramTarget):
            return self._profile_program(stream_gbs, float(base.median_s))
        feats = static_features(self.target)
        status = counters.probe()
        ipc = None
        if status.available:
            ipc = counters.ipc_from_runs(lambda r: self.evaluator.perf_run(Schedule("numpy"), r))
            if ipc is None:
                status = counters.CounterStatus(False, "perf ran but its counts gave no IPC (see log)")
        feats.update(dynamic_features(self.target, self.domain, float(base.median_s), stream_gbs, ipc))
        emb = Embedding(self.stencil, feats, counters.status_dict(status))
        self.db.put_embedding(emb, self.domain, float(base.median_s), stream_gbs)
        return emb

    def _profile_program(self, stream_gbs: float, baseline_s: float) -> Embedding:
        """A program's embedding from its calls' (:func:`program_features`): each call's stencil
        embedding is taken from the database, or profiled and stored first."""
        assert isinstance(self.target, ProgramTarget)
        parts: list[Embedding] = []
        used: list[str] = []
        for call in self.target.calls:
            name, emb = self._call_embedding(call, stream_gbs)
            parts.append(emb)
            used.append(f"{call.label} = {name}")
        feats = program_features([p.features for p in parts])
        status = dict(parts[0].status)
        status["program"] = "time-weighted mean of its calls' embeddings: " + ", ".join(used)
        emb = Embedding(self.stencil, feats, status)
        self.db.put_embedding(emb, self.domain, baseline_s, stream_gbs)
        return emb

    def _call_embedding(self, call: ProgramCall, stream_gbs: float) -> tuple[str, Embedding]:
        """(tuning name, embedding) of one program call's stencil on this tuner's domain."""
        from mapping.tuning.factory import stencil_names

        names = stencil_names(call.definition, call.externals)
        for name in names:
            emb = self.db.embedding(name, self.domain)
            if emb is not None:
                return name, emb
        for name in names:
            try:
                target = resolve(name)
            except TuningError:
                continue
            if getattr(target, "definition", None) is call.definition:
                tuner = Tuner(name, Evaluator(name, self.evaluator.config), self.db)
                return name, tuner.profile(stream_gbs)
        raise TuningError(
            f"program {self.stencil!r}, call {call.label!r}: its stencil cannot be embedded on its "
            f"own under any of the names {names}; tune stencils whose externals a name can carry "
            "(see 'stratoflow tune list')"
        )

    def embedding(self, stream_gbs: float) -> Embedding:
        return self.db.embedding(self.stencil, self.domain) or self.profile(stream_gbs)

    # -- evaluation with the database as cache ------------------------------------------
    def evaluate(self, schedules: Sequence[Schedule], result: SearchResult | None = None) -> list[Evaluation]:
        known = self._stored()
        todo = [s for s in schedules if s.key not in known]
        if todo and self.stored_only:
            raise TuningError(
                f"{len(todo)} schedules of the search are not in the database "
                "(rerun without --no-search to measure them)"
            )
        if result is not None:
            result.reused += len(schedules) - len(todo)
        if todo:
            self._stop_if_asked()

        def done(ev: Evaluation) -> None:
            self.db.put_evaluation(self.stencil, self.domain, ev)
            if self.progress:
                self.progress(1)
            if not ev.ok:
                log.info("%s: invalid schedule %s: %s", self.stencil, ev.schedule.describe(), ev.error[:200])
            self._stop_if_asked()

        builds0, runs0 = self.evaluator.builds, self.evaluator.runs
        if todo:
            for ev in self.evaluator(list(todo), progress=done):
                known[ev.schedule.key] = ev
        if result is not None:
            result.builds += self.evaluator.builds - builds0
            result.runs += self.evaluator.runs - runs0
        if self.progress:
            self.progress(len(schedules) - len(todo))
        return [known[s.key] for s in schedules]

    def _stop_if_asked(self) -> None:
        if self.should_stop is not None and self.should_stop():
            raise SearchStopped(f"{self.stencil}: search stopped; its evaluations so far are stored")

    def space(self, base: Sequence[Schedule]) -> list[Schedule]:
        """``base`` for a stencil; for a program, ``base`` times every fusion of its calls."""
        return self.target.space(base) if isinstance(self.target, ProgramTarget) else list(base)

    # -- strategies -----------------------------------------------------------------------
    def search(
        self, space: Sequence[Schedule], strategy: str = "exhaustive", budget: int | None = None, seed: int = 0
    ) -> SearchResult:
        if strategy not in STRATEGIES:
            raise TuningError(f"unknown search strategy {strategy!r}; use one of {STRATEGIES}")
        if budget is not None and budget < 1:
            raise TuningError(f"--budget must be >= 1, got {budget}")
        result = SearchResult(self.stencil, strategy, len(space))
        default = Schedule("numpy")
        if strategy == "exhaustive":
            chosen = list(space) if budget is None else list(space)[:budget]
            result.evaluations = self.evaluate(chosen, result)
            return result
        n = min(budget or len(space), len(space)) if strategy == "random" else budget or min(len(space), 20)
        spec = search_spec(space, strategy, n, seed, max(1, self.evaluator.config.jobs))
        recorded = self._recorded(spec, result)
        if recorded is not None:
            result.evaluations = recorded
            return result
        if strategy == "random":
            rng = random.Random(seed)
            chosen = [default] + rng.sample([s for s in space if s.key != default.key], n - 1)
            result.evaluations = self.evaluate(chosen[:n], result)
        else:
            result.evaluations = self._optuna(space, n, seed, result)
        self.db.put_search(self.stencil, self.domain, spec, [e.schedule.key for e in result.evaluations])
        return result

    def _stored(self) -> dict[str, Evaluation]:
        """This stencil's stored evaluations on this machine and domain. A tuner that may
        measure leaves timeouts out (a timed-out schedule is measured again); a replay
        (``stored_only``) keeps them as the failed evaluations its search saw."""
        evs = self.db.evaluations(self.stencil, self.domain)
        return evs if self.stored_only else {k: e for k, e in evs.items() if e.status != TIMEOUT}

    def _recorded(self, spec: str, result: SearchResult) -> list[Evaluation] | None:
        """The evaluations of the search ``spec`` (which fixes its space) if the database
        recorded it and still holds every one of them, else None."""
        keys = self.db.search_keys(self.stencil, self.domain, spec)
        if keys is None:
            return None
        known = self._stored()
        if not all(k in known for k in keys):
            log.info("%s: the recorded search lacks stored evaluations; searching again", self.stencil)
            return None
        result.reused += len(keys)
        if self.progress:
            self.progress(len(keys))
        return [known[k] for k in keys]

    @staticmethod
    def _penalty(evaluations: Iterable[Evaluation]) -> float:
        """What an invalid schedule is worth to TPE: ten times the slowest valid time so far."""
        return 10.0 * max((float(e.median_s) for e in evaluations if e.ok), default=360.0)  # type: ignore[arg-type]

    def _optuna(self, space: Sequence[Schedule], budget: int, seed: int, result: SearchResult) -> list[Evaluation]:
        """TPE over the space's knobs (backend, build variant, OpenMP run-time setting); an
        invalid schedule (a transformation that does not apply, a failed build or check) is
        told to the sampler as :meth:`_penalty`, so it learns to avoid such knobs."""
        import optuna

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        by_build: dict[str, dict[str, list[Schedule]]] = {}  # backend -> build key -> schedules
        for s in space:
            by_build.setdefault(s.backend, {}).setdefault(s.build_key, []).append(s)
        builds = {b: KnobChoice([ss[0] for ss in bs.values()], build_knobs) for b, bs in by_build.items()}
        runtimes = {k: KnobChoice(ss, runtime_knobs) for bs in by_build.values() for k, ss in bs.items()}
        study = optuna.create_study(
            direction="minimize", sampler=optuna.samplers.TPESampler(seed=seed, n_startup_trials=5)
        )
        seen: dict[str, Evaluation] = {}
        batch = max(1, self.evaluator.config.jobs)
        while len(seen) < min(budget, len(space)):
            trials, picks = [], []
            for _ in range(batch):
                trial = study.ask()
                backend = trial.suggest_categorical("backend", sorted(by_build))
                build = builds[backend].suggest(trial, f"{backend}:")
                s = runtimes[build.build_key].suggest(trial, "")
                trials.append(trial)
                picks.append(s)
            evs = self.evaluate([p for p in picks if p.key not in seen], result)
            for ev in evs:
                seen[ev.schedule.key] = ev
            for trial, s in zip(trials, picks):
                ev = seen[s.key]
                if ev.ok:
                    study.tell(trial, float(ev.median_s))
                else:  # told as a bad result: TPE ignores failed trials and would propose it again
                    study.tell(trial, self._penalty(seen.values()))
            if len(study.trials) > 20 * budget:
                break  # the sampler keeps proposing known schedules: the rest at random
        want = min(budget, len(space)) - len(seen)
        if want > 0:
            log.info("%s: TPE proposed only known schedules for %d trials; %d more drawn at random",
                     self.stencil, len(study.trials), want)  # fmt: skip
            rest = [s for s in space if s.key not in seen]
            for ev in self.evaluate(random.Random(seed).sample(rest, want), result):
                seen[ev.schedule.key] = ev
        log.info("%s: %d TPE trials for %d evaluations", self.stencil, len(study.trials), len(seen))
        return list(seen.values())
