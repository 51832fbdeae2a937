"""fv3core against GFDL's Fortran FV3: every reference run of ``../shared/fv3-reference`` run
again with fv3core from that run's namelist, FV3's SWNORMS/SWINV norms computed every 6 model
hours with :mod:`fv3core.validation.norms`, side by side with the norms FV3 printed.

    stratoflow bench fv3-validation --runs tc2_C24_d1 --backend numpy
    stratoflow bench fv3-validation --max-resolution 48 --backend gt:cpu_ifirst
    python -m benchmarks.fv3_validation --render-only      # the page from the JSON alone

Writes the JSON (``--json``, default docs/fv3core/validation.json; runs of earlier invocations
stay unless run again), the generated block of docs/fv3core/validation.md and one PNG per run
(docs/fv3core/validation_<run>.png).  Also recomputes FV3's printed norms from FV3's own netCDF
output, which checks the norm code against the Fortran diagnostic.  A fidelity measurement,
not a timing: it reports no STREAM triad, only the run time of each case.
"""

from __future__ import annotations

import argparse
import logging
import math
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.common import (
    BenchmarkError,
    git_revision,
    load_payload,
    machine_info,
    write_json,
    write_markdown,
)
from fv3core.errors import FV3ConfigError, FV3ReferenceError
from fv3core.validation.norms import (
    ALL_NAMES,
    ERROR_NORMS,
    GRAVITY,
    RADIUS,
    Invariants,
    ShallowWaterFields,
    agreeing_digits,
    coriolis,
    invariants,
    sw_norms,
)
from fv3core.validation.reference import FV3Reference, reference_root, reference_runs
from stencils.atomic import atomic_output

if TYPE_CHECKING:  # fv3core.config imports GT4Py: loaded when a benchmark runs, not at CLI start
    from fv3core.config import FV3Config

