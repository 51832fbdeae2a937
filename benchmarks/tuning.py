"""Transfer tuning, leave-one-out: transferred schedules vs each stencil's exhaustive optimum.

For every stencil (the library, plus module-level GTScript definitions found in fv3core, the
directional ones as their x variant): embed it and search its schedule space exhaustively
(resumable: evaluations are stored in the tuning database and skipped when present, so the
benchmark can be completed across runs). Then, for each stencil whose exhaustive search is
complete, hold it out: transfer from the other complete stencils (k nearest neighbours, by the
``best`` and the ``consensus`` candidate rule), and compare with its own exhaustive best.
The candidates of both rules and the exhaustive search's fastest finalists are re-measured
in interleaved rounds under identical conditions (``--confirm-rounds``); the transfer result is
the fastest re-measured candidate, the exhaustive best the fastest re-measured finalist. The
ratio from the search-time timings is reported beside it. Evaluations are counted as timed
schedules and, separately, as compilations.
"""

from __future__ import annotations

import argparse
import json
import logging
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
    p.add_argument("--rule", choices=("best", "consensus"), default="consensus",
                   help="candidates: each neighbour's best schedule, or the k schedules fastest over "
                   "all neighbours together (default)")
    p.add_argument("--candidates", type=int, default=None,
                   help="candidates tried by the consensus rule (default k)")
    p.add_argument("--remeasure-both-rules", action="store_true",
                   help="re-measure the other rule's candidates too (default: only --rule's; the "
                   "other rule is then compared on the search-time timings)")
    p.add_argument("--confirm-rounds", type=int, default=3,
                   help="rounds re-measuring the transfer candidates interleaved with the exhaustive "
                   "best under identical conditions (0: compare the search-time timings)")
    p.add_argument("--finalists", type=int, default=2,
                   help="the exhaustive search's fastest N schedules re-measured with the transfer "
                   "candidates; the fastest of them re-measured is the exhaustive best (default 2)")
    p.add_argument("--remeasure", action="store_true",
                   help="ignore re-measurements cached next to --json")
    p.add_argument("--db", type=Path, default=None, help="tuning database (default: the user one)")
    p.add_argument("--cache-dir", type=Path, default=None, help="build cache directory")
    p.add_argument("--jobs", type=int, default=2, help="parallel compilations")
    p.add_argument("--repeats", type=int, default=7, help="timed runs per schedule (median)")
    p.add_argument("--build-timeout", type=float, default=3600.0, help="seconds per compilation")
    p.add_argument("--max-minutes", type=float, default=None,
                   help="stop starting new exhaustive searches after this long (resume later)")
    p.add_argument("--no-search", action="store_true",
                   help="only evaluate leave-one-out on what the database already holds")
    p.add_argument("--markdown", type=Path, default=DOCS_BENCH / "tuning.md",
                   help="Markdown table to write (default docs/benchmarks/tuning.md)")


