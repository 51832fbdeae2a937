"""The raw ENS-10 loader on real ECMWF GRIB (ERA5 ensemble members, tests/ens10/real_grib.py),
checked against an independent read of every message with eccodes (the reference), and on
ECMWF's deliberately corrupted sample file."""

from __future__ import annotations

import shutil
from pathlib import Path

import eccodes
import numpy as np
import pandas as pd
import pytest

from ens10.errors import ENS10DataError
from ens10.io.grib_scan import scan_grib
from ens10.io.raw import open_raw
from tests.ens10 import real_grib


@pytest.fixture(scope="module")
def real() -> Path:
    folder = real_grib.cached()
    if folder is None:
        try:
            folder = real_grib.fetch()
        except Exception as exc:  # noqa: BLE001 - offline: say why and skip
            pytest.skip(f"real GRIB files not cached and not downloadable ({exc}); run "
                        "`python -m tests.ens10.real_grib` once online")  # fmt: skip
    return folder


def _as_raw_layout(src: Path, tmp_path: Path, kind: str = "pl") -> Path:
    root = tmp_path / "raw"
    root.mkdir()
    shutil.copyfile(src, root / f"output.{kind}.20180101")
    return root


def _messages(path: Path) -> list[dict]:
    """Every message of ``path`` decoded by eccodes directly."""
    out = []
    with open(path, "rb") as fh:
        while (h := eccodes.codes_grib_new_from_file(fh)) is not None:
            try:
                keys = {k: eccodes.codes_get(h, k) for k in
                        ("shortName", "typeOfLevel", "level", "number", "dataDate", "dataTime",
                         "step", "Ni", "Nj")}  # fmt: skip
                keys["values"] = eccodes.codes_get_values(h).reshape(keys["Nj"], keys["Ni"])
                keys["lats"] = eccodes.codes_get_array(h, "distinctLatitudes")
                keys["lons"] = eccodes.codes_get_array(h, "distinctLongitudes")
            finally:
                eccodes.codes_release(h)
            out.append(keys)
    return out


def test_every_member_level_and_time_equals_eccodes(real, tmp_path) -> None:
    """All 160 messages (z and t, 500/850 hPa, 10 members, 4 times): the loader's float32
    value at each message's (variable, member, time, level) equals eccodes' decoded value
    rounded to float32, exactly; latitude increases; the grid equals eccodes' coordinates."""
    src = real / real_grib.MEMBERS_FILE
    messages = _messages(src)
    assert len(messages) == 160 and len(scan_grib(src)) == 160
    ds = open_raw(_as_raw_layout(src, tmp_path), "pl", variables=["z", "t"]).load()
    assert dict(ds.sizes) == {"number": 10, "time": 4, "step": 1, "isobaricInhPa": 2,
                              "latitude": 61, "longitude": 120}  # fmt: skip
    assert list(ds["z"].dims) == ["number", "time", "step", "isobaricInhPa", "latitude", "longitude"]
    np.testing.assert_array_equal(ds["latitude"].values, messages[0]["lats"][::-1])
    np.testing.assert_array_equal(ds["longitude"].values, messages[0]["lons"])
    seen = set()
    for m in messages:
        assert m["typeOfLevel"] == "isobaricInhPa" and m["step"] == 0
        when = pd.Timestamp(f"{m['dataDate']}") + pd.Timedelta(hours=m["dataTime"] // 100)
        field = ds[m["shortName"]].sel(number=m["number"], time=when,
                                      isobaricInhPa=m["level"]).isel(step=0).values  # fmt: skip
        np.testing.assert_array_equal(field, m["values"][::-1].astype(np.float32))
        seen.add((m["shortName"], m["number"], when, m["level"]))
    assert len(seen) == 160


def test_the_corrupted_file_is_named_with_its_message(real, tmp_path) -> None:
    """ECMWF's corrupted sample: message 1 says it is 1588 bytes long but does not end with
    7777 there; the loader names the file, the message and its offset."""
    root = _as_raw_layout(real / real_grib.CORRUPTED_FILE, tmp_path)
    with pytest.raises(ENS10DataError, match=r"output\.pl\.20180101: message 1 \(at byte 0\) "
                                             r"does not end with '7777'.*1588 bytes"):  # fmt: skip
        open_raw(root, "pl")


def test_a_truncated_real_file_names_the_cut_message(real, tmp_path) -> None:
    """The real file cut in the middle of message 101: the error names message 101 and the
    bytes that remain."""
    src = real / real_grib.MEMBERS_FILE
    spans = scan_grib(src)
    cut = spans[100].offset + spans[100].length // 2
    bad = tmp_path / "cut.grib"
    bad.write_bytes(src.read_bytes()[:cut])
    with pytest.raises(ENS10DataError, match=rf"message 101 \(at byte {spans[100].offset}\) says "
                                             rf"it is {spans[100].length} bytes long"):  # fmt: skip
        scan_grib(bad)


def test_files_that_break_the_conventions_are_refused_by_name(real, tmp_path) -> None:
    """The pressure-level file given as a surface file: refused naming typeOfLevel; a message
    rewritten as a deterministic analysis (no member number): refused naming 'number'."""
    src = real / real_grib.MEMBERS_FILE
    with pytest.raises(ENS10DataError, match="typeOfLevel isobaricInhPa: an ENS-10 sfc file"):
        open_raw(_as_raw_layout(src, tmp_path, "sfc"), "sfc")
    det = tmp_path / "det"
    det.mkdir()
    with open(src, "rb") as fh:
        h = eccodes.codes_grib_new_from_file(fh)
    try:
        eccodes.codes_set(h, "localDefinitionNumber", 1)
        eccodes.codes_set(h, "marsType", "an")
        eccodes.codes_set(h, "stream", "oper")  # a deterministic analysis: no member number
        with open(det / "output.pl.20180101", "wb") as out:
            eccodes.codes_write(h, out)
    finally:
        eccodes.codes_release(h)
    with pytest.raises(ENS10DataError, match="has 1 ensemble members .GRIB key 'number'., ENS-10 has 10"):
        open_raw(det, "pl", variables=["z"], levels=[500])
