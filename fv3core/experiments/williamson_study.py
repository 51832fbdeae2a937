"""Run the Williamson test-case study once and write docs/fv3core/williamson.md.

    python -m fv3core.experiments.williamson_study --resolutions 24 48 --json runs/williamson.json
    python -m fv3core.experiments.williamson_study --cases tc2 --resolutions 24 48 96 --days 5
    python -m fv3core.experiments.williamson_study --cases tc5 tc6 --resolutions 24 48

TC1 runs 12 days per (resolution, alpha, hord); TC2 ``--days`` (default 5), TC5 15 days and
TC6 14 days, all through :func:`fv3core.experiments.driver.run`.  Results are appended to the JSON file
as they finish (a rerun skips cases already there), and the Markdown tables with convergence
orders are regenerated from the JSON.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
from pathlib import Path

from fv3core.config import FV3Config
from fv3core.experiments.driver import run
from stencils.atomic import atomic_write_text, replace_block

ALPHAS = {"0": 0.0, "pi/2-0.05": math.pi / 2 - 0.05}
DOC = Path(__file__).resolve().parents[2] / "docs" / "fv3core" / "williamson.md"
log = logging.getLogger(__name__)


def _key(n: int, alpha: str, hord: int) -> str:
    return f"C{n} alpha={alpha} hord={hord}"


def table(results: dict[str, dict]) -> str:
    """Markdown rows per case and the l2 convergence order between successive resolutions."""
    lines = [
        "| case | alpha | hord | C | dt (s) | steps | l1 | l2 | linf | l2 order | mass change | min h (m) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    groups: dict[tuple[str, int], list[tuple[int, dict]]] = {}
    for r in results.values():
        groups.setdefault((r["alpha"], r["hord"]), []).append((r["resolution"], r))
    for (alpha, hord), rows in sorted(groups.items()):
        rows.sort()
        prev = None
        for n, r in rows:
            order = "" if prev is None else f"{math.log(prev[1]['l2'] / r['l2']) / math.log(n / prev[0]):.2f}"
            lines.append(
                f"| TC1 | {alpha} | {hord} | {n} | {r['dt']:.0f} | {r['steps']} | {r['l1']:.4f} | "
                f"{r['l2']:.4f} | {r['linf']:.4f} | {order} | {r['mass_relative_change']:.1e} | "
                f"{r['h_min']:.1e} |"
            )
            prev = (n, r)
    return "\n".join(lines)


SW_DAYS = {"tc5": 15.0, "tc6": 14.0}
SW_CASES = {"tc2": "williamson2", "tc5": "williamson5", "tc6": "williamson6"}


def _order(prev: tuple[int, dict] | None, n: int, r: dict, key: str) -> str:
    if prev is None or not prev[1].get(key) or not r.get(key):
        return ""
    return f"{math.log(prev[1][key] / r[key]) / math.log(n / prev[0]):.2f}"


def tc2_table(results: dict[str, dict]) -> str:
    """Markdown rows of the TC2 runs with l2 orders of h and wind between resolutions."""
    lines = [
        "| C | days | dt (s) | steps | h l1 | h l2 | h linf | h l2 order | wind l1 | wind l2 | "
        "wind linf | wind l2 order | mass change | energy change | run (s) | backend |",
        "|" + "---|" * 16,
    ]
    rows = sorted((r["days"], r["resolution"], r) for r in results.values()
                  if r.get("case") == "tc2")  # fmt: skip
    prev = None
    for days, n, r in rows:
        if prev is not None and prev[1]["days"] != days:
            prev = None
        lines.append(
            f"| {n} | {r['days']:g} | {r['dt']:.0f} | {r['steps']} | {r['l1']:.3e} | "
            f"{r['l2']:.3e} | {r['linf']:.3e} | {_order(prev, n, r, 'l2')} | {r['wind_l1']:.3e} | "
            f"{r['wind_l2']:.3e} | {r['wind_linf']:.3e} | {_order(prev, n, r, 'wind_l2')} | "
            f"{r['mass_relative_change']:.1e} | {r['energy_relative_change']:.2e} | "
            f"{r['seconds']:.0f} | {r.get('backend', 'numpy')} |"
        )
        prev = (n, r)
    return "\n".join(lines)


def conservation_table(results: dict[str, dict]) -> str:
    """Markdown rows of the TC5/TC6 runs: conservation and range of h."""
    lines = [
        "| case | C | days | dt (s) | steps | mass change | total energy change | "
        "potential enstrophy change | min h (m) | max h (m) | run (s) | backend |",
        "|" + "---|" * 12,
    ]
    rows = sorted((r["case"], r["resolution"], r) for r in results.values()
                  if r.get("case") in ("tc5", "tc6"))  # fmt: skip
    for case, n, r in rows:
        lines.append(
            f"| {case.upper()} | {n} | {r['days']:g} | {r['dt']:.0f} | {r['steps']} | "
            f"{r['mass_relative_change']:.1e} | {r['energy_relative_change']:.3e} | "
            f"{r['enstrophy_relative_change']:.3e} | {r['h_min']:.1f} | {r['h_max']:.1f} | "
            f"{r['seconds']:.0f} | {r.get('backend', 'numpy')} |"
        )
    return "\n".join(lines)


def _run_shallow_water_cases(args: argparse.Namespace, results: dict[str, dict]) -> None:
    for case in [c for c in args.cases if c in SW_CASES]:
        days = args.days if case == "tc2" else SW_DAYS[case]
        for n in args.resolutions:
            key = f"{case.upper()} C{n} days={days:g} hord={args.hord[0]}"
            if key in results:
                continue
            # dt 0: the largest time step at --courant (FV3's dt_atmos 1200 s is the default)
            cfg = FV3Config(case=SW_CASES[case], resolution=n, days=days, hord=args.hord[0],
                            backend=args.backend, courant=args.courant, dt=0.0)  # fmt: skip
            res = run(cfg, progress=True)
            results[key] = {"case": case, "resolution": n, "days": days, "hord": args.hord[0],
                            "dt": res.dt, "steps": res.steps, "seconds": res.seconds,
                            "backend": args.backend, **res.diagnostics}  # fmt: skip
            log.info("%s: %s", key, results[key])
            atomic_write_text(args.json, json.dumps(results, indent=1))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--resolutions", type=int, nargs="+", default=[24, 48])
    p.add_argument("--alphas", nargs="+", default=list(ALPHAS), choices=list(ALPHAS))
    p.add_argument("--hord", type=int, nargs="+", default=[8])
    p.add_argument("--cases", nargs="+", default=["tc1"], choices=["tc1", *SW_CASES])
    p.add_argument("--days", type=float, default=5.0, help="TC2 length in days")
    p.add_argument("--courant", type=float, default=0.5)
    p.add_argument("--backend", default="numpy",
                   help="GT4Py backend of the runs, e.g. gt:cpu_ifirst (set OMP_NUM_THREADS=1)")
    p.add_argument("--json", type=Path, default=Path("runs/williamson.json"))
    p.add_argument("--markdown", type=Path, default=DOC)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    results = json.loads(args.json.read_text()) if args.json.exists() else {}
    _run_shallow_water_cases(args, results)
    for hord in args.hord if "tc1" in args.cases else []:
        for alpha in args.alphas:
            for n in args.resolutions:
                key = _key(n, alpha, hord)
                if key in results:
                    continue
                # the automatic time step at --courant, one acoustic step per step
                cfg = FV3Config(case="williamson1", resolution=n, days=12.0, hord=hord,
                                alpha=ALPHAS[alpha], backend=args.backend, dt=0.0, n_split=1,
                                courant=args.courant)  # fmt: skip
                res = run(cfg, progress=False)
                results[key] = {"resolution": n, "alpha": alpha, "hord": hord, "dt": res.dt,
                                "steps": res.steps, "seconds": res.seconds, **res.diagnostics}
                log.info("%s: %s", key, results[key])
                atomic_write_text(args.json, json.dumps(results, indent=1))
    text = args.markdown.read_text() if args.markdown.exists() else ""
    tc1 = {k: r for k, r in results.items() if r.get("case", "tc1") == "tc1"}
    text = replace_block(text, "table", table(tc1))
    text = replace_block(text, "tc2", tc2_table(results))
    text = replace_block(text, "tc56", conservation_table(results))
    atomic_write_text(args.markdown, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
