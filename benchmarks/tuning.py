"""Transfer tuning, leave-one-out: five ways of proposing schedules vs the exhaustive optimum.

For every stencil (the library, the fv3core corpus and fv3core's other definitions, directional
ones as their x variant): embed it and search its schedule space exhaustively (resumable: the
evaluations are stored in the tuning database and skipped when present). Then hold out each
stencil whose search is complete and let every method of :data:`mapping.tuning.ablation.METHODS`
propose ``--candidates`` schedules from the other stencils' records only: the learned encoder
(fit without the held-out stencil), the hand features, random neighbours, the global best, and
random search of the stencil's own space. The union of all candidates and the exhaustive
search's ``--finalists`` fastest schedules are re-measured in ``--rounds`` interleaved rounds on
pinned cores; each method's fastest candidate over the best finalist is a ratio with a bootstrap
95% interval and a verdict (faster, same, slower). Per method: the median ratio over stencils
with its interval, the verdict counts, and Wilcoxon's paired test of the learned embedding
against it. The encoder fit on every complete stencil is saved (``--encoder``).
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import math
import os
import statistics
import time
from pathlib import Path
from typing import Any

from benchmarks.common import (
    DOCS_BENCH,
    BenchmarkError,
    atomic_write_text,
    machine_info,
    markdown_table,
    stream_triad,
    write_json,
    write_markdown,
)
from stencils.atomic import atomic_write_bytes
from stencils.errors import InputFileError
from stencils.textfile import read_json

NAME = "tuning"
HELP = "leave-one-out transfer tuning vs exhaustive search over the stencil library (+ fv3core)"
log = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", type=Path, required=True, help="where to write the JSON results")
    p.add_argument("--stencils", nargs="+", default=None,
                   help="stencils (default: the library + fv3core GTScript definitions)")
    p.add_argument("--space", choices=("compact", "full", "tiny"), default="compact",
                   help="schedule space searched exhaustively (default compact: 61 schedules)")
    p.add_argument("--domain", type=int, nargs=3, default=(96, 96, 48), metavar=("NX", "NY", "NZ"))
    p.add_argument("--k", type=int, default=3, help="neighbours transferred from (default 3)")
    p.add_argument("--candidates", type=int, default=3,
                   help="schedules each method proposes and evaluates on the held-out stencil (default 3)")
    p.add_argument("--dims", type=int, default=4, help="dimensions of the learned embedding (default 4)")
    p.add_argument("--rule", choices=("best", "consensus"), default="best",
                   help="neighbour methods' candidates: best = each neighbour's fastest recorded schedule "
                   "(any search, the budgeted one included), nearest first, filled up by consensus; "
                   "consensus = ranked over the exhaustively searched space only (default best)")
    p.add_argument("--seed", type=int, default=0, help="seed of the encoder fit, random methods, bootstrap")
    p.add_argument("--rounds", type=int, default=3,
                   help="interleaved rounds re-measuring every candidate with the search's finalists "
                   "under identical conditions (default 3; each round times --repeats runs)")
    p.add_argument("--finalists", type=int, default=2,
                   help="the exhaustive search's fastest N schedules re-measured with the candidates; "
                   "the fastest of them re-measured is the best (default 2)")
    p.add_argument("--remeasure", action="store_true",
                   help="ignore re-measurements cached next to --json (FILE.remeasure.json)")
    p.add_argument("--encoder", type=Path, default=DOCS_BENCH / "tuning_encoder.json",
                   help="where to save the encoder fit on every complete stencil "
                   "(default docs/benchmarks/tuning_encoder.json)")
    p.add_argument("--plot", type=Path, default=DOCS_BENCH / "tuning.png",
                   help="PNG of each method's ratio to the best per stencil, with intervals "
                   "(default docs/benchmarks/tuning.png)")
    p.add_argument("--budget-search", type=int, default=0, metavar="N",
                   help="also search --budget-space of every stencil with N evaluations "
                   "(--budget-strategy) and score its best beside the transfer methods (default 0: off)")
    p.add_argument("--budget-space", choices=("compact", "full", "tiny"), default="full",
                   help="space of the budgeted search (default full: 18 gt + 1296 dace builds)")
    p.add_argument("--budget-strategy", choices=("optuna", "random"), default="optuna",
                   help="budgeted search: optuna's TPE (default) or random sampling")
    p.add_argument("--budget-stencils", nargs="+", default=None,
                   help="run the budgeted search only on these stencils (default: all)")
    p.add_argument("--db", type=Path, default=None, help="tuning database (default: the user one)")
    p.add_argument("--cache-dir", type=Path, default=None, help="build cache directory")
    p.add_argument("--jobs", type=int, default=2, help="parallel compilations")
    p.add_argument("--repeats", type=int, default=7, help="timed runs per schedule (median)")
    p.add_argument("--build-timeout", type=float, default=3600.0, help="seconds per compilation")
    p.add_argument("--max-minutes", type=float, default=None,
                   help="stop the searches after this many minutes, within the stencil being searched "
                   "(every evaluation so far is stored: rerun the same command to resume)")
    p.add_argument("--search-only", action="store_true",
                   help="run the searches (resumable, with --max-minutes) and stop: no comparison, the JSON "
                   "lists what is searched; for spreading the searches over several runs")
    p.add_argument("--no-search", action="store_true",
                   help="only evaluate leave-one-out on what the database already holds (a budgeted "
                   "search is read back from it, or replayed through TPE if it was not recorded; one not "
                   "complete there is left out)")
    p.add_argument("--budgeted-only", action="store_true",
                   help="score only the stencils whose budgeted search is complete, so every score is "
                   "against the best of both searches (the others still serve as neighbours, in the "
                   "global consensus and in the encoder's training)")
    p.add_argument("--markdown", type=Path, default=DOCS_BENCH / "tuning.md",
                   help="Markdown table to write (default docs/benchmarks/tuning.md)")


def _default_stencils() -> list[str]:
    """The library and fv3core's definitions; of directional ones only the x variants (the y
    variant is the same code transposed: it would be a near-duplicate neighbour)."""
    from mapping.tuning.targets import discover, library_names

    return library_names() + [n for n in discover() if "[y" not in n]


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from mapping.tuning.ablation import (
        BUDGETED,
        LeaveOneOut,
        Proposal,
        score_stencil,
        search_ratio,
        summarize,
    )
    from mapping.tuning.counters import probe
    from mapping.tuning.db import TuningDB, machine_id
    from mapping.tuning.encoder import LearnedEncoder, log_profile
    from mapping.tuning.errors import SearchStopped, TuningError
    from mapping.tuning.measure import Evaluator, MeasureConfig, default_cache_dir
    from mapping.tuning.schedule import Schedule
    from mapping.tuning.search import Tuner
    from mapping.tuning.space import get_space

    t_run = time.monotonic()
    for opt in ("k", "candidates", "dims", "rounds", "finalists"):
        if getattr(args, opt) < 1:
            raise BenchmarkError(f"--{opt} must be >= 1, got {getattr(args, opt)}")
    if args.budget_search < 0:
        raise BenchmarkError(f"--budget-search must be >= 0, got {args.budget_search}")
    if args.search_only and args.no_search:
        raise BenchmarkError("--search-only and --no-search exclude each other")
    from mapping.tuning.targets import canonical

    names = [canonical(n) for n in args.stencils] if args.stencils else _default_stencils()
    fv3_found = [n for n in names if n.startswith("fv3core")]
    space = get_space(args.space)
    domain = tuple(args.domain)
    db = TuningDB(args.db)
    stream = stream_triad()
    cfg = MeasureConfig(
        domain=domain, repeats=args.repeats, jobs=args.jobs, build_timeout_s=args.build_timeout,
        cache_dir=args.cache_dir or default_cache_dir(),
    )
    t_start = time.monotonic()
    load_start = os.getloadavg()
    searched: dict[str, dict[str, int]] = {}
    failed: dict[str, str] = {}
    budgeted: dict[str, dict[str, Any]] = {}
    budget_space = get_space(args.budget_space)
    if not args.no_search:
        t_end = None if args.max_minutes is None else t_start + 60 * args.max_minutes

        def out_of_time() -> bool:
            return t_end is not None and time.monotonic() > t_end

        for i, name in enumerate(names):
            if out_of_time():
                log.warning("--max-minutes reached: %d stencils not searched, from %s on (rerun to resume)",
                            len(names) - i, name)  # fmt: skip
                break
            with (
                tqdm(total=len(space) + 1, desc=f"exhaustive {name}", unit="sched", disable=None) as bar,
                Evaluator(name, cfg) as evaluator,
            ):
                tuner = Tuner(name, evaluator, db, progress=bar.update, should_stop=out_of_time)
                try:
                    if db.embedding(name, domain) is None:
                        tuner.profile(stream.triad_gbs)
                    else:
                        bar.update(1)
                    res = tuner.search(space, "exhaustive")
                    if _budgeted(args, name):
                        _record_budgeted(budgeted, tuner.search(
                            budget_space, args.budget_strategy, args.budget_search, args.seed))
                except SearchStopped:
                    log.warning("--max-minutes reached while searching %s: its evaluations so far are "
                                "stored; %d stencils not finished (rerun to resume)", name, len(names) - i)  # fmt: skip
                    break
                except TuningError as exc:  # one broken stencil does not end the benchmark
                    log.warning("skipping %s: %s", name, exc)
                    failed[name] = str(exc)
                    continue
            searched[name] = {"builds": res.builds, "runs": res.runs, "reused": res.reused}

    if args.search_only:
        progress = _progress(_searched(db, names, space, domain), names, space)
        write_json(args.json, {
            "benchmark": NAME, "search_only": True, "wall_seconds": time.monotonic() - t_run,
            "machine": machine_info(), "space": args.space, "domain": list(domain),
            "searched_this_run": searched, "failed": failed, "exhaustive_progress": progress,
            "budget_search": {"evaluations": args.budget_search, "space": args.budget_space,
                              "strategy": args.budget_strategy, "stencils": sorted(budgeted)},
        })  # fmt: skip
        log.info("searches done (--search-only): %d of %d stencils complete", sum(
            r["evaluated"] == r["space_size"] for r in progress), len(names))  # fmt: skip
        return 0
    if args.no_search:
        for name in names:
            if _budgeted(args, name):
                replay = Tuner(name, Evaluator(name, cfg), db, stored_only=True)
                try:
                    _record_budgeted(budgeted, replay.search(
                        budget_space, args.budget_strategy, args.budget_search, args.seed))
                except TuningError as exc:
                    log.warning("%s: no budgeted search to compare: %s", name, exc)
    searched_evs = _searched(db, names, space, domain)
    complete = _complete(searched_evs, space)
    stale = _stale_builds(complete, cfg.cache_dir, args.finalists, {s.key for s in space})
    cache_path = args.json.with_name(args.json.stem + ".remeasure.json")
    cache: dict[str, Any] = {}
    machine = machine_id()
    if cache_path.exists() and not args.remeasure:
        try:
            cache = read_json(cache_path, "the remeasurement cache of 'stratoflow bench tuning'",
                              what="cache file")  # fmt: skip
        except InputFileError as exc:
            raise BenchmarkError(f"{exc}; delete it or pass --remeasure") from None
    results: list[dict[str, Any]] = []
    scores = []
    encoder_path = None
    scored: list[str] = []
    if len(complete) >= 4:
        loo = LeaveOneOut({n: c["emb"] for n, c in complete.items()}, {n: c["evs"] for n, c in complete.items()},
                          list(space), k=args.k, candidates=args.candidates, dims=args.dims, seed=args.seed,
                          records={n: c["records"] for n, c in complete.items()}, rule=args.rule)  # fmt: skip
        scored = [n for n in complete if n in budgeted or not args.budgeted_only]
        for name in tqdm(scored, desc="leave-one-out", unit="stencil", disable=None):
            evs, records = complete[name]["evs"], complete[name]["records"]
            props = loo.propose(name)
            if name in budgeted:
                b = budgeted[name]
                props[BUDGETED] = Proposal(BUDGETED, (b["best"],), spent=b["evaluations"])
            finalists = [e.schedule for e in sorted((e for e in records.values() if e.ok), key=lambda e: e.median_s)]
            finalists = finalists[: args.finalists]
            todo = {c.key: c for p in props.values() for c in p.candidates}
            todo.update({f.key: f for f in finalists})
            # timings hold only for the machine, domain and repeats they were made with
            key = f"{machine}|{'x'.join(map(str, domain))}|{args.repeats}|{name}|{','.join(sorted(todo))}|{args.rounds}"
            if key not in cache:
                before = os.getloadavg()[0]
                with Evaluator(name, cfg) as evaluator:  # compiles builds the cache lacks, then times
                    measured = evaluator.interleaved(list(todo.values()), args.rounds, pin=True)
                cache[key] = {"measured": measured, "load": [before, os.getloadavg()[0]]}
                atomic_write_text(cache_path, json.dumps(cache, indent=1) + "\n")
            measured = cache[key]["measured"]
            samples = {k: r.get("samples_s") or [] for k, r in measured.items() if r.get("status") == "ok"}
            try:
                best, sc = score_stencil(props, samples, finalists, seed=args.seed)
            except TuningError as exc:
                log.warning("leaving %s out of the comparison: %s", name, exc)
                failed[name] = str(exc)
                continue
            scores.append(sc)
            default = evs.get(Schedule("numpy").key)
            results.append({
                "stencil": name,
                "best_schedule": best.to_dict(),
                "best_ms": 1e3 * statistics.median(samples[best.key]),
                "best_ms_search": 1e3 * min(float(e.median_s) for e in records.values() if e.ok),
                "recorded_schedules": len(records),
                "default_ms": 1e3 * float(default.median_s) if default and default.ok else None,
                "exhaustive_evals": len(space),
                "valid_schedules": sum(e.ok for e in evs.values()),
                "remeasured": len(todo),
                "remeasure_load": cache[key]["load"],
                "noise": statistics.median(float(r.get("noise") or 0.0) for r in measured.values()
                                           if r.get("status") == "ok"),
                "methods": {
                    m: {**sc[m].to_dict(), "neighbours": list(props[m].neighbours),
                        "candidates": [c.describe() for c in props[m].candidates],
                        "search_ratio": search_ratio(props[m], records) if m != BUDGETED else None}
                    for m in props
                },
            })  # fmt: skip
    if not results:  # nothing written: a committed page is not replaced by an empty one
        raise BenchmarkError(_nothing_compared(db, len(complete), scored, failed, args))
    encoder = LearnedEncoder.fit(
        [c["emb"] for c in complete.values()], {n: log_profile(c["evs"]) for n, c in complete.items()},
        dims=args.dims, seed=args.seed,
    )  # fmt: skip
    if args.encoder is not None:
        encoder.save(args.encoder)
        encoder_path = str(args.encoder)
    progress = _progress(searched_evs, names, space)
    summary: dict[str, Any] = {
        "stencils_requested": len(names),
        "stencils_complete": len(complete),
        "stencils_evaluated": len(results),
        "budgeted_only": args.budgeted_only,
        "fv3core_stencils_found": len(fv3_found),
        "methods": summarize(scores, seed=args.seed) if scores else {},
    }
    if scores:
        learned = summary["methods"]["learned"]
        summary["eval_fraction_of_exhaustive"] = learned["median_evaluations"] / len(space)
        bud = summary["methods"].get(BUDGETED)
        # the target: ratio <= 1.05 with <= 2% of the budgeted search's evaluations
        summary["eval_fraction_of_budgeted"] = (
            learned["median_evaluations"] / bud["median_evaluations"] if bud else None
        )
        summary["target_met"] = (
            bool(learned["median_ratio"] <= 1.05 and summary["eval_fraction_of_budgeted"] <= 0.02)
            if bud else None
        )  # fmt: skip
    payload = {
        "benchmark": NAME,
        "wall_seconds": time.monotonic() - t_run,
        "machine": machine_info(),
        "load_average": os.getloadavg(),
        "load_average_start": load_start,
        "stream_triad_gbs": stream.triad_gbs,
        "space": args.space,
        "space_size": len(space),
        "domain": list(domain),
        "k": args.k,
        "candidates": args.candidates,
        "dims": args.dims,
        "rule": args.rule,
        "rounds": args.rounds,
        "repeats": args.repeats,
        "finalists": args.finalists,
        "hardware_counters": probe().to_text(),
        "budget_search": {"evaluations": args.budget_search, "space": args.budget_space,
                          "space_size": len(budget_space), "strategy": args.budget_strategy,
                          "stencils": {n: {**b, "best": b["best"].to_dict()} for n, b in budgeted.items()}},
        "encoder": encoder_path,
        "searched_this_run": searched,
        "failed": failed,
        "missing": sorted(set(names) - set(complete) - set(failed)),
        "stale_builds": stale,
        "exhaustive_progress": progress,
        "results": results,
        "summary": summary,
    }
    write_json(args.json, payload)
    write_markdown(args.markdown, ablation_markdown(payload))
    if args.plot is not None:
        plot_ratios(payload, args.plot)
    log.info("summary: %s", summary)
    return 0


def _nothing_compared(
    db: Any, complete: int, scored: list[str], failed: dict[str, str], args: argparse.Namespace
) -> str:
    """Why a comparison scored no stencil, and what to do; names the database's machines, since
    a database searched on another machine holds nothing this one may compare."""
    head = "nothing to compare, no file written: "
    if scored:
        return head + "every scored stencil failed its re-measurement: " + "; ".join(
            f"{n}: {failed[n]}" for n in scored
        )
    held = db.machines()
    if complete >= 4:
        why = (f"--budgeted-only, and none of the {complete} complete stencils has a complete budgeted search "
               f"of --budget-space {args.budget_space} with {args.budget_search} evaluations on this machine")
    else:
        here = held.get(db.machine, (0, 0))
        why = (f"{complete} stencils have a complete exhaustive search of --space {args.space} on this machine "
               f"('{db.machine}': {here[0]} stencils, {here[1]} evaluations in {db.path})")
    others = "; ".join(f"'{m}': {n} stencils, {e} evaluations" for m, (n, e) in sorted(held.items()) if m != db.machine)
    if not others:
        return head + why + "; search first (rerun without --no-search)"
    return (head + why + f". The database holds other machines' searches ({others}); timings are only compared on "
            "the machine that made them: run the comparison there, or search here first (without --no-search)")


def _budgeted(args: argparse.Namespace, name: str) -> bool:
    if args.budget_search <= 0:
        return False
    if args.budget_stencils is None:
        return True
    from mapping.tuning.targets import canonical

    return name in {canonical(n) for n in args.budget_stencils}


def _searched(db: Any, names: list[str], space: Any, domain: tuple[int, ...]) -> dict[str, dict[str, Any]]:
    """Per stencil: its stored evaluations of ``space`` (``evs``), every stored evaluation
    (``records``: the budgeted search's too), timeouts left out of both, and its embedding."""
    from mapping.tuning.measure import TIMEOUT

    keys = {s.key for s in space}
    out = {}
    for name in names:
        records = {k: e for k, e in db.evaluations(name, domain).items() if e.status != TIMEOUT}
        out[name] = {"evs": {k: e for k, e in records.items() if k in keys}, "records": records,
                     "emb": db.embedding(name, domain)}  # fmt: skip
    return out


def _progress(searched: dict[str, dict[str, Any]], names: list[str], space: Any) -> list[dict[str, Any]]:
    """Per stencil: schedules of ``space`` evaluated, valid, and the fastest with its time."""
    from mapping.tuning.schedule import Schedule

    out = []
    for name in names:
        evs = searched[name]["evs"]
        ok = [e for e in evs.values() if e.ok]
        best_e = min(ok, key=lambda e: e.median_s) if ok else None
        default = evs.get(Schedule("numpy").key)
        out.append({
            "stencil": name, "evaluated": len(evs), "space_size": len(space), "valid": len(ok),
            "best_schedule": best_e.schedule.describe() if best_e else None,
            "best_ms": 1e3 * float(best_e.median_s) if best_e else None,
            "default_ms": 1e3 * float(default.median_s) if default and default.ok else None,
        })  # fmt: skip
    return out


def _record_budgeted(budgeted: dict[str, dict[str, Any]], result: Any) -> None:
    """Keep a budgeted search's best schedule and what it spent (none valid: nothing kept)."""
    ok = [e for e in result.evaluations if e.ok]
    if ok:
        budgeted[result.stencil] = {
            "best": min(ok, key=lambda e: e.median_s).schedule,
            "evaluations": len(result.evaluations), "builds": result.builds,
        }  # fmt: skip


def _complete(searched: dict[str, dict[str, Any]], space: Any) -> dict[str, dict[str, Any]]:
    """The stencils of :func:`_searched` whose exhaustive search of ``space`` is complete."""
    keys = {s.key for s in space}
    return {
        name: info for name, info in searched.items()
        if info["emb"] is not None and keys <= set(info["evs"]) and any(e.ok for e in info["evs"].values())
    }  # fmt: skip


def _stale_builds(
    complete: dict[str, dict[str, Any]], cache_dir: Path, finalists: int, keys: set[str]
) -> dict[str, list[str]]:
    """Per complete stencil, its search finalists whose builds do not load from the cache: a
    cache that never held them (another machine's or a new one), or a definition changed since
    its search (then the stored search timings are of the old code). Re-measuring compiles them."""
    from mapping.tuning.building import is_cached
    from mapping.tuning.targets import resolve

    stale: dict[str, list[str]] = {}
    for name, info in complete.items():
        ok = sorted((e for k, e in info["evs"].items() if k in keys and e.ok), key=lambda e: e.median_s)
        target = resolve(name)
        missing = [
            e.schedule.describe() for e in ok[:finalists]
            if e.schedule.compiled and not is_cached(target.definition, target.externals, e.schedule, cache_dir)
        ]  # fmt: skip
        if missing:
            stale[name] = missing
    if stale:
        log.warning(
            "%d of %d stencils have search finalists not in the build cache %s (listed under 'stale_builds' "
            "in the JSON): re-measuring compiles them. If the cache is new, that is all; if a definition "
            "changed since its search, its stored timings are of the old code: search it again on a fresh "
            "database ('stratoflow tune search STENCIL --db NEW')", len(stale), len(complete), cache_dir,
        )  # fmt: skip
    return stale


def _describe(d: dict[str, Any] | None) -> str:
    from mapping.tuning.schedule import Schedule

    return Schedule.from_dict(d).describe() if d else "-"


def _ratio_text(r: dict[str, Any] | None) -> str:
    return f"{r['estimate']:.3f} [{r['low']:.3f}, {r['high']:.3f}]" if r else "-"


def _method_rows(p: dict[str, Any]) -> list[list[Any]]:
    from mapping.tuning.ablation import ALL_METHODS, BUDGETED

    rows = []
    for m in ALL_METHODS:
        s = p["summary"]["methods"].get(m)
        if s is None:
            continue
        search = [r["methods"][m]["search_ratio"] for r in p["results"]
                  if m in r["methods"] and r["methods"][m]["search_ratio"] is not None]
        t = s.get("learned_vs_this")
        v = s["verdicts"]
        rows.append([
            f"`{m}`", s["median_evaluations"],
            f"{s['median_evaluations'] / p['space_size']:.1%}" if m != BUDGETED else "-",
            f"**{s['median_ratio']:.3f}**", _ratio_text(s["median_ratio_interval"])
            if s["median_ratio_interval"] else "- (a method failed somewhere)",
            v["faster"], v["same"], v["slower"], v["failed"],
            f"{statistics.median(search):.3f}" if search else "-",
            "-" if t is None else f"{t['wins']} / {t['losses']} / {t['ties']}",
            "-" if t is None else f"{math.exp(t['median_log_ratio']):.3f}",
            "-" if t is None else f"{t['p_value']:.3g}",
        ])  # fmt: skip
    return rows


_RULE_TEXT = {
    "best": "each neighbour's fastest recorded schedule, the budgeted search's included, nearest first, "
    "filled up by consensus",
    "consensus": "the schedules of the exhaustive space ranked over the neighbours together",
}


def ablation_markdown(p: dict[str, Any]) -> str:
    """The generated block of docs/benchmarks/tuning.md from a ``bench tuning`` JSON payload."""
    from mapping.tuning.ablation import ALL_METHODS

    shown = [m for m in ALL_METHODS if m in p["summary"]["methods"]]

    s = p["summary"]
    text = [
        "# Transfer tuning: leave-one-out ablation vs exhaustive search",
        "",
        "Generated by `stratoflow bench tuning --json FILE` (see docs/tuning.md); `stratoflow tune "
        "report FILE` regenerates it and the plot from the JSON. Machine: "
        f"{p['machine']['cpu']}, {p['machine']['cores']} cores, shared with other jobs "
        f"(1-minute load average {p['load_average_start'][0]:.1f} at the start, "
        f"{p['load_average'][0]:.1f} at the end); STREAM triad in the same run "
        f"{p['stream_triad_gbs']:.1f} GB/s. Space `{p['space']}` ({p['space_size']} schedules), "
        f"domain {'x'.join(map(str, p['domain']))}, k = {p['k']} neighbours, {p['candidates']} "
        f"candidates per method, learned embedding of {p['dims']} dimensions, neighbours' candidates "
        f"by the `{p.get('rule', 'consensus')}` rule ({_RULE_TEXT[p.get('rule', 'consensus')]}); "
        f"re-measured in {p['rounds']} interleaved rounds of {p['repeats']} timed runs on pinned cores "
        f"with the {p['finalists']} fastest schedules the stencil's searches recorded (the best "
        f"re-measured of them is the reference). Hardware counters: {p['hardware_counters']}. "
        f"Wall time {p['wall_seconds'] / 60:.1f} min.",
        "",
        f"Stencils with a complete exhaustive search: {s['stencils_complete']} of "
        f"{s['stencils_requested']} requested; compared: {s['stencils_evaluated']}"
        + (" (only those whose budgeted search is complete; all complete ones serve as neighbours)."
           if s.get("budgeted_only") else "."),
    ]
    if p.get("failed"):
        text += ["", "Left out (their baseline or re-measurement failed): "
                 + "; ".join(f"`{n}`: {e}" for n, e in p["failed"].items())]
    if p.get("missing"):
        text += ["", f"Search not complete yet ({len(p['missing'])}, resume by rerunning): "
                 + ", ".join(f"`{n}`" for n in p["missing"])]
    text.append("")
    if not p["results"]:
        return "\n".join(text + ["Fewer than four stencils are complete: nothing to compare.", ""])
    learned = s["methods"]["learned"]
    text += [
        f"- learned embedding: median transferred / best **{learned['median_ratio']:.3f}** "
        f"(95% interval over stencils {_ratio_text(learned['median_ratio_interval'])}; target <= 1.05) "
        f"with {learned['median_evaluations']:g} evaluations, {s['eval_fraction_of_exhaustive']:.1%} of "
        f"the exhaustive search's {p['space_size']}"
        + (f" and {s['eval_fraction_of_budgeted']:.1%} of the budgeted search's "
           f"({p['budget_search']['strategy']}, space `{p['budget_search']['space']}` of "
           f"{p['budget_search']['space_size']} schedules; target <= 2%)"
           if s.get("eval_fraction_of_budgeted") is not None else
           " (no budgeted search in this run: `--budget-search N`)"),
        "",
        markdown_table(
            ["method", "evaluations", "of exhaustive", "median ratio to best", "95% interval",
             "faster", "same", "slower", "failed", "median ratio (search timings)",
             "learned wins / losses / ties", "learned / this (median)", "paired p (Wilcoxon)"],
            _method_rows(p),
        ),
        "",
        "Per stencil: each method's fastest candidate re-measured over the best re-measured finalist, "
        "with its bootstrap 95% interval; a verdict other than *same* needs the interval to exclude 1.",
        "",
        markdown_table(
            ["stencil", "best (re-measured)", "best ms", *shown, "learned neighbours"],
            [
                [f"`{r['stencil']}`", f"`{_describe(r['best_schedule'])}`", r["best_ms"],
                 *[(_ratio_text(r["methods"][m]["ratio"]) + f" {r['methods'][m]['verdict']}")
                   if m in r["methods"] else "-" for m in shown],
                 ", ".join(f"`{n}`" for n in r["methods"]["learned"]["neighbours"])]
                for r in p["results"]
            ],
        ),  # fmt: skip
        "",
        "Evaluations are schedules timed on the held-out stencil (each validated against the numpy "
        "backend first). *Search timings*: the same ratio from the searches' own timings (over the "
        "candidates they evaluated), biased towards 1 from below by selecting the minimum of many noisy "
        "timings.",
        "",
    ]
    return "\n".join(text)


def plot_ratios(p: dict[str, Any], path: Path) -> Path:
    """PNG: every method's ratio to the best per stencil with its 95% interval (log scale)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mapping.tuning.ablation import ALL_METHODS

    methods = [m for m in ALL_METHODS if m in p["summary"]["methods"]]
    results = p["results"]
    if not results:
        raise BenchmarkError("no leave-one-out results to plot (fewer than four complete stencils)")
    fig, ax = plt.subplots(figsize=(max(8.0, 0.28 * len(results)), 4.8), layout="constrained")
    x = list(range(len(results)))
    for i, m in enumerate(methods):
        pts = [(j + (i - (len(methods) - 1) / 2) * 0.13, r["methods"][m]["ratio"]) for j, r in enumerate(results)
               if m in r["methods"] and r["methods"][m]["ratio"]]  # fmt: skip
        if not pts:
            continue
        xs = [a for a, _ in pts]
        est = [r["estimate"] for _, r in pts]
        err = [[r["estimate"] - r["low"] for _, r in pts], [r["high"] - r["estimate"] for _, r in pts]]
        ax.errorbar(xs, est, yerr=err, fmt="o", ms=3, capsize=1.5, lw=0.8, label=m)
    ax.axhline(1.0, color="k", lw=0.8)
    ax.axhline(1.05, color="grey", lw=0.8, ls="--")
    ax.set_yscale("log")
    ax.set_xticks(x, [r["stencil"].split(":")[-1].split("[")[0] for r in results], rotation=90, fontsize=6)
    ax.set_ylabel("transferred / best (re-measured)")
    ax.set_title(f"Leave-one-out transfer tuning, {len(results)} stencils, space {p['space']} "
                 f"({p['space_size']} schedules), 95% bootstrap intervals", fontsize=9)  # fmt: skip
    ax.legend(fontsize=7, ncol=len(methods))
    buf = io.BytesIO()
    fig.savefig(buf, dpi=130, format="png")
    plt.close(fig)
    return atomic_write_bytes(path, buf.getvalue())
