"""fv3core's tuning corpus: the stencils its models build, recorded by the factory, one target
per definition; every committed target resolves and runs on numpy."""

from __future__ import annotations

import pytest

from fv3core.tuning.corpus import (
    CORPUS_PATH,
    corpus_names,
    load_corpus,
    recorded_builds,
    runs_on_generic_inputs,
)
from mapping.tuning.errors import TuningError
from mapping.tuning.registry import Tunable
from mapping.tuning.targets import discover_all, split_name
from stencils.factory import StencilFactory
from stencils.library import LIBRARY


def test_factory_records_each_build_and_its_requests() -> None:
    """Two requests of one (definition, externals) and one of another: two records, counts 2, 1."""
    f = StencilFactory("numpy")
    d = LIBRARY["laplacian_2d"].definition
    f(d)
    f(d)
    f(LIBRARY["jacobi_2d"].definition)
    recs = f.builds()
    assert [(r.definition, r.requests) for r in recs] == [(d, 2), (LIBRARY["jacobi_2d"].definition, 1)]


def test_corpus_names_one_variant_per_definition() -> None:
    """The most requested variant of a definition wins; externals are spelled in the name."""
    from stencils.factory import BuildRecord

    d = LIBRARY["laplacian_2d"].definition
    base = f"{d.__module__}:{d.__name__}"
    recs = [BuildRecord(d, {"a": 1}, (), 1), BuildRecord(d, {"a": 2}, (), 3)]
    assert corpus_names(recs) == [f"{base}[a=2]"]


def test_committed_corpus_is_large_and_every_target_runs() -> None:
    """The committed corpus names >= 35 definitions of fv3core's 3-D and shallow-water cores
    (with fv3core.vertical's remapping), each once; each target resolves and its numpy build
    runs on a small domain with finite outputs (a spread of eight is run here)."""
    names = load_corpus()
    bases = [split_name(n)[0] for n in names]
    assert len(names) >= 35 and len(set(bases)) == len(bases)
    assert any(b.startswith("fv3core.vertical.remapping:") for b in bases)
    for name in names[:: max(1, len(names) // 8)]:  # a spread of eight (all: ~1 min)
        assert runs_on_generic_inputs(name) is None, name


def test_benchmark_corpus_has_forty_stencils() -> None:
    """The tuning benchmark's default stencils (library + every registration, x variants only)
    number >= 40 (issue 24's corpus), fv3core's committed targets among them."""
    from benchmarks.tuning import _default_stencils

    names = _default_stencils()
    assert len(names) >= 40 and set(load_corpus()) <= set(names)


def test_registration_targets_replace_scanned_variants() -> None:
    """A registration's explicit target is tuned, and its definition's scanned variants are not."""
    name = "fv3core.vertical.remapping:layer_pkz[potential=false]"
    t = Tunable("t", modules=("fv3core.vertical",), targets=(name,))
    found, _ = discover_all([t])
    pkz = [n for n in found if n.startswith("fv3core.vertical.remapping:layer_pkz")]
    assert pkz == [name]
    with pytest.raises(TuningError, match="targets"):
        Tunable("t", modules=("x",), targets="a:b")


@pytest.mark.slow  # ~2 min: runs both models on numpy
def test_committed_corpus_is_what_the_models_build() -> None:
    """Regenerating the corpus (python -m fv3core.tuning.corpus) gives the committed file's
    targets and left-out names together."""
    import json

    doc = json.loads(CORPUS_PATH.read_text())
    assert corpus_names(recorded_builds()) == sorted(doc["targets"] + list(doc["left_out"]))