def _default_stencils() -> list[str]:
    """The library and fv3core's definitions; of directional ones only the x variants (the y
    variant is the same code transposed: it would be a near-duplicate neighbour)."""
    from mapping.tuning.targets import discover, library_names

    return library_names() + [n for n in discover() if "[y" not in n]


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from mapping.tuning.counters import probe
    from mapping.tuning.db import TuningDB
    from mapping.tuning.measure import TIMEOUT, Evaluator, MeasureConfig, default_cache_dir
    from mapping.tuning.schedule import Schedule
    from mapping.tuning.search import Tuner
    from mapping.tuning.space import get_space
    from mapping.tuning.transfer import CANDIDATE_RULES, transfer

    t_run = time.monotonic()
    if args.k < 1:
        raise BenchmarkError("--k must be >= 1")
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
    if not args.no_search:
        for name in names:
            if args.max_minutes is not None and time.monotonic() - t_start > 60 * args.max_minutes:
                log.warning("--max-minutes reached: not searching %s (rerun to resume)", name)
                continue
            with tqdm(total=len(space) + 1, desc=f"exhaustive {name}", unit="sched", disable=None) as bar:
                tuner = Tuner(name, Evaluator(name, cfg), db, progress=bar.update)
                if db.embedding(name, domain) is None:
                    tuner.profile(stream.triad_gbs)
                else:
                    bar.update(1)
                res = tuner.search(space, "exhaustive")
            searched[name] = {"builds": res.builds, "runs": res.runs, "reused": res.reused}

    keys = {s.key for s in space}
    build_keys = {s.build_key for s in space if s.compiled}
    complete: dict[str, dict[str, Any]] = {}
    for name in names:
        evs = {k: e for k, e in db.evaluations(name, domain).items() if e.status != TIMEOUT}
        emb = db.embedding(name, domain)
        if emb is not None and keys <= set(evs):
            complete[name] = {"evs": evs, "emb": emb}
    stale = _stale_builds(complete, cfg.cache_dir, args.finalists, keys)
    confirm_path = args.json.with_name(args.json.stem + ".confirm.json")
    confirmed_cache: dict[str, Any] = {}
    if confirm_path.exists() and not args.remeasure:
        confirmed_cache = json.loads(confirm_path.read_text())
    results = []
    for name, info in tqdm(complete.items(), desc="leave-one-out", unit="stencil", disable=None):
        evs = info["evs"]
        ok = {k: e for k, e in evs.items() if k in keys and e.ok}
        if not ok:
            continue
        best = best_search = min(ok.values(), key=lambda e: e.median_s)
        default = evs.get(Schedule("numpy").key)
        pool = [c["emb"] for n, c in complete.items() if n != name]
        if not pool:
            continue

        def lookup(cands: list[Schedule], evs: dict = evs, name: str = name) -> list:
            missing = [c for c in cands if c.key not in evs]
            if missing:
                raise BenchmarkError(f"{name}: candidate schedules outside the searched space: {missing}")
            return [evs[c.key] for c in cands]

        trs = {
            rule: transfer(info["emb"], db, domain, lookup, k=args.k, pool=pool, space_size=len(space),
                           rule=rule, candidates=args.candidates)
            for rule in CANDIDATE_RULES
        }  # fmt: skip
        # re-measure every candidate and the exhaustive best interleaved, same conditions
        remeasured: dict[str, Any] = {}
        remeasure_load = None
        if args.confirm_rounds > 0:
            rules = CANDIDATE_RULES if args.remeasure_both_rules else (args.rule,)
            todo = {c.key: c for rule in rules for c in trs[rule].candidates}
            finalists = sorted(ok.values(), key=lambda e: e.median_s)[: args.finalists]
            todo.update({e.schedule.key: e.schedule for e in finalists})
            cache_key = f"{name}|{','.join(sorted(todo))}|{args.confirm_rounds}"
            loads = confirmed_cache.setdefault("__load__", {})
            if cache_key not in confirmed_cache:
                ev = Evaluator(name, cfg)
                before = os.getloadavg()[0]
                confirmed_cache[cache_key] = ev.interleaved(list(todo.values()), args.confirm_rounds)
                loads[cache_key] = [before, os.getloadavg()[0]]
                atomic_write_text(confirm_path, json.dumps(confirmed_cache, indent=1) + "\n")
            remeasured = confirmed_cache[cache_key]
            remeasure_load = loads.get(cache_key)

        def seconds(s: Schedule, measured: dict = remeasured, evs: dict = evs) -> float:
            rec = measured.get(s.key) if measured else None
            if measured:
                return float(rec["median_s"]) if rec and rec.get("status") == "ok" else float("inf")
            e = evs[s.key]
            return float(e.median_s) if e.ok else float("inf")

        def search_seconds(s: Schedule, evs: dict = evs) -> float:
            e = evs[s.key]
            return float(e.median_s) if e.ok else float("inf")

        if remeasured:  # the exhaustive search's pick after re-measuring its finalists
            best = min(finalists, key=lambda e: seconds(e.schedule))
        t_ref = seconds(best.schedule)
        per_rule = {}
        for rule, tr in trs.items():
            both = not remeasured or all(c.key in remeasured for c in tr.candidates)
            timing = seconds if both else search_seconds  # not re-measured: search timings
            ref = t_ref if both else float(best_search.median_s)
            winner = min(tr.candidates, key=timing) if tr.candidates else None
            t = timing(winner) if winner else float("nan")
            search_ok = [e for e in tr.evaluations if e.ok]
            t_search = min(float(e.median_s) for e in search_ok) if search_ok else float("nan")
            per_rule[rule] = {
                "neighbours": [n for n, _ in tr.neighbours],
                "candidates": [c.describe() for c in tr.candidates],
                "transfer_schedule": winner.to_dict() if winner else None,
                "transfer_evals": len(tr.candidates),
                "transfer_builds": len({c.build_key for c in tr.candidates if c.compiled}),
                "transfer_ms": 1e3 * t,
                "transfer_over_best": t / ref,
                "remeasured": bool(remeasured) and both,
                "search_transfer_over_best": t_search / float(best_search.median_s),
            }
        main = per_rule[args.rule]
        t_main = main["transfer_ms"] / 1e3
        results.append({
            "stencil": name,
            "rule": args.rule,
            "neighbours": main["neighbours"],
            "transfer_schedule": main["transfer_schedule"],
            "best_schedule": best.schedule.to_dict(),
            "transfer_evals": main["transfer_evals"],
            "exhaustive_evals": len(space),
            "transfer_builds": main["transfer_builds"],
            "exhaustive_builds": len(build_keys),
            "valid_schedules": len(ok),
            "transfer_ms": main["transfer_ms"],
            "best_ms": 1e3 * t_ref,
            "best_ms_search": 1e3 * float(best_search.median_s),
            "default_ms": 1e3 * float(default.median_s) if default and default.ok else None,
            "transfer_over_best": main["transfer_over_best"],
            "remeasured": bool(remeasured),
            "remeasure_load": remeasure_load,  # 1-minute load average before/after, if recorded
            "confirm_noise": statistics.median(r.get("noise", 0.0) for r in remeasured.values()
                                               if r.get("status") == "ok") if remeasured else None,
            "speedup_vs_default": float(default.median_s) / t_main if default and default.ok else None,
            "best_speedup_vs_default": float(default.median_s) / t_ref if default and default.ok else None,
            "median_noise": statistics.median(e.noise or 0.0 for e in ok.values()),
            "rules": per_rule,
        })
    progress = []
    for name in names:
        evs = {k: e for k, e in db.evaluations(name, domain).items() if k in keys and e.status != TIMEOUT}
        ok = [e for e in evs.values() if e.ok]
        best = min(ok, key=lambda e: e.median_s) if ok else None
        default = evs.get(Schedule("numpy").key)
        progress.append({
            "stencil": name,
            "evaluated": len(evs),
            "space_size": len(space),
            "valid": len(ok),
            "best_schedule": best.schedule.describe() if best else None,
            "best_ms": 1e3 * float(best.median_s) if best else None,
            "default_ms": 1e3 * float(default.median_s) if default and default.ok else None,
            "best_speedup_vs_default": float(default.median_s) / float(best.median_s)
            if best and default and default.ok else None,
        })
    summary: dict[str, Any] = {
        "stencils_requested": len(names),
        "stencils_complete": len(complete),
        "stencils_evaluated": len(results),
        "fv3core_stencils_found": len(fv3_found),
    }
    if results:
        for rule in CANDIDATE_RULES:
            summary[f"median_transfer_over_best_{rule}"] = statistics.median(
                r["rules"][rule]["transfer_over_best"] for r in results
            )
            summary[f"median_search_transfer_over_best_{rule}"] = statistics.median(
                r["rules"][rule]["search_transfer_over_best"] for r in results
            )
        summary.update(
            median_transfer_over_best=statistics.median(r["transfer_over_best"] for r in results),
            median_eval_fraction=statistics.median(r["transfer_evals"] / r["exhaustive_evals"] for r in results),
            median_build_fraction=statistics.median(r["transfer_builds"] / r["exhaustive_builds"] for r in results),
        )
        summary["target_met"] = bool(
            summary["median_transfer_over_best"] <= 1.05 and summary["median_eval_fraction"] <= 0.05
        )
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
        "hardware_counters": probe().to_text(),
        "rule": args.rule,
        "confirm_rounds": args.confirm_rounds,
        "searched_this_run": searched,
        "missing": sorted(set(names) - set(complete)),
        "stale_builds": stale,
        "exhaustive_progress": progress,
        "results": results,
        "summary": summary,
    }
    write_json(args.json, payload)
    _write_markdown(args.markdown, payload)
    log.info("summary: %s", summary)
    return 0


