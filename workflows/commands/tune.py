"""``stratoflow tune``: schedule search, transfer tuning, the tuning database, applying schedules.

    stratoflow tune list
    stratoflow tune search hdiff --space compact --strategy exhaustive
    stratoflow tune search vadv --space full --strategy optuna --budget 20
    stratoflow tune transfer upwind --k 3 --apply
    stratoflow tune encoder --out encoder.json   # learned embedding fit on the database
    stratoflow tune transfer upwind --encoder docs/benchmarks/tuning_encoder.json
    stratoflow tune report runs/tuning.json --markdown tuning.md --plot tuning.png
    stratoflow tune db list | show hdiff | export db.json | import db.json
    stratoflow tune apply hdiff            # TunedStencilFactory builds hdiff with its best schedule
    stratoflow fv3 run --tuning-db ~/.cache/stratoflow/tuning.sqlite   # an FV3 run that uses them
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path

from workflows.commands.argtypes import positive_number, whole_number

log = logging.getLogger(__name__)


def _domain(text: str) -> tuple[int, int, int]:
    from mapping.tuning.records import parse_domain

    try:
        return parse_domain(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _output_file(path: Path, option: str) -> Path:
    """``path`` if a file can be written there: not a folder, and the nearest existing folder
    above it (missing ones are created) is writable."""
    from mapping.tuning.errors import TuningError

    if path.is_dir():
        raise TuningError(f"{option} {path} is a folder; give a file name")
    parent = path.resolve().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise TuningError(f"{option} {path}: {parent} is a file, not a folder")
    if not os.access(parent, os.W_OK):
        raise TuningError(f"{option} {path}: folder {parent} is not writable")
    return path


def _check_outputs(args: argparse.Namespace) -> None:
    """Refuse an unwritable --report or --cache-dir before anything is measured."""
    from mapping.tuning.errors import TuningError
    from stencils.config import ensure_writable_dir
    from stencils.errors import StencilError

    if args.report:
        _output_file(args.report, "--report")
    if args.cache_dir:
        try:
            ensure_writable_dir(args.cache_dir, "--cache-dir", "--cache-dir")
        except StencilError as exc:
            raise TuningError(str(exc)) from None


def _read_text(path: Path, what: str, expected: str) -> str:
    """The text of ``path`` through :mod:`stencils.textfile` (a TuningError naming it)."""
    from mapping.tuning.errors import TuningError
    from stencils.errors import InputFileError
    from stencils.textfile import read_text

    try:
        return read_text(path, expected, what=what)
    except InputFileError as exc:
        raise TuningError(str(exc)) from None


def _read_json(path: Path, what: str, expected: str) -> object:
    from mapping.tuning.errors import TuningError
    from stencils.errors import InputFileError
    from stencils.textfile import parse_json

    try:
        return parse_json(_read_text(path, what, expected), f"{what} {path}", expected)
    except InputFileError as exc:
        raise TuningError(str(exc)) from None


def _common(p: argparse.ArgumentParser, measuring: bool = True) -> None:
    p.add_argument("--db", type=Path, default=None,
                   help="tuning database (default $STRATOFLOW_TUNING_DB or ~/.cache/stratoflow/tuning.sqlite)")
    p.add_argument("--domain", type=_domain, default=(96, 96, 48),
                   help="interior domain nx,ny,nz the schedules are measured on (default 96,96,48)")
    if measuring:
        p.add_argument("--cache-dir", type=Path, default=None,
                       help="build cache (default $STRATOFLOW_TUNING_CACHE or ~/.cache/stratoflow/builds)")
        p.add_argument("--jobs", type=whole_number(1), default=2, help="parallel compilations (default 2)")
        p.add_argument("--repeats", type=whole_number(1), default=7,
                       help="timed runs per schedule; the median counts")
        p.add_argument("--timeout", type=positive_number, default=120.0, help="seconds per timed schedule")
        p.add_argument("--build-timeout", type=positive_number, default=3600.0, help="seconds per compilation")
        p.add_argument("--report", type=Path, default=None, help="write a Markdown report here")


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "tune",
        help="schedule search and transfer tuning for stencils",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    tsub = parser.add_subparsers(dest="tune_command", metavar="ACTION", required=True)

    p = tsub.add_parser("list", help="stencils that can be tuned (library + registered definitions)")
    p.set_defaults(handler=cmd_list)

    p = tsub.add_parser(
        "search", help="search a stencil's or a stencil program's schedule space, store every evaluation",
        description="Build, validate against the numpy backend, and time schedules of STENCIL "
        "(a library name, module:function or module:function[x,KEY=VALUE] with externals) or "
        "of a PROGRAM (biharmonic, smooth_advect, or module:attribute of a StencilProgram; its "
        "space adds the fusion of consecutive calls into one stencil). Evaluations already in "
        "the database are reused, so an interrupted search resumes.",
    )
    p.add_argument("stencil", metavar="STENCIL|PROGRAM",
                   help="hdiff, fv3core.stencils.ppm:ppm_flux_stencil[x,iord=5], biharmonic, ...")
    p.add_argument("--space", choices=("compact", "full", "tiny"), default="compact",
                   help="schedule space (compact: 61 schedules, full: ~15800, tiny: 3)")
    p.add_argument("--strategy", choices=("exhaustive", "random", "optuna"), default=None,
                   help="exhaustive (default without --budget), random, or optuna (default with --budget)")
    p.add_argument("--budget", type=whole_number(1), default=None, help="at most N schedules evaluated")
    p.add_argument("--seed", type=int, default=0, help="seed of random/optuna search")
    _common(p)
    p.set_defaults(handler=cmd_search)

    p = tsub.add_parser(
        "transfer", help="tune STENCIL or PROGRAM from its k nearest tuned neighbours",
        description="Embed STENCIL (static GTIR features + one numpy baseline run) or PROGRAM "
        "(the time-weighted mean of its calls' stencil embeddings, profiling calls not yet in "
        "the database), find its k nearest tuned stencils/programs in the database, and "
        "validate + measure only their best schedules; for a program each of them unfused, "
        "with all calls fused, and with the fusions of neighbour programs of as many calls.",
    )
    p.add_argument("stencil", metavar="STENCIL|PROGRAM",
                   help="hdiff, module:function[x], biharmonic, smooth_advect, module:attribute")
    p.add_argument("--k", type=whole_number(1, 64), default=3, help="neighbours to transfer from (1 to 64, as a spec's tune step; default 3)")
    p.add_argument("--per-neighbour", type=whole_number(1), default=1,
                   help="best schedules taken per neighbour (--rule best)")
    p.add_argument("--rule", choices=("best", "consensus"), default="best",
                   help="candidates: each neighbour's best schedules (default), or the k schedules "
                   "fastest over all neighbours together (what the benchmark uses)")
    p.add_argument("--space", choices=("compact", "full", "tiny"), default="compact",
                   help="space the candidates are counted against in the report")
    p.add_argument("--apply", action="store_true", help="apply the winning schedule")
    p.add_argument("--encoder", type=Path, default=None,
                   help="learned encoder JSON (from 'tune encoder' or 'bench tuning'): neighbours "
                   "nearest in its embedding instead of the hand features")
    _common(p)
    p.set_defaults(handler=cmd_transfer)

    p = tsub.add_parser(
        "encoder", help="fit the learned performance embedding on the tuning database",
        description="Fit a linear encoder of the stencil features (static IR counts, numpy-run "
        "timings, hardware counters where present) so that distances in its embedding match "
        "how differently the database's tuned stencils respond to the schedules (Trümper et "
        "al., ICS 2023). Needs at least 3 stencils searched on --domain. Use the file with "
        "'tune transfer --encoder FILE'.",
    )
    p.add_argument("--out", type=Path, required=True, help="encoder JSON to write")
    p.add_argument("--dims", type=whole_number(1), default=4, help="embedding dimensions (default 4)")
    p.add_argument("--seed", type=int, default=0, help="seed of the fit's random restarts")
    _common(p, measuring=False)
    p.set_defaults(handler=cmd_encoder)

    p = tsub.add_parser(
        "report", help="the leave-one-out ablation table and plot from a 'bench tuning' JSON",
        description="Regenerate the ablation of 'stratoflow bench tuning' from its JSON: the "
        "Markdown table of every method (learned, hand, random neighbours, global best, random "
        "search) with intervals, verdicts and paired tests, and a PNG of each method's "
        "transferred/best ratio per stencil with its 95% interval.",
    )
    p.add_argument("json", type=Path, help="JSON written by 'stratoflow bench tuning --json'")
    p.add_argument("--markdown", type=Path, default=None,
                   help="write the table as the generated block of this file (default: stdout)")
    p.add_argument("--plot", type=Path, default=None, help="write the PNG plot here")
    p.set_defaults(handler=cmd_report)

    p = tsub.add_parser("db", help="inspect, export or import the tuning database")
    p.add_argument("action", choices=("list", "show", "export", "import"))
    p.add_argument("arg", nargs="?", help="STENCIL for show, FILE for export/import")
    _common(p, measuring=False)
    p.set_defaults(handler=cmd_db)

    p = tsub.add_parser(
        "apply", help="use a stencil's or program's best (or a given) schedule whenever it is built",
        description="Record in the tuning database the schedule a TunedStencilFactory of that "
        "database builds STENCIL with: its best measured schedule, or --schedule JSON. An FV3 "
        "run uses the applied schedules with `stratoflow fv3 run --tuning-db PATH` (a workflow's "
        "fv3 step: `tuning_db: PATH`); without it no tuned schedule is used. For a PROGRAM the "
        "schedule (fusion included) is used by TunedStencilFactory.tuned_program(program).",
    )
    p.add_argument("stencil", metavar="STENCIL|PROGRAM")
    p.add_argument("--schedule", default=None, help="schedule JSON (or @file) instead of the best one")
    p.add_argument("--remove", action="store_true", help="stop using a tuned schedule for STENCIL")
    _common(p, measuring=False)
    p.set_defaults(handler=cmd_apply)


def _evaluator(args: argparse.Namespace, stencil: str):  # noqa: ANN202
    from mapping.tuning.measure import Evaluator, MeasureConfig, default_cache_dir

    cfg = MeasureConfig(
        domain=args.domain, repeats=args.repeats, jobs=args.jobs,
        run_timeout_s=args.timeout, build_timeout_s=args.build_timeout, cache_dir=args.cache_dir or default_cache_dir(),
    )
    return Evaluator(stencil, cfg)


def _stream_gbs() -> float:
    from benchmarks.common import stream_triad

    return stream_triad(elements=1 << 24, repeats=5).triad_gbs


def cmd_list(args: argparse.Namespace) -> int:
    from mapping.tuning.programs import EXAMPLE_PROGRAMS
    from mapping.tuning.targets import discover_all, library_names

    tunable, skipped = discover_all()
    sys.stdout.write("\n".join(library_names() + tunable) + "\n")
    sys.stdout.write("\n# stencil programs (searched with their fusion knob):\n")
    sys.stdout.write("\n".join(EXAMPLE_PROGRAMS) + "\n")
    if skipped:
        sys.stdout.write("\n# found, but not tunable on their own (they need externals or do not parse):\n")
        for name, why in skipped.items():
            sys.stdout.write(f"# {name}: {why.splitlines()[0][:160]}\n")
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    _check_outputs(args)
    from mapping.tuning.db import TuningDB

    db = TuningDB(args.db)  # a damaged database is refused before GT4Py is imported
    from tqdm import tqdm

    from mapping.tuning.report import atomic_write, search_report
    from mapping.tuning.search import Tuner
    from mapping.tuning.space import get_space

    strategy = args.strategy or ("optuna" if args.budget else "exhaustive")
    tuner = Tuner(args.stencil, _evaluator(args, args.stencil), db)
    space = tuner.space(get_space(args.space))  # a program's space includes its fusions
    total = min(args.budget or len(space), len(space)) + 1
    with tqdm(total=total, desc=f"tune {tuner.stencil}", unit="sched") as bar:
        tuner.progress = bar.update
        if db.embedding(tuner.stencil, args.domain) is None:
            tuner.profile(_stream_gbs())
        else:
            bar.update(1)
        result = tuner.search(space, strategy, args.budget, args.seed)
    text = search_report(result, f"Schedule search: {args.stencil}")
    if args.report:
        atomic_write(args.report, text)
        log.info("report written to %s", args.report)
    best, default = result.best, result.default()
    sys.stdout.write(
        f"{args.stencil}: {len(result.evaluations)} schedules ({len(result.valid)} valid, "
        f"{result.builds} compiled, {result.reused} from the database)\n"
    )
    if best is not None:
        sys.stdout.write(f"best: {best.schedule.describe()}  {1e3 * best.median_s:.3f} ms")
        if default is not None:
            sys.stdout.write(f"  ({default.median_s / best.median_s:.2f}x numpy)")
        sys.stdout.write(f"\n{best.schedule.to_json()}\n")
    return 0


def cmd_transfer(args: argparse.Namespace) -> int:
    _check_outputs(args)
    from mapping.tuning.db import TuningDB
    from mapping.tuning.programs import ProgramTarget
    from mapping.tuning.report import atomic_write, evaluations_table
    from mapping.tuning.schedule import Schedule
    from mapping.tuning.search import Tuner
    from mapping.tuning.space import get_space
    from mapping.tuning.transfer import transfer

    embed = None
    if args.encoder is not None:
        from mapping.tuning.encoder import LearnedEncoder

        embed = LearnedEncoder.load(args.encoder).encode
    db = TuningDB(args.db)
    tuner = Tuner(args.stencil, _evaluator(args, args.stencil), db)
    query = tuner.embedding(_stream_gbs() if db.embedding(tuner.stencil, args.domain) is None else 0.0)
    calls = len(tuner.target.calls) if isinstance(tuner.target, ProgramTarget) else None
    result = transfer(
        query, db, args.domain, tuner.evaluate, k=args.k, per_neighbour=args.per_neighbour,
        space_size=len(tuner.space(get_space(args.space))), rule=args.rule, program_calls=calls,
        embed=embed,
    )
    default = db.evaluations(tuner.stencil, args.domain).get(Schedule("numpy").key)
    what = f"the {args.space} space" + (f" x {len(tuner.space([Schedule()]))} fusions" if calls else "")
    lines = [
        f"# Transfer tuning: {args.stencil}",
        "",
        "- neighbours: " + ", ".join(f"{n} (distance {d:.2f})" for n, d in result.neighbours),
        f"- candidates tried: {len(result.candidates)} of {result.space_size} schedules in {what}",
    ]
    if calls:
        lines.append(f"- embedding: {query.status.get('program', 'from its calls')}")
    best = result.best
    if best is not None:
        lines.append(f"- best: `{best.schedule.describe()}` {1e3 * best.median_s:.3f} ms")
    text = "\n".join(lines) + "\n\n" + evaluations_table(
        result.evaluations, default.median_s if default and default.ok else None
    )
    if args.report:
        atomic_write(args.report, text)
    sys.stdout.write(text)
    if best is not None and args.apply:
        speed = default.median_s / best.median_s if default and default.ok else None
        db.apply(tuner.stencil, best.schedule, speed)
        sys.stdout.write(f"applied: {best.schedule.to_json()}\n")
    return 0 if best is not None else 1


def cmd_encoder(args: argparse.Namespace) -> int:
    from mapping.tuning.db import TuningDB
    from mapping.tuning.encoder import LearnedEncoder, log_profile

    _output_file(args.out, "--out")
    db = TuningDB(args.db)
    embs = db.embeddings(args.domain)
    profiles = {e.stencil: log_profile(db.evaluations(e.stencil, args.domain)) for e in embs}
    enc = LearnedEncoder.fit(embs, profiles, dims=args.dims, seed=args.seed)
    enc.save(args.out)
    sys.stdout.write(f"encoder of {enc.weights.shape[0]} dimensions fit on {len(enc.trained_on)} stencils "
                     f"(distance RMS error {enc.fit_rms:.3f}): {args.out}\n")  # fmt: skip
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from benchmarks.common import write_markdown
    from benchmarks.tuning import NAME, ablation_markdown, plot_ratios
    from mapping.tuning.errors import TuningError

    for path, opt in ((args.markdown, "--markdown"), (args.plot, "--plot")):
        if path is not None:
            _output_file(path, opt)
    payload = _read_json(args.json, "benchmark JSON", "the JSON of 'stratoflow bench tuning --json'")
    if not isinstance(payload, dict) or payload.get("benchmark") != NAME or "summary" not in payload:
        raise TuningError(f"{args.json}: not a 'stratoflow bench tuning' result; write one with "
                          "'stratoflow bench tuning --json FILE'")  # fmt: skip
    try:
        text = ablation_markdown(payload)
        if args.plot is not None and payload["results"]:
            plot_ratios(payload, args.plot)
    except (KeyError, TypeError, ValueError) as exc:
        raise TuningError(f"{args.json}: damaged benchmark result ({type(exc).__name__}: {exc}); "
                          "rerun 'stratoflow bench tuning'") from None  # fmt: skip
    if args.markdown is not None:  # the generated block; hand-written text around it stays
        write_markdown(args.markdown, text)
    else:
        sys.stdout.write(text)
    return 0


def cmd_db(args: argparse.Namespace) -> int:
    from mapping.tuning.db import TuningDB
    from mapping.tuning.errors import TuningError
    from mapping.tuning.report import atomic_write, evaluations_table

    if args.action != "list" and args.arg is None:
        raise TuningError(f"'stratoflow tune db {args.action}' needs an argument (STENCIL or FILE)")
    if args.action == "export":
        _output_file(Path(args.arg), "export file")
    if args.action == "import":
        db = TuningDB(args.db)
    else:  # list, show and export only read: a missing or foreign file is refused, never made
        db = TuningDB(args.db, read_only=True)
    if args.action == "list":
        rows = db.stencils()
        applied = db.applied()
        sys.stdout.write(f"database: {db.path}\nmachine: {db.machine}\n\n")
        sys.stdout.write("| stencil | domain | evaluated | valid | best ms | speedup vs numpy | applied |\n")
        sys.stdout.write("|---|---|---|---|---|---|---|\n")
        for stencil, dom, n, valid in rows:
            best = db.best(stencil, tuple(int(x) for x in dom.split("x")))
            ms = f"{1e3 * best.median_s:.3f}" if best else "-"
            sp = f"{best.speedup:.2f}" if best and best.speedup else "-"
            sys.stdout.write(
                f"| {stencil} | {dom} | {n} | {valid} | {ms} | {sp} | {'yes' if stencil in applied else ''} |\n"
            )
        return 0
    if args.arg is None:
        raise TuningError(f"'stratoflow tune db {args.action}' needs an argument (STENCIL or FILE)")
    if args.action == "show":
        evs = db.evaluations(args.arg, args.domain)
        if not evs:
            raise TuningError(
                f"no evaluations of {args.arg!r} on domain {args.domain} in {db.path}; "
                "check 'stratoflow tune db list' for stencils and domains"
            )
        best = db.best(args.arg, args.domain)
        default_s = best.default_s if best else None
        sys.stdout.write(f"# {args.arg} ({'x'.join(map(str, args.domain))})\n\n")
        emb = db.embedding(args.arg, args.domain)
        if emb is not None and emb.status:
            for feature, how in sorted(emb.status.items()):
                what = "embedding" if feature == "program" else f"dynamic feature `{feature}`"
                sys.stdout.write(f"- {what}: {how}\n")
            sys.stdout.write("\n")
        sys.stdout.write(evaluations_table(list(evs.values()), default_s))
        return 0
    if args.action == "export":
        _output_file(Path(args.arg), "export file")
        atomic_write(args.arg, json.dumps(db.export(), indent=1) + "\n")
        sys.stdout.write(f"exported {db.path} to {args.arg}\n")
        return 0
    path = Path(args.arg)
    data = _read_json(path, "import file", "a JSON export of 'stratoflow tune db export'")
    n = db.import_(data, f"import file {path}")  # type: ignore[arg-type]
    sys.stdout.write(f"imported {n} rows from {path} into {db.path}\n")
    return 0


def _check_tunable(name: str) -> None:
    """Refuse a STENCIL|PROGRAM name that no TunedStencilFactory would ever build (a library
    stencil, a program, or a module:function/attribute that resolves)."""
    from mapping.tuning.errors import TuningError
    from mapping.tuning.programs import EXAMPLE_PROGRAMS
    from mapping.tuning.targets import library_names

    if name in library_names() or name in EXAMPLE_PROGRAMS:
        return
    if ":" in name:
        from mapping.tuning.programs import load_program
        from mapping.tuning.targets import _import_definition, split_name

        if load_program(name) is not None:
            return
        try:
            _import_definition(split_name(name)[0])
        except TuningError as exc:
            raise TuningError(
                f"tune apply: {exc}; check the module:function name ('stratoflow tune list' "
                "lists the tunable stencils)"
            ) from None
        return
    raise TuningError(
        f"tune apply: no stencil or program named {name!r}; 'stratoflow tune list' lists the "
        f"tunable ones (library: {', '.join(library_names())})"
    )


def cmd_apply(args: argparse.Namespace) -> int:
    from mapping.tuning.db import TuningDB
    from mapping.tuning.errors import TuningError
    from mapping.tuning.schedule import Schedule

    if not args.remove:
        _check_tunable(args.stencil)
    db = TuningDB(args.db)
    if args.remove:
        if not db.unapply(args.stencil):
            raise TuningError(f"no tuned schedule is applied to {args.stencil!r}")
        sys.stdout.write(f"{args.stencil}: tuned schedule removed\n")
        return 0
    if args.schedule:
        at_file = args.schedule.startswith("@")
        source = f"--schedule file {args.schedule[1:]}" if at_file else "--schedule"
        text = (_read_text(Path(args.schedule[1:]), "--schedule file", "a schedule JSON object")
                if at_file else args.schedule)  # fmt: skip
        schedule, speedup = Schedule.from_json(text, source), None
    else:
        best = db.best(args.stencil, args.domain)
        if best is None:
            raise TuningError(
                f"no valid evaluation of {args.stencil!r} on domain {args.domain} in {db.path}; "
                f"run 'stratoflow tune search {args.stencil}' or 'tune transfer' first"
            )
        schedule, speedup = best.schedule, best.speedup
    db.apply(args.stencil, schedule, speedup)
    env = " ".join(f"{k}={v}" for k, v in schedule.environment(0).items() if v != "0")
    from mapping.tuning.programs import load_program

    program = schedule.fuse or load_program(args.stencil) is not None
    how = "TunedStencilFactory.tuned_program(program) runs it" if program else (
        f"TunedStencilFactory(db={str(db.path)!r}) builds it (an FV3 run: "
        f"stratoflow fv3 run --tuning-db {db.path})"
    )
    sys.stdout.write(
        f"{args.stencil}: applied {schedule.describe()}"
        + (f" ({speedup:.2f}x numpy)" if speedup else "")
        + f"\n{how} this way; run with: {env or '(no OpenMP settings)'}\n"
    )
    return 0