NAME = "fv3-validation"
HELP = "fv3core vs the Fortran FV3 reference runs: FV3's norms every 6 h, ours next to FV3's"
DOCS = Path(__file__).resolve().parent.parent / "docs" / "fv3core"
HISTORY_S = 21600.0  # FV3's print_freq = 6 h
#: the key of fv3core's runs in the JSON (``runs.fv3``): FV3's scheme, the one fv3core has
SCHEMES = ("fv3",)
log = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--reference", type=Path, default=None,
                   help="folder of the reference runs (default $STRATOFLOW_FV3_REFERENCE or "
                   "../shared/fv3-reference)")  # fmt: skip
    p.add_argument("--runs", nargs="+", default=None,
                   help="reference runs to run (default: all), e.g. tc2_C24_d1 tc2_C48_d1")
    p.add_argument("--max-resolution", type=int, default=None,
                   help="skip runs finer than C<N> (numpy at C96 for 5 days takes hours)")
    p.add_argument("--backend", default="numpy", help="GT4Py backend (default numpy)")
    p.add_argument("--json", type=Path, default=DOCS / "validation.json",
                   help="results (default docs/fv3core/validation.json)")
    p.add_argument("--markdown", type=Path, default=DOCS / "validation.md",
                   help="page whose generated block is rewritten (default docs/fv3core/validation.md)")
    p.add_argument("--render-only", action="store_true",
                   help="run nothing: rewrite the page and plots from the JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


# -- configuration ----------------------------------------------------------------------------


def config_for(ref: FV3Reference, backend: str) -> FV3Config:
    """The FV3Config of ``ref``'s namelist on ``backend``."""
    from fv3core.config import FV3Config

    return FV3Config.from_namelist(ref.path / "input.nml", backend=backend)


# -- measuring ----------------------------------------------------------------------------------


def printed_rows(ref: FV3Reference) -> list[dict[str, Any]]:
    return [{"hours": h, **row} for h, row in ref.printed_norms().rows()]


def reproduce_reference(ref: FV3Reference) -> dict[str, dict[str, float]]:
    """FV3's printed norms recomputed from its netCDF output (t = 0 and every output time):
    per quantity the largest relative and absolute deviation and the fewest agreeing digits.
    The enstrophy uses the files' ``vort`` + f0 and FV3's printed t = 0 enstrophy."""
    grid, table = ref.grid(), ref.printed_norms()
    f0 = coriolis(grid.lon, grid.lat)
    start = ref.initial().fields()
    c0 = invariants(start, grid.area)
    first = Invariants(c0.Hmin, c0.Hmax, c0.mass, c0.energy, table.at(0.0)["enstrophy"])
    out: dict[str, dict[str, float]] = {}
    for hours in ref.output_times():
        ours = sw_norms(ref.output(hours).fields(f0), start, grid.area, initial_invariants=first)
        printed, text = table.at(hours), table.printed(hours)
        for name in ALL_NAMES:
            a, b = ours[name], printed[name]
            r = out.setdefault(name, {"max_rel": 0.0, "max_abs": 0.0, "min_digits": 16})
            r["max_abs"] = max(r["max_abs"], abs(a - b))
            r["max_rel"] = max(r["max_rel"], abs(a - b) / abs(b) if b else 0.0)
            r["min_digits"] = min(r["min_digits"], agreeing_digits(a, float(text[name])))
    return out


def run_case(ref: FV3Reference, backend: str, progress: bool) -> dict[str, Any]:
    """fv3core on ``ref``'s configuration with our norms every 6 h next to FV3's."""
    from fv3core.experiments.driver import run

    cfg, deviations = config_for(ref, backend), []
    gravity = cfg.physical_constants.grav
    log.info("%s: %s", ref.name, cfg)
    t0 = time.perf_counter()
    result = run(cfg, progress=progress, history_every_s=HISTORY_S)
    wall = time.perf_counter() - t0
    if not result.history or result.area is None:
        raise BenchmarkError(f"{ref.name}: the driver returned no history (history_every_s)")
    radius = math.sqrt(float(result.area.sum()) / (4.0 * math.pi))
    if gravity != GRAVITY:
        deviations.append(f"g = {gravity} m s-2 in the model (FV3: {GRAVITY})")
    if abs(radius / RADIUS - 1.0) > 1e-9:
        deviations.append(f"radius {radius:.6g} m (FV3: {RADIUS:.6g})")
    start = ShallowWaterFields.from_output(result.history[0][1])
    first = invariants(start, result.area, gravity)
    printed = ref.printed_norms()
    rows = []
    for seconds, fields in result.history:
        hours = seconds / 3600.0
        ours = sw_norms(ShallowWaterFields.from_output(fields), start, result.area,
                        gravity=gravity, initial_invariants=first)  # fmt: skip
        try:
            fv3 = printed.at(hours)
        except FV3ReferenceError:
            fv3 = None
        rows.append({"hours": hours, "ours": ours, "fv3": fv3})
    return {
        "run": ref.name, "resolution": ref.resolution, "run_hours": ref.run_hours,
        "scheme": "fv3", "backend": backend,
        "config": cfg.to_dict(), "deviations": deviations, "gravity": gravity,
        "steps": result.steps, "dt": result.dt, "step_seconds": result.seconds,
        "wall_seconds": wall, "revision": git_revision(), "radius": radius, "rows": rows,
    }  # fmt: skip


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    if args.render_only or args.json.exists():  # render-only needs it; a run adds to it
        payload = load_payload(args.json)
    else:
        payload = {}
    runs = payload.setdefault("runs", {}).setdefault("fv3", {})
    if not args.render_only:
        root = args.reference if args.reference is not None else reference_root()
        refs = {r.name: r for r in reference_runs(root)}
        wanted = args.runs or sorted(refs)
        unknown = sorted(set(wanted) - set(refs))
        if unknown:
            raise BenchmarkError(f"unknown reference run(s) {unknown}; {root} has {sorted(refs)}")
        payload.update({"benchmark": NAME, "machine": machine_info(), "reference_root": str(root)})
        payload["references"] = {name: {"resolution": r.resolution, "run_hours": r.run_hours,
                                        "printed": printed_rows(r)}
                                 for name, r in refs.items()}  # fmt: skip
        payload["reproduction"] = {name: reproduce_reference(r) for name, r in refs.items()}
        for name in wanted:
            ref = refs[name]
            if args.max_resolution is not None and ref.resolution > args.max_resolution:
                log.info("%s: C%d > --max-resolution %d, skipped", name, ref.resolution,
                         args.max_resolution)  # fmt: skip
                continue
            try:
                runs[name] = run_case(ref, args.backend, not args.no_progress)
            except FV3ConfigError as exc:
                raise BenchmarkError(f"{name}: {exc}") from exc
            write_json(args.json, payload)  # after every case: a long sweep keeps what it has
        write_json(args.json, payload)
    if not payload.get("references"):
        raise BenchmarkError(f"{args.json} has no reference norms: run without --render-only")
    plots = {(scheme, name): plot_case(r, args.markdown.parent / plot_name(scheme, name))
             for scheme, by_name in payload["runs"].items()
             for name, r in sorted(by_name.items())}  # fmt: skip
    write_markdown(args.markdown, render(payload, plots))
    return 0


# -- the page -----------------------------------------------------------------------------------


def plot_name(scheme: str, name: str) -> str:
    return f"validation_{name}.png" if scheme == "fv3" else f"validation_{name}_{scheme}.png"


def _e(x: float | None) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3e}"


def _ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or b == 0.0 or math.isnan(a):
        return "—"
    return f"{a / b:.2f}"


def _digits(a: float | None, b: float | None) -> str:
    return "—" if a is None or b is None else str(agreeing_digits(a, b))


