"""Tuning discovers what packages register (entry points or register()), not packages it knows."""

from __future__ import annotations

import textwrap
from importlib import metadata
from pathlib import Path

import pytest

from mapping.tuning.errors import TuningError
from mapping.tuning.registry import (
    ENTRY_POINT_GROUP,
    Registry,
    Tunable,
    register,
    registered,
    unregister,
)
from mapping.tuning.targets import discover, discover_all, resolve

DEFINITIONS = textwrap.dedent(
    '''
    import numpy as np
    from gt4py.cartesian import gtscript
    from gt4py.cartesian.gtscript import __INLINED, PARALLEL, computation, interval

    Field = gtscript.Field[np.float64]


    def scale(a: Field, b: Field, s: float):
        with computation(PARALLEL), interval(...):
            b = s * a


    def difference(a: Field, b: Field):
        from __externals__ import DI, DJ, order

        with computation(PARALLEL), interval(...):
            if __INLINED(order == 1):
                b = a[DI, DJ, 0] - a
            else:
                b = 0.5 * (a[DI, DJ, 0] - a[-DI, -DJ, 0])


    def needs_other(a: Field, b: Field):
        from __externals__ import WEIGHT

        with computation(PARALLEL), interval(...):
            b = WEIGHT * a


    def _private(a: Field, b: Field):
        with computation(PARALLEL), interval(...):
            b = a
    '''
)


@pytest.fixture
def definitions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """An importable module of GTScript definitions that is not part of any package."""
    (tmp_path / "registry_test_defs.py").write_text(DEFINITIONS)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "registry_test_defs"


def test_registered_module_is_discovered_with_its_code_path_externals(definitions: str) -> None:
    """An explicit registration names a module and a code-path external with its choices: its
    plain definition is found as is, the directional one as x and y variants per choice, one
    needing another external is skipped with how to name it, private ones are not listed."""
    tunable = Tunable("registry-test", (definitions,), {"order": (1, 2)})
    assert not any(definitions in t.modules for t in registered())
    register(tunable)
    try:
        assert tunable in registered()
        found, skipped = discover_all()
        assert f"{definitions}:scale" in found
        assert [n for n in found if n.startswith(f"{definitions}:difference")] == [
            f"{definitions}:difference[x,order=1]", f"{definitions}:difference[x,order=2]",
            f"{definitions}:difference[y,order=1]", f"{definitions}:difference[y,order=2]",
        ]  # fmt: skip
        assert "KEY=VALUE" in skipped[f"{definitions}:needs_other"]
        assert not any("_private" in n for n in [*found, *skipped])
        target = resolve(f"{definitions}:difference[y,order=2]")
        assert target.externals["order"] == 2 and target.externals["DJ"] == 1 and target.halo == 1
    finally:
        unregister("registry-test")
    assert tunable not in registered()


def test_discovery_of_an_explicit_list_of_registrations(definitions: str) -> None:
    """discover(tunables) scans exactly those; without a choice for ``order`` the directional
    definition needs it named."""
    assert discover([]) == []
    found, skipped = discover_all([Tunable("t", (definitions,))])
    assert found == [f"{definitions}:scale"]
    assert set(skipped) == {f"{definitions}:difference", f"{definitions}:needs_other"}


def test_fv3core_registers_through_its_entry_point() -> None:
    """The installed stratoflow declares fv3core's registration in pyproject.toml; a fresh
    registry loads it from the entry point, with the PPM schemes fv3core supports and the
    recorded corpus of the variants its models build."""
    from fv3core.scheme_limits import SUPPORTED_HORD
    from fv3core.tuning.corpus import load_corpus
    from fv3core.tuning.tunable import TUNABLE

    names = {ep.name: ep.value for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)}
    assert names.get("fv3core") == "fv3core.tuning.tunable:TUNABLE"
    installed = Registry().installed()
    assert installed["fv3core"] == TUNABLE
    assert TUNABLE.modules == ("fv3core.stencils", "fv3core.vertical")
    assert TUNABLE.targets == load_corpus() and len(TUNABLE.targets) >= 35
    assert TUNABLE.externals == {"iord": SUPPORTED_HORD}
    assert TUNABLE in registered()
    assert Registry(group=None).tunables() == []  # nothing is known without registrations


def test_registrations_are_checked() -> None:
    registry = Registry(group=None)
    one = registry.register(Tunable("a", ("m1",)))
    assert registry.register(Tunable("a", ("m1",))) == one  # the same again is fine
    with pytest.raises(TuningError, match="registered already"):
        registry.register(Tunable("a", ("m2",)))
    with pytest.raises(TuningError, match="no tunable 'b'"):
        registry.unregister("b")
    with pytest.raises(TuningError, match="non-empty tuple of module names"):
        Tunable("c", "m1")  # a string, not a tuple of names
    with pytest.raises(TuningError, match="non-empty tuple of values"):
        Tunable("d", ("m1",), {"iord": ()})
    registry.unregister("a")
    assert registry.tunables() == []


def test_inputs_name_definitions_and_makers_as_module_function() -> None:
    """A registration's input makers map 'module:function' to 'module:function'; anything else is
    refused with the offending entries named (reference: the docstring's format)."""
    ok = Tunable("t", modules=("m",), inputs={"m:f": "m.inputs:make"})
    assert ok.inputs == {"m:f": "m.inputs:make"}
    with pytest.raises(TuningError, match="'f': 'make'"):
        Tunable("t", modules=("m",), inputs={"f": "make"})
