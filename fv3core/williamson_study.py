"""Run the Williamson test-case study once and write docs/fv3core/williamson.md.

    python -m fv3core.williamson_study --resolutions 24 48 --json runs/williamson.json

Each (resolution, alpha, hord) case runs 12 days through :func:`fv3core.driver.run`; results
are appended to the JSON file as they finish (a rerun skips cases already there), and the
Markdown table with convergence orders is regenerated from the JSON.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import tempfile
from pathlib import Path

from fv3core.config import FV3Config
from fv3core.driver import run

ALPHAS = {"0": 0.0, "pi/2-0.05": math.pi / 2 - 0.05}
DOC = Path(__file__).resolve().parent.parent / "docs" / "fv3core" / "williamson.md"
log = logging.getLogger(__name__)


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--resolutions", type=int, nargs="+", default=[24, 48])
    p.add_argument("--alphas", nargs="+", default=list(ALPHAS), choices=list(ALPHAS))
    p.add_argument("--hord", type=int, nargs="+", default=[8])
    p.add_argument("--backend", default="numpy")
    p.add_argument("--json", type=Path, default=Path("runs/williamson.json"))
    p.add_argument("--markdown", type=Path, default=DOC)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    results = json.loads(args.json.read_text()) if args.json.exists() else {}
    for hord in args.hord:
        for alpha in args.alphas:
            for n in args.resolutions:
                key = _key(n, alpha, hord)
                if key in results:
                    continue
                cfg = FV3Config(case="williamson1", resolution=n, days=12.0, hord=hord,
                                alpha=ALPHAS[alpha], backend=args.backend)  # fmt: skip
                res = run(cfg, progress=False)
                results[key] = {"resolution": n, "alpha": alpha, "hord": hord, "dt": res.dt,
                                "steps": res.steps, "seconds": res.seconds, **res.diagnostics}
                log.info("%s: %s", key, results[key])
                _atomic_write(args.json, json.dumps(results, indent=1))
    text = args.markdown.read_text() if args.markdown.exists() else ""
    start, end = "<!-- table:start -->", "<!-- table:end -->"
    block = f"{start}\n{table(results)}\n{end}"
    if start in text and end in text:
        text = text[: text.index(start)] + block + text[text.index(end) + len(end):]
    else:
        text = text + "\n" + block + "\n"
    _atomic_write(args.markdown, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