def case_tables(r: dict[str, Any]) -> list[str]:
    """Per 6 h line: ours / FV3 (ratio) of the errors; the invariants' changes with ratios,
    Hmin/Hmax with agreeing digits."""
    err_head = ["hours"] + [f"{n} ours / FV3 (ratio)" for n in ERROR_NORMS]
    inv_head = ["hours", "mass_n ours / FV3", "energy_n ours / FV3 (ratio)",
                "enstr_n ours / FV3 (ratio)", "Hmin ours / FV3 (digits)",
                "Hmax ours / FV3 (digits)"]  # fmt: skip
    err = ["| " + " | ".join(err_head) + " |", "|" + "---|" * len(err_head)]
    inv = ["| " + " | ".join(inv_head) + " |", "|" + "---|" * len(inv_head)]
    for row in r["rows"]:
        o, f = row["ours"], row["fv3"] or {}
        h = f"{row['hours']:g}"
        err.append("| " + " | ".join([h] + [
            f"{_e(o[n])} / {_e(f.get(n))} ({_ratio(o[n], f.get(n))})" for n in ERROR_NORMS
        ]) + " |")  # fmt: skip
        inv.append("| " + " | ".join([
            h, f"{_e(o['mass_n'])} / {_e(f.get('mass_n'))}",
            *(f"{_e(o[n])} / {_e(f.get(n))} ({_ratio(o[n], f.get(n))})" for n in ("energy_n", "enstr_n")),
            *(f"{o[n]:.3f} / {f[n]:.3f} ({_digits(o[n], f.get(n))})" if n in f else f"{o[n]:.3f} / —"
              for n in ("Hmin", "Hmax")),
        ]) + " |")  # fmt: skip
    return err + [""] + inv


def _final(rows: list[dict[str, Any]], key: str | None = None) -> dict[str, float] | None:
    if not rows:
        return None
    last = rows[-1]
    return last[key] if key else last


def convergence_table(payload: dict[str, Any]) -> list[str]:
    """Orders log2(e_N / e_2N) at the last time of the runs of equal length: FV3's (from the
    printed norms) next to ours (where both resolutions were run)."""
    refs, by_scheme = payload.get("references", {}), payload.get("runs", {})
    schemes = [s for s in SCHEMES if by_scheme.get(s)]
    head = " / ".join(["FV3", *(f"ours ({s})" for s in schemes)])
    lines = ["| days | C -> 2C | " + " | ".join(f"{n} {head}" for n in ERROR_NORMS) + " |",
             "|" + "---|" * (2 + len(ERROR_NORMS))]  # fmt: skip
    by_days: dict[float, dict[int, str]] = {}
    for name, r in refs.items():
        by_days.setdefault(r["run_hours"] / 24.0, {})[r["resolution"]] = name
    for days, by_n in sorted(by_days.items()):
        ns = sorted(by_n)
        for n, m in zip(ns, ns[1:], strict=False):
            if m != 2 * n:
                continue
            fv3_a, fv3_b = _final(refs[by_n[n]]["printed"]), _final(refs[by_n[m]]["printed"])
            finals = []
            for scheme in schemes:
                runs = by_scheme[scheme]
                finals.append([_final(runs[by_n[k]]["rows"], "ours") if by_n[k] in runs else None
                               for k in (n, m)])  # fmt: skip
            cells = []
            for q in ERROR_NORMS:
                orders = [_order(fv3_a and fv3_a[q], fv3_b and fv3_b[q])]
                orders += [_order(a and a[q], b and b[q]) for a, b in finals]
                cells.append(" / ".join(orders))
            lines.append(f"| {days:g} | C{n} -> C{m} | " + " | ".join(cells) + " |")
    return lines


def _order(a: float | None, b: float | None) -> str:
    if not a or not b or a <= 0 or b <= 0:
        return "—"
    return f"{math.log2(a / b):.2f}"


def reproduction_table(payload: dict[str, Any]) -> list[str]:
    rep = payload.get("reproduction", {})
    if not rep:
        return []
    names = sorted(rep)
    lines = ["| quantity | fewest agreeing digits (of 16) | largest relative deviation | "
             "largest absolute deviation |", "|---|---|---|---|"]  # fmt: skip
    for q in ALL_NAMES:
        vals = [rep[n][q] for n in names if q in rep[n]]
        if not vals:
            continue
        lines.append(f"| {q} | {min(v['min_digits'] for v in vals)} | "
                     f"{max(v['max_rel'] for v in vals):.1e} | "
                     f"{max(v['max_abs'] for v in vals):.1e} |")  # fmt: skip
    return lines


