"""Older tuning exports (format 1) name targets by the modules of their time: importing one
renames them as the registrations say today and leaves out the rows of retired definitions."""

from __future__ import annotations

import pytest

from mapping.tuning.db import EXPORT_FORMAT, TuningDB
from mapping.tuning.errors import TuningError
from mapping.tuning.registry import Tunable, current_name

OLD = Tunable(name="pkg", modules=("pkg.new",), renamed={
    "pkg.old": "pkg.new", "pkg.mixed:gone": None, "pkg.mixed": "pkg.kept", "pkg.retired": None,
})  # fmt: skip


@pytest.mark.parametrize(("old", "new"), [
    ("pkg.old:f[x,iord=8]", "pkg.new:f[x,iord=8]"),
    ("pkg.mixed:f", "pkg.kept:f"),
    ("pkg.mixed:gone[y]", None),
    ("pkg.retired:g", None),
    ("pkg.other:h", "pkg.other:h"),
    ("laplacian_3d", "laplacian_3d"),
])  # fmt: skip
def test_current_name(old: str, new: str | None) -> None:
    """The more specific 'module:function' entry wins over the module's."""
    assert current_name(old, [OLD]) == new


def test_fv3cores_old_names_are_todays_definitions() -> None:
    """Every fv3core target of the committed format-1 names that is not retired names a
    definition of today's fv3core (reference: the modules on disk); FV3's c_sw keeps its
    definitions under the module name the retired scheme had."""
    import importlib

    from fv3core.tuning.tunable import RENAMED, TUNABLE

    assert current_name("fv3core.stencils.fv3_c_sw:cgrid_delp", [TUNABLE]) == (
        "fv3core.stencils.c_sw:cgrid_delp")  # fmt: skip
    assert current_name("fv3core.stencils.c_sw:cgrid_wind_update", [TUNABLE]) is None
    assert current_name("fv3core.stencils.transport:transport_sweep[x]", [TUNABLE]) == (
        "fv3core.stencils.fv_tp_2d:transport_sweep[x]")  # fmt: skip
    for new in {v for v in RENAMED.values() if v is not None}:
        importlib.import_module(new)


def test_format_1_import_renames_and_drops(tmp_path, monkeypatch) -> None:
    """A format-1 export with an fv3core row of each kind imports renamed; the retired one is
    left out; an export of today's format imports verbatim and exports in today's format."""
    from mapping.tuning.schedule import Schedule

    schedule = Schedule.from_json('{"backend": "numpy", "oir_skip": [], "opt_flags": "", '
                                  '"proc_bind": "", "sdfg": [], "threads": 0}')  # fmt: skip
    row = {"machine": "m", "domain": "8x8x8", "key": schedule.key,
           "schedule": schedule.to_json(), "status": "ok", "median_s": 1.0}  # fmt: skip
    old = {"format": "stratoflow-tuning-db/1", "evaluations": [
        {**row, "stencil": "fv3core.stencils.fv3_d_sw:kinetic_energy"},
        {**row, "stencil": "fv3core.stencils.d_sw:cell_potential"},
        {**row, "stencil": "laplacian_3d"},
    ]}  # fmt: skip
    from mapping.tuning.db import _renamed_targets

    assert _renamed_targets(old)["format"] == EXPORT_FORMAT
    db = TuningDB(tmp_path / "t.sqlite", machine="m")
    assert db.import_(old) == 2
    names = {r["stencil"] for r in db.export()["evaluations"]}
    assert names == {"fv3core.stencils.d_sw:kinetic_energy", "laplacian_3d"}
    assert db.export()["format"] == EXPORT_FORMAT
    again = TuningDB(tmp_path / "u.sqlite", machine="m")
    assert again.import_(db.export()) == 2
    with pytest.raises(TuningError, match="stratoflow-tuning-db/2"):
        again.import_({"format": "stratoflow-tuning-db/9"})


def test_committed_database_names_todays_targets() -> None:
    """Every target of the committed tuning database (docs/benchmarks/tuning_db.json, migrated
    from format 1) resolves to a definition of today's packages, so `stratoflow bench tuning
    --no-search` finds each stored search (reference: the modules on disk)."""
    import json
    from pathlib import Path

    from mapping.tuning.targets import resolve

    path = Path(__file__).resolve().parents[3] / "docs" / "benchmarks" / "tuning_db.json"
    data = json.loads(path.read_text())
    assert data["format"] == EXPORT_FORMAT
    names = sorted({row["stencil"] for row in data["searches"]})
    assert len([n for n in names if n.startswith("fv3core.")]) >= 35
    for name in names:
        resolve(name)
