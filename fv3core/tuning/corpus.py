"""fv3core's stencils as its models build them: the tuning corpus of fv3core.

:func:`recorded_builds` runs FV3's 3-D hydrostatic core (the JW06 baroclinic wave, C12 L26, one
hour with ``consv_te = 1`` and the checker tracer) and FV3's shallow-water core (Williamson 2, C12)
on numpy and lists every distinct stencil they build, with the externals they build it with.
:func:`corpus_names` turns these into tuning target names: per definition the variant the models
ask for most often, named with all its externals
(:func:`mapping.tuning.targets.names_for_externals`), so the corpus has one member per
definition and no near-duplicate neighbours. Tuning feeds a target smooth random inputs (fields
as long in k as the stencil accesses them; the pressure stencils a hydrostatic column,
:mod:`fv3core.tuning.inputs`); :func:`runs_on_generic_inputs` leaves out a definition that fails
on them, with the reason in the file.

The names are committed as ``fv3core/tuning/corpus.json`` (read by :mod:`fv3core.tuning.tunable`;
running the models at every discovery would cost two minutes) and regenerated with
``python -m fv3core.tuning.corpus``.
"""

from __future__ import annotations

import argparse
import json
import logging
from collections.abc import Sequence
from pathlib import Path

from stencils.factory import BuildRecord, StencilFactory

log = logging.getLogger(__name__)

#: The committed corpus (target names, sorted).
CORPUS_PATH = Path(__file__).with_name("corpus.json")

#: Domain of the generic-inputs check: wider than the C12 tile-edge regions the recorded
#: externals place (up to ``J[0]+15``), as the tuning domain is.
CHECK_DOMAIN = (24, 24, 6)

#: The runs whose builds make the corpus (FV3Config dictionaries).
RECORDED_RUNS: tuple[dict, ...] = (
    {"case": "baroclinic", "resolution": 12, "dt": 3600.0, "days": 1.0 / 24.0,
     "checker_tr": True, "consv_te": 1.0},
    # FV3's shallow-water core with the automatic time step, nord 0 and Williamson's constants:
    # the run whose builds the stored searches were made on
    {"case": "williamson2", "resolution": 12, "days": 0.05, "dt": 0.0, "n_split": 1, "nord": 0,
     "constants": "williamson"},
)  # fmt: skip


def recorded_builds(runs: Sequence[dict] = RECORDED_RUNS) -> list[BuildRecord]:
    """The distinct stencil builds of ``runs`` (numpy backend, one process)."""
    from fv3core.config import FV3Config
    from fv3core.experiments.driver import run

    records: list[BuildRecord] = []
    for spec in runs:
        factory = StencilFactory("numpy")
        run(FV3Config.from_dict(dict(spec), source="fv3core.tuning.corpus"), factory=factory,
            progress=False)  # fmt: skip
        records += factory.builds()
    return records


def corpus_names(records: Sequence[BuildRecord]) -> list[str]:
    """One tuning target name per definition of ``records``: its most requested variant (ties:
    the first name in sort order), with every external in the name (the explicit form, which
    :class:`mapping.tuning.TunedStencilFactory` matches); variants whose externals a name
    cannot carry are left out (logged)."""
    from mapping.tuning.errors import TuningError
    from mapping.tuning.targets import canonical_name

    requests: dict[str, dict[str, int]] = {}
    for r in records:
        base = f"{r.definition.__module__}:{r.definition.__name__}"
        try:
            name = canonical_name(base, None, r.externals) if r.externals else base
        except TuningError as exc:
            log.info("%s: variant left out of the corpus (%s)", base, exc)
            continue
        per = requests.setdefault(base, {})
        per[name] = per.get(name, 0) + r.requests
    return sorted(min(per, key=lambda n: (-per[n], n)) for per in requests.values())


def runs_on_generic_inputs(name: str) -> str | None:
    """None if the tuning target ``name`` runs on numpy with its tuning inputs
    (:meth:`mapping.tuning.targets.TuningTarget.allocate`) and gives finite outputs; else why
    not."""
    import tempfile

    import numpy as np

    from mapping.tuning.targets import resolve
    from mapping.tuning.worker import reference_outputs

    target = resolve(name)
    with tempfile.TemporaryDirectory(prefix="stratoflow-corpus-") as tmp:
        try:
            out = reference_outputs(target, target.domain(*CHECK_DOMAIN), 0, tmp)
        except Exception as exc:  # any failure of the generated code on these inputs
            return f"does not run on generic inputs: {type(exc).__name__}: {str(exc)[:160]}"
    if not all(np.isfinite(a).all() for a in out.values()):
        return "non-finite outputs on generic inputs (needs physical values, e.g. positive pressure)"
    return None


def load_corpus(path: Path = CORPUS_PATH) -> tuple[str, ...]:
    """The committed corpus names (empty if the file is absent)."""
    if not path.exists():
        return ()
    return tuple(json.loads(path.read_text())["targets"])


def write_corpus(names: Sequence[str], path: Path = CORPUS_PATH,
                 left_out: dict[str, str] | None = None) -> Path:  # fmt: skip
    from stencils.atomic import atomic_write_text

    doc = {
        "description": "fv3core's stencils as its models build them (one variant per "
        "definition); regenerate with: python -m fv3core.tuning.corpus",
        "runs": list(RECORDED_RUNS),
        "targets": list(names),
        "left_out": dict(left_out or {}),
    }
    atomic_write_text(path, json.dumps(doc, indent=1) + "\n")
    return path


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m fv3core.tuning.corpus",
        description="Run fv3core's 3-D and shallow-water cores briefly on numpy, record the "
        "stencils they build and write the tuning corpus (one target per definition).",
    )
    p.add_argument("--output", type=Path, default=CORPUS_PATH, help=f"default {CORPUS_PATH}")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    names, left_out = [], {}
    for name in corpus_names(recorded_builds()):
        why = runs_on_generic_inputs(name)
        if why is None:
            names.append(name)
        else:
            left_out[name] = why
    path = write_corpus(names, args.output, left_out)
    log.info("wrote %d targets to %s (%d left out)", len(names), path, len(left_out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