def fewest_digits(r: dict[str, Any]) -> dict[str, int]:
    """Per norm: the fewest significant digits in which ours and FV3's printed value agree over
    the run's 6-hour lines after t = 0 (mass_n, round-off in both, is left out)."""
    names = (*ERROR_NORMS, "energy_n", "enstr_n", "Hmin", "Hmax")
    rows = [row for row in r["rows"] if row["fv3"] and row["hours"] > 0]
    return {n: min(agreeing_digits(row["ours"][n], row["fv3"][n]) for row in rows)
            for n in names} if rows else {}  # fmt: skip


SCHEME_TITLES = {"fv3": "FV3's scheme"}


def scheme_sections(scheme: str, runs: dict[str, Any], plots: dict[tuple[str, str], Path]
                    ) -> list[str]:  # fmt: skip
    """The page's section of one scheme: per run its settings, digits, tables and plot."""
    md: list[str] = []
    for name, r in sorted(runs.items()):
        days = r["run_hours"] / 24.0
        md.append(f"#### {name}: C{r['resolution']}, {days:g} day{'s' if days != 1 else ''}")
        md.append("")
        md.append(
            f"Scheme **{r['scheme']}**, backend {r['backend']}, revision `{r['revision']}`: "
            f"{r['steps']} steps of {r['dt']:g} s, n_split {r['config'].get('n_split')}, "
            f"{r['step_seconds']:.0f} s in the time steps ({r['wall_seconds']:.0f} s in all); "
            f"our norms with g = {r['gravity']}."
        )
        if r["deviations"]:
            md.append("Deviations from FV3's namelist: " + "; ".join(r["deviations"]) + ".")
        md.append("")
        digits = fewest_digits(r)
        if digits:
            md.append("Fewest significant digits agreeing with FV3's printed norms over the 6-hour "
                      "lines: " + ", ".join(f"{n} {d}" for n, d in digits.items()) + ".")
            md.append("")
        md.extend(case_tables(r))
        md.append("")
        key = (scheme, name)
        if key in plots:
            md.append(f"![{name}: FV3's norms (solid) and ours (dashed)]({plots[key].name})")
            md.append("")
    return md


def render(payload: dict[str, Any], plots: dict[tuple[str, str], Path]) -> str:
    md = []
    machine = payload.get("machine", {})
    md.append(f"Measured on {machine.get('cpu', 'unknown CPU')} ({machine.get('cores', '?')} "
              f"cores), {machine.get('time', '')}; reference runs from "
              f"`{payload.get('reference_root', '?')}`.")  # fmt: skip
    md.append("")
    by_scheme = payload.get("runs", {})
    if not any(by_scheme.values()):
        md.append("No fv3core run yet: `stratoflow bench fv3-validation --runs tc2_C24_d1`.")
    for scheme in SCHEMES:
        if by_scheme.get(scheme):
            md.append(f"### {SCHEME_TITLES[scheme]}")
            md.append("")
            md.extend(scheme_sections(scheme, by_scheme[scheme], plots))
    md.append("### Convergence: observed orders, FV3 / ours")
    md.append("")
    md.extend(convergence_table(payload))
    md.append("")
    md.append("### FV3's printed norms recomputed from FV3's netCDF output")
    md.append("")
    md.append(f"All runs, t = 0 and every output time ({', '.join(sorted(payload.get('reproduction', {})))}):")
    md.append("")
    md.extend(reproduction_table(payload))
    return "\n".join(md) + "\n"


def plot_case(r: dict[str, Any], path: Path) -> Path:
    """Norms vs time: FV3 solid, ours dashed (errors on a log axis; energy/enstrophy change)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(12, 3.6), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, 3)
    ours = [row for row in r["rows"] if row["hours"] > 0]
    fv3 = [row for row in ours if row["fv3"]]
    groups = (("h_l1", "h_l2", "h_linf"), ("v_l1", "v_l2", "v_linf"), ("energy_n", "enstr_n"))
    for ax, names in zip(axes, groups, strict=True):
        for k, name in enumerate(names):
            color = f"C{k}"
            ax.plot([x["hours"] for x in fv3], [x["fv3"][name] for x in fv3], "-o", ms=3,
                    color=color, label=f"{name} FV3")  # fmt: skip
            ax.plot([x["hours"] for x in ours], [x["ours"][name] for x in ours], "--s", ms=3,
                    color=color, label=f"{name} ours")  # fmt: skip
        if names[0] != "energy_n":
            ax.set_yscale("log")
        ax.set_xlabel("hours")
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    axes[0].set_title("free-surface height errors")
    axes[1].set_title("A-grid wind errors")
    axes[2].set_title("relative change of energy, enstrophy")
    fig.suptitle(f"{r['run']} (C{r['resolution']}): FV3 solid, fv3core ({r['scheme']}) dashed")
    with atomic_output(path) as tmp:
        fig.savefig(tmp, format="png", dpi=90)
    return path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())