def _stale_builds(
    complete: dict[str, dict[str, Any]], cache_dir: Path, finalists: int, keys: set[str]
) -> dict[str, list[str]]:
    """Per complete stencil, its search finalists whose builds no longer load from the cache:
    the definition changed since its exhaustive search (re-measuring would compile it anew, and
    the stored search timings are of the old code)."""
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
            log.warning(
                "%s: builds of %s are not in %s: its definition changed since its exhaustive search; "
                "re-measuring compiles them anew (rerun 'stratoflow tune search %s' on a fresh database "
                "for results of the new code)", name, missing, cache_dir, name,
            )  # fmt: skip
            stale[name] = missing
    return stale


def _describe(d: dict[str, Any] | None) -> str:
    from mapping.tuning.schedule import Schedule

    return Schedule.from_dict(d).describe() if d else "-"


def _write_markdown(path: Path, p: dict[str, Any]) -> None:
    rows = [
        [
            r["stencil"], ", ".join(r["neighbours"]), r["transfer_evals"], r["exhaustive_evals"],
            r["transfer_builds"], r["exhaustive_builds"],
            f"`{_describe(r['transfer_schedule'])}`", f"`{_describe(r['best_schedule'])}`",
            r["transfer_ms"], r["best_ms"], r["transfer_over_best"],
            r["rules"]["best" if r["rule"] != "best" else "consensus"]["transfer_over_best"],
            r["rules"][r["rule"]]["search_transfer_over_best"],
            r["speedup_vs_default"] or "-", f"{r['median_noise']:.0%}",
            f"{r['confirm_noise']:.0%}" if r["confirm_noise"] is not None else "-",
            "-" if not r.get("remeasure_load") else f"{r['remeasure_load'][0]:.1f} / {r['remeasure_load'][1]:.1f}",
        ]
        for r in p["results"]
    ]
    s = p["summary"]
    text = [
        "# Transfer tuning: leave-one-out vs exhaustive search",
        "",
        "Generated by `stratoflow bench tuning --json FILE` (see docs/tuning.md). Machine: "
        f"{p['machine']['cpu']}, {p['machine']['cores']} cores, shared with other jobs "
        f"(1-minute load average {p.get('load_average_start', p['load_average'])[0]:.1f} at the start of this run, "
        f"{p['load_average'][0]:.1f} at the end); STREAM triad in the same run: "
        f"{p['stream_triad_gbs']:.1f} GB/s. Space `{p['space']}` ({p['space_size']} schedules), "
        f"domain {'x'.join(map(str, p['domain']))}, k = {p['k']}. Hardware counters: "
        f"{p['hardware_counters']}.",
        "",
        f"Stencils complete: {s['stencils_complete']} of {s['stencils_requested']} requested "
        f"(fv3core GTScript definitions found: {s['fv3core_stencils_found']}). "
        + (f"Not yet complete (resume by rerunning): {', '.join(p['missing'])}." if p["missing"] else ""),
        "",
    ]
    if p.get("stale_builds"):
        text += [
            "Definitions changed since their exhaustive search (finalist builds not in the cache, "
            "compiled anew for the re-measurement): "
            + ", ".join(f"{n} ({len(v)})" for n, v in p["stale_builds"].items()) + ".",
            "",
        ]
    if p.get("wall_seconds") is not None:
        text += [f"Wall time of this run: {p['wall_seconds'] / 60:.1f} min.", ""]
    other = "best" if p["rule"] != "best" else "consensus"
    if rows:
        text += [
            f"- median transferred runtime / exhaustive best: **{s['median_transfer_over_best']:.3f}** "
            f"(target <= 1.05; candidate rule `{p['rule']}`, "
            + (f"re-measured in {p['confirm_rounds']} interleaved rounds)" if p["confirm_rounds"]
               else "search-time timings)"),
            f"- the same with the `{other}` rule "
            + ("(re-measured too)" if p["results"][0]["rules"][other]["remeasured"]
               else "(its candidates not re-measured: search-time timings)")
            + f": {s[f'median_transfer_over_best_{other}']:.3f}; "
            "from the search-time timings instead of the re-measurement: "
            f"{s['median_search_transfer_over_best_' + p['rule']]:.3f}",
            f"- median evaluations used by transfer / exhaustive: **{s['median_eval_fraction']:.3f}** "
            f"(target <= 0.05); compilations: {s['median_build_fraction']:.3f}",
            "",
            markdown_table(
                ["stencil", "neighbours", "transfer evals", "exhaustive evals", "transfer builds",
                 "exhaustive builds", "transferred schedule", "exhaustive best", "transfer ms",
                 "best ms", "transfer/best", f"transfer/best ({other} rule)",
                 "transfer/best (search timings)", "speedup vs numpy", "median noise (search)",
                 "median noise (re-measured)", "load before / after re-measuring"],
                rows,
            ),
        ]
    else:
        text.append(
            "Fewer than two stencils have a complete exhaustive search yet: nothing to compare.\n"
        )
    text += [
        "",
        "## Exhaustive search progress",
        "",
        markdown_table(
            ["stencil", "evaluated", "valid", "best schedule (so far)", "best ms", "numpy ms",
             "speedup vs numpy"],
            [
                [q["stencil"], f"{q['evaluated']} / {q['space_size']}", q["valid"],
                 f"`{q['best_schedule']}`" if q["best_schedule"] else "-",
                 q["best_ms"] if q["best_ms"] is not None else "-",
                 q["default_ms"] if q["default_ms"] is not None else "-",
                 q["best_speedup_vs_default"] if q["best_speedup_vs_default"] else "-"]
                for q in p["exhaustive_progress"]
            ],
        ),
        "Evaluations are timed schedules (median of the repeats after warm-up, each validated "
        "against the numpy backend first); builds are distinct compiled artefacts (schedules that "
        "differ only in OpenMP run-time settings share one). Noise is (max - min) / median of a "
        "schedule's repeats. With re-measurement the exhaustive best is the fastest re-measured of "
        "the search's finalists and the transfer result the fastest re-measured candidate (same "
        "rounds, same conditions), so transfer/best < 1 happens when the search's pick was a "
        "noise winner; without it, both come from the search-time timings and transfer/best >= 1 "
        "by construction (the minimum over 61 noisy timings, with its selection bias). The "
        "'(search timings)' column is always the latter.",
    ]
    write_markdown(path, "\n".join(text) + "\n")
