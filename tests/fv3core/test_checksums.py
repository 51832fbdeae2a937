"""Regression pins of FV3's scheme: a Williamson TC2 C24 one-day run (the Fortran reference
run's namelist, ``tc2_C24_d1``), a TC1 C24 one-day run and a JW06 baroclinic wave C24 L26
one-day run write the same fields, bit for bit, as the pinned references.

Reference: SHA-256 of the float64 bytes of each output field, recorded by running the same
configurations on commit c15ab4b on an x86-64 AMD
EPYC without AVX512F, NumPy 2.4.6, numpy backend. Tolerance 0: any change to the numerics, to
the order of floating-point operations or to the grid generation changes a checksum. NumPy picks
its float64 sin/cos/exp/log kernels by the CPU (AVX512F: its own SIMD kernels), which changes the
grid's last bits, so on an AVX512F machine these pins do not apply and the tests skip with that
reason. The Fortran comparisons (test_fortran_cases, test_fv3_reference) hold on every CPU.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fv3core.config import FV3Config
from fv3core.experiments.driver import run
from tests.numpy_simd import numpy_has_avx512f

DATA = Path(__file__).parent / "data"

#: name -> (config, steps, dt, pinned field checksums)
PINS: dict[str, tuple[Any, int, float, dict[str, str]]] = {
    "tc2_C24_d1": (DATA / "tc2_C24_d1_input.nml", 72, 1200.0, {
        "h": "70f2dd1f98437f66146e55b7f43cdfba986f11e8afc76cf7d874c36ab0e93767",
        "u": "8b50ca088dd9a5a504b3f43ea1debd21d0ff670fe584d57c5968e926227619af",
        "v": "eccccc24109983a3854e7d9d095c863fd941cf5883cbab9f4a094e4d1b6432be",
        "vorticity": "67d83844ed213868bf2f55ef7ee3efd8e306422c629c7697da3ee7da7e9395f9",
        "h_initial": "ec3b094dbb3f93a0b480bd97c8f170712d445297ea4d7ed15604d90aa66872b5",
        "surface": "0a182a88ffcf20dcc892515a01db9af1a707814b982b9c21e1d9b3b4b203ceef",
    }),
    # the automatic time step of the acoustic CFL estimate, one acoustic step per step
    "tc1_C24_d1": ({"case": "williamson1", "resolution": 24, "days": 1.0, "dt": 0.0,
                    "courant": 0.5, "n_split": 1, "nord": 0, "constants": "williamson"}, 20,
                   4320.0, {
        "h": "deb84f8b5899574e9e5a232d5d1c7380681164a2a759d3364bc77b5c3ab3c2bc",
        "h_exact": "76ecf44f8b51dec4b07436a15df602121f94d2e7c20a3918bb7f2a68593e68f7",
        "u": "52b0d83c1ef78d20a16c4de38facdf37cc12af085c407ec6deb6dbb6f4129914",
        "v": "ea3d80038c6430df7e078314a87231d60c6e50f78f77988fe34d85537995d17d",
        "h_initial": "c55ee31d9a875ac21f78d0231577efc78178b7282191c1ff6d479113e1f472f1",
        "surface": "0a182a88ffcf20dcc892515a01db9af1a707814b982b9c21e1d9b3b4b203ceef",
    }),  # fmt: skip
    "jw_C24_L26_d1": ({"case": "baroclinic", "resolution": 24, "nz": 26, "days": 1.0}, 48,
                      1800.0, {
        "ps": "2cca56ba0c16a994bb7f4429f8fb9d1ce60e87d687c1d706a7ae6564fa92e114",
        "t850": "822b7f8ae42a5b24c0ba6a05f1deb34b6c355268e223929e3569ef21dd8e144a",
        "u850": "683ed00a2eceb83b9dbcb64897c4dd22bee1bc5c297cc71b721b0533d05378ab",
        "v850": "6a77c08a1752cc22c7cdb98b725e4ec8646a40be84f9333bcf0bd702a7813fc6",
        "vort850": "42ebe1a4abfd98bcba705e68aaafe5076416be20fd7f884f7baccd3f3086bd7e",
        "ps_initial": "24ee2382e56c85d782d6dff32cb0e7810b74c3edc9750d1a2f3934abca99a07a",
        "sphum_column": "0a182a88ffcf20dcc892515a01db9af1a707814b982b9c21e1d9b3b4b203ceef",
        "ps_latlon": "01f40dee85937869640754249ee2c411cf976fa89b1621b354ae0968f031fb09",
        "t850_latlon": "147a3176e388cf864dfd8aea93be6db5db11bfa6347977e5461262c6a9127e4c",
        "u850_latlon": "3ecd08b922f3ac50e53da4a05fe3a93a0a49af82787dbf9cecd9a106914aa898",
        "v850_latlon": "f7a7ae605cc7eaa830c412ed2cfba04099ba77282fb2cf924bc32dd144902728",
        "vort850_latlon": "5598bf9e4c8f4fb59c26ce7b9a0828c88f3166b93786ce1737cbc04c96928c31",
    }),  # fmt: skip
}


def _config(source: Any) -> FV3Config:
    if isinstance(source, Path):
        return FV3Config.from_namelist(source)
    return FV3Config.from_dict(dict(source), source="pin")


@pytest.mark.skipif(numpy_has_avx512f(), reason="pinned on a CPU without AVX512F, whose NumPy "
                    "sin/cos kernels give other last bits of the grid")  # fmt: skip
@pytest.mark.parametrize("name", [
    "tc2_C24_d1", "tc1_C24_d1",
    # 48 large steps of the 3-D core on numpy take about 11 minutes on 2 cores
    pytest.param("jw_C24_L26_d1", marks=pytest.mark.slow),
])  # fmt: skip
def test_fields_are_bitwise_the_pinned_reference(name: str) -> None:
    """Every pinned field's SHA-256 equals the pin (tolerance 0); the step count and dt too."""
    source, steps, dt, pins = PINS[name]
    result = run(_config(source), progress=False)
    assert (result.steps, result.dt) == (steps, dt)
    got = {k: hashlib.sha256(np.ascontiguousarray(a, dtype=np.float64).tobytes()).hexdigest()
           for k, a in result.fields.items() if k in pins}  # fmt: skip
    assert sorted(got) == sorted(pins)
    differ = [k for k in pins if got[k] != pins[k]]
    assert not differ, f"{name}: fields {differ} differ from the pinned reference"
