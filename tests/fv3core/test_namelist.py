"""FV3's namelist (fv3core.namelist), FV3's constants (fv3core.constants) and
FV3Config.from_namelist: the reference runs' namelists, FV3's defaults, refusals by name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fv3core.config import FV3Config
from fv3core.constants import GFDL, UFS, WILLIAMSON, constants_by_name
from fv3core.errors import FV3ConfigError
from fv3core.namelist import (
    FV3Namelist,
    KeyRole,
    _nint,
    fv3_default_n_split,
    key_table,
    read_namelist,
)

REFERENCE = Path(__file__).resolve().parents[2].parent / "shared" / "fv3-reference"
REFERENCE_NAMELISTS = sorted(REFERENCE.glob("*/input.nml"))

#: a shallow-water namelist in the style of the reference runs (SHiELD CI C96.sw.RHwave)
NAMELIST = """
 &diag_manager_nml
    prepend_date = .F.
/
 &fms_nml
       clock_grain = 'ROUTINE',
       print_memory_usage = .false.
/
 &fv_core_nml
       layout   = 1,1
       io_layout = 1,1
       npx      = 25
       npy      = 25
       ntiles   = 6
       npz    = 1
       grid_type = 0
       fv_debug = .F.
       beta = 0.
       n_split = 2
       nwat = 0
       na_init = 0
       dnats = 0
       d2_bg = 0.
       nord = 1
       dddmp = 0.0
       d4_bg = 0.12
       mountain = .F.
       hord_mt = 8
       hord_vt = 8
       hord_tm = 8
       hord_dp = 8
       hord_tr = 8
       adjust_dry_mass = .F.
       print_freq = 6
       warm_start = .F.
       do_schmidt = .false.
       adiabatic = .true.
       external_ic = .F. !COLD START
       is_ideal_case = .T.
/
 &test_case_nml
    test_case = 2
    alpha = 0.
/
 &main_nml
       days  = 1
       hours = 0
       minutes = 0
       seconds = 0
       dt_atmos = 1200
       current_time =  0,0,0,0
       atmos_nthreads = 1
       use_hyper_thread = .false.
/
"""


def _nml(text: str = NAMELIST, *, check: bool = True) -> FV3Namelist:
    nml = FV3Namelist.from_text(text, "test.nml")
    return nml.check_supported("test.nml") if check else nml


def _with(**changes: str) -> str:
    """NAMELIST with ``key = value`` lines replaced (or added to the group of a new key)."""
    text = NAMELIST
    for key, value in changes.items():
        line = re.compile(rf"^(\s*){key}\s*=.*$", re.MULTILINE)
        if line.search(text):
            text = line.sub(rf"\g<1>{key} = {value}", text, count=1)
        else:
            text = text.replace(" &fv_core_nml\n", f" &fv_core_nml\n       {key} = {value}\n")
    return text


def _text_values(text: str) -> dict[tuple[str, str], str]:
    """``(group, key) -> value text`` of a namelist, read line by line without f90nml."""
    out: dict[tuple[str, str], str] = {}
    group = None
    for raw in text.splitlines():
        line = raw.split("!")[0].strip()
        if line.startswith("&"):
            group = line[1:].strip().lower()
        elif line == "/":
            group = None
        elif group and "=" in line:
            key, value = (s.strip() for s in line.split("=", 1))
            out[(group, key.lower())] = value.rstrip(",")
    return out


def _as_python(text: str) -> object:
    low = text.lower()
    if low in (".t.", ".true."):
        return True
    if low in (".f.", ".false."):
        return False
    if "," in text:
        return tuple(int(v) for v in text.split(","))
    return float(text) if "." in text else int(text)


# --- the reference runs' namelists ------------------------------------------------------------


@pytest.mark.skipif(not REFERENCE_NAMELISTS, reason=f"no reference namelists under {REFERENCE}")
@pytest.mark.parametrize("path", REFERENCE_NAMELISTS, ids=lambda p: p.parent.name)
def test_reference_namelists_parse_into_their_own_values(path: Path) -> None:
    """Every key of the file's fv_core_nml/test_case_nml/main_nml that FV3Namelist has reads
    back as the file's text says; plus the values README.md quotes for the runs."""
    nml = read_namelist(path)
    fields_ = {row["key"]: row["group"] for row in key_table()}
    compared = 0
    for (group, key), text in _text_values(path.read_text()).items():
        if fields_.get(key) == group:
            expected = _as_python(text)
            assert getattr(nml, key) == expected, (group, key, text)
            compared += 1
    assert compared >= 35
    res = {"C24": 24, "C48": 48, "C96": 96}[path.parent.name.split("_")[1]]
    assert nml.resolution == res and nml.npx == nml.npy == res + 1
    assert nml.n_split == {24: 2, 48: 4, 96: 8}[res]
    assert (nml.nord, nml.d4_bg, nml.dddmp, nml.d2_bg, nml.beta) == (2, 0.12, 0.0, 0.0, 0.0)
    assert {nml.hord_mt, nml.hord_vt, nml.hord_tm, nml.hord_dp, nml.hord_tr} == {8}
    assert (nml.dt_atmos, nml.test_case, nml.alpha, nml.print_freq) == (1200, 2, 0.0, 6)
    assert nml.days == int(path.parent.name.split("_d")[1]) and nml.hours == 0
    assert (nml.layout, nml.ntiles, nml.npz, nml.grid_type) == ((1, 1), 6, 1, 0)
    assert nml.adiabatic and not nml.warm_start and not nml.mountain and nml.is_ideal_case


@pytest.mark.skipif(not REFERENCE_NAMELISTS, reason=f"no reference namelists under {REFERENCE}")
def test_reference_namelist_gives_fv3s_configuration() -> None:
    path = REFERENCE / "tc2_C48_d5" / "input.nml"
    cfg = FV3Config.from_namelist(path)
    assert (cfg.case, cfg.resolution, cfg.layout, cfg.days) == ("williamson2", 48, 1, 5.0)
    assert (cfg.dt, cfg.n_split, cfg.nord, cfg.d4_bg, cfg.dddmp, cfg.d2_bg) == (
        1200.0, 4, 2, 0.12, 0.0, 0.0)  # fmt: skip
    assert (cfg.hord, cfg.hord_mt, cfg.hord_vt, cfg.hord_dp, cfg.print_freq) == (8, 8, 8, 8, 6)
    assert (cfg.constants, cfg.physical_constants) == ("ufs", UFS)
    assert cfg.steps_for(1e-4) == (360, 1200.0)  # 5 days of dt_atmos
    over = FV3Config.from_namelist(path, nord=1, backend="debug", days=0.5)
    assert (over.nord, over.backend, over.days, over.constants) == (1, "debug", 0.5, "ufs")
    # the defaults of `fv3 run --case williamson2` are this run (only its printouts differ)
    default = FV3Config.from_dict({"case": "williamson2"}).to_dict()
    assert default == {**cfg.to_dict(), "print_freq": 0}
    with pytest.raises(FV3ConfigError, match=r"unknown key\(s\) \['n_splt'\]"):
        FV3Config.from_namelist(path, n_splt=3)


# --- FV3's defaults ----------------------------------------------------------------------------


def test_keys_absent_from_a_file_take_fv3s_defaults() -> None:
    """FV3's defaults for the SW_DYNAMICS build (GFDL_atmos_cubed_sphere 73e2869):
    fv_arrays.F90:237/262/266/268 hord_mt/vt/tm/dp = 10, :277 hord_tr = 8, :289 nord = 1,
    :296 dddmp = 0, :300 d2_bg = 0, :304 d4_bg = 0.16, :544 n_split = 0, :549 k_split = 1,
    :622 ntiles = 1, :226 grid_type = 0, :840 hydrostatic = .true., :419 d_ext = 0 (0.02
    without SW_DYNAMICS), :424 nwat = 0, :439 warm_start = .false., :446 adiabatic = .true.,
    :757 mountain = .true., :577 print_freq = 0, :1355 io_layout = 1,1, :403 beta = 0;
    test_cases.F90:6164 test_case = 11, :6162 alpha = 0; atmos_model.F90:70-73 days..seconds 0.
    """
    nml = _nml("&fv_core_nml\n npx = 25, npy = 25, npz = 1, layout = 1,1 /\n"
               "&main_nml\n dt_atmos = 1200 /\n", check=False)  # fmt: skip
    assert (nml.hord_mt, nml.hord_vt, nml.hord_tm, nml.hord_dp, nml.hord_tr) == (10, 10, 10, 10, 8)
    assert (nml.nord, nml.dddmp, nml.d2_bg, nml.d4_bg, nml.d_ext, nml.beta) == (
        1, 0.0, 0.0, 0.16, 0.0, 0.0)  # fmt: skip
    assert (nml.n_split, nml.k_split, nml.ntiles, nml.grid_type, nml.io_layout) == (
        0, 1, 1, 0, (1, 1))  # fmt: skip
    assert nml.hydrostatic and nml.adiabatic and nml.mountain and not nml.warm_start
    assert (nml.nwat, nml.print_freq, nml.test_case, nml.alpha) == (0, 0, 11, 0.0)
    assert (nml.days, nml.hours, nml.minutes, nml.seconds, nml.run_seconds) == (0, 0, 0, 0, 0)
    assert nml.acoustic_steps == 2  # FV3's own n_split with ntiles = 1 (dimx = 2 (npy - 1))
    problems = "\n".join(nml.unsupported())
    for expected in ("ntiles = 1 is not supported", "test_case = 11 is not supported",
                     "run length"):  # fmt: skip
        assert expected in problems
    assert "hord" not in problems  # FV3's default hord 10 is implemented


def test_required_keys_are_named() -> None:
    """npx, npy, npz, layout (fv_arrays.F90:590-596, 1355) and dt_atmos (atmos_model.F90:74,
    fatal when 0) have no FV3 default."""
    with pytest.raises(FV3ConfigError) as info:
        _nml("&fv_core_nml\n ntiles = 6 /\n")
    msg = str(info.value)
    for key in ("npx", "npy", "npz", "layout", "dt_atmos"):
        assert f"{key} must be set (FV3 has no default" in msg
    assert "fv_arrays.F90:590" in msg and msg.startswith("test.nml: ")


@pytest.mark.parametrize(("npx", "dt", "hydrostatic", "n_split"), [
    (25, 1200, True, 3), (49, 1200, True, 5), (97, 1200, True, 9), (193, 600, True, 10),
    (49, 1200, False, 6),
])  # fmt: skip
def test_fv3s_own_n_split(npx: int, dt: int, hydrostatic: bool, n_split: int) -> None:
    """fv_control.F90 lines 983-1025, worked by hand: C24, dt 1200: n0split = nint(5 * 1200 *
    96 / 324000 + 0.49) = 2, n_split = nint(2 + 0.5) = 3; C192 (npx >= 120: ns0 = 6), dt 600:
    nint(9.02) = 9, nint(9.5) = 10; nonhydrostatic C48 (ns0 = 7): nint(5.47) = 5 -> 6."""
    assert fv3_default_n_split(npx, npx, 6, dt, hydrostatic=hydrostatic) == n_split
    assert (_nint(2.5), _nint(-2.5), _nint(2.49)) == (3, -3, 2)  # Fortran nint


# --- refusals ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("changes", "message"), [
    ({"npz": "30"}, "test_case_nml: test_case = 2 is not supported by fv3core's hydrostatic "
                    "3-D core (zonal geostrophically balanced flow; the FV3 test cases fv3core's "
                    "hydrostatic 3-D core knows: 12 (baroclinic_steady), 13 (baroclinic); with "
                    "npz = 1 the shallow-water cases 1, 2, 5, 6, 7)"),
    ({"npz": "3"}, "fv_core_nml: npz = 3 is not supported by fv3core's hydrostatic 3-D core "
                   "(npz must be one of 5, 10, 24, 26, 30"),
    ({"hord_mt": "9"}, "fv_core_nml: hord_mt = 9 is not supported by fv3core's shallow-water "
                       "core (fv3core's PPM implements hord 5, 6, 8, 10)"),
    ({"grid_type": "2"}, "fv_core_nml: grid_type = 2 is not supported"),
    ({"layout": "2,3"}, "fv_core_nml: layout = 2,3 is not supported by fv3core's shallow-water "
                        "core (layout must be square"),
    ({"npy": "31"}, "npy = 31 is not supported by fv3core's shallow-water core (npy must equal"),
    ({"ntiles": "1"}, "ntiles = 1 is not supported"),
    ({"hydrostatic": ".false."}, "hydrostatic = .false. is not supported"),
    ({"k_split": "2"}, "k_split = 2 is not supported"),
    ({"d_ext": "0.02"}, "d_ext = 0.02 is not supported"),
    ({"warm_start": ".T."}, "warm_start = .true. is not supported"),
    ({"na_init": "1"}, "na_init = 1 is not supported"),
    ({"test_case": "3"}, "test_case_nml: test_case = 3 is not supported by fv3core's "
                         "shallow-water core (non-rotating potential flow"),
    ({"test_case": "13"}, "test_case = 13 is not supported by fv3core's shallow-water core "
                          "(Jablonowski & Williamson baroclinic wave (3-D); the FV3 test cases "
                          "fv3core's shallow-water core knows: 1 (williamson1)"),
    ({"days": "1\n months = 1"}, "main_nml: months = 1 is not supported"),
])  # fmt: skip
def test_unsupported_values_are_refused_by_name(changes: dict[str, str], message: str) -> None:
    with pytest.raises(FV3ConfigError) as info:
        _nml(_with(**changes))
    assert message in str(info.value) and str(info.value).startswith("test.nml: cannot run")


@pytest.mark.parametrize(("changes", "message"), [
    ({"hord_mt": "14"}, "fv_core_nml: hord_mt = 14 is outside FV3's range"),
    ({"hord_tr": "0"}, "hord_tr = 0 is outside FV3's range"),
    ({"nord": "4"}, "nord = 4 is outside FV3's range (0 (del2) to 3 (del8))"),
    ({"d4_bg": "-0.1"}, "d4_bg = -0.1 is outside FV3's range"),
    ({"io_layout": "2,1"}, "io_layout = 2,1 is outside FV3's range"),
    ({"dt_atmos": "0"}, "dt_atmos = 0 is outside FV3's range (dt_atmos >= 1 ('dt_atmos has "
                        "not been specified'))"),
    ({"seconds": "100"}, "run length 86500 s (days/hours/minutes/seconds) is not a multiple "
                         "of dt_atmos = 1200"),
    ({"grid_type": "9"}, "grid_type = 9 is outside FV3's range"),
])  # fmt: skip
def test_values_outside_fv3s_range_are_refused(changes: dict[str, str], message: str) -> None:
    with pytest.raises(FV3ConfigError, match=re.escape(message)):
        _nml(_with(**changes), check=False)


def test_keys_fv3core_does_not_implement_unknown_keys_and_groups() -> None:
    """A feature fv3core lacks is accepted at FV3's default only; a key FV3 does not know
    (FV3 stops on it) and a group no module of the solo SW core reads are refused; I/O and
    physics groups and keys are ignored whatever their value."""
    _nml(_with(d_con="0.", smag2d="0.0", ke_bg="0"))  # FV3's defaults: fine
    with pytest.raises(FV3ConfigError) as info:
        _nml(_with(d_con="1.", fv_sg_adj="600", n_splt="3"))
    msg = str(info.value)
    assert "fv_core_nml: d_con = 1.0 is not supported by fv3core: it implements FV3's " \
           "default d_con = 0.0 only" in msg  # fmt: skip
    assert "fv_sg_adj = 600 is not supported" in msg
    assert "fv_core_nml: n_splt is not an FV3 fv_core_nml key (FV3 stops on it); did you mean " \
           "n_split?" in msg  # fmt: skip
    with pytest.raises(FV3ConfigError, match=r"&foo_nml is not a namelist group"):
        _nml(NAMELIST + "&foo_nml\n a = 1\n/\n")
    with pytest.raises(FV3ConfigError, match=r"fv_nest_nml: nest_refine = 3 is not supported .*"
                                             r"without nests"):  # fmt: skip
        _nml(NAMELIST + "&fv_nest_nml\n nest_refine = 3\n/\n")
    ignored = _with(io_layout="1,1", fv_debug=".T.", range_warn=".T.", npz_type="'gfs'",
                    kord_tm="-9", nord_tr="2", inline_q=".F.", mountain=".T.")  # fmt: skip
    ignored += "&gfdl_mp_nml\n do_sedi_w = .T.\n/\n&fms_io_nml\n checksum_required = .F.\n/\n"
    nml = _nml(ignored)
    assert (nml.fv_debug, nml.kord_tm, nml.nord_tr, nml.mountain) == (True, -9, 2, True)


@pytest.mark.parametrize(("text", "message"), [
    ("&fv_core_nml\n npx = 'abc\n/\n", "test.nml: not a valid Fortran namelist"),
    (NAMELIST.replace("/\n &test_case_nml", " &test_case_nml", 1),
     "&test_case_nml starts before the group above it ends: end that group with '/'"),
    (NAMELIST.replace("npy      = 25", "npy = = 25"), "fv_core_nml: npy has no value"),
    ("not a namelist at all\n", "test.nml: no namelist group found"),
    (NAMELIST.replace("n_split = 2", "n_split = 2.5"), "fv_core_nml: n_split = 2.5: must be an "
                                                       "integer"),
    (NAMELIST.replace("adiabatic = .true.", "adiabatic = 1"), "adiabatic = 1: must be a logical"),
    (NAMELIST.replace("layout   = 1,1", "layout = 1"), "layout = 1: needs 2 values, got 1"),
    (NAMELIST.replace("layout   = 1,1", "layout(2) = 1"), "layout is set by index"),
    (NAMELIST + "&main_nml\n days = 2\n/\n", "&main_nml appears 2 times"),
])  # fmt: skip
def test_malformed_files_are_refused_naming_the_file(text: str, message: str) -> None:
    with pytest.raises(FV3ConfigError) as info:
        _nml(text)
    assert message in str(info.value)


def test_read_namelist_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(FV3ConfigError, match=r"cannot read namelist .*nope\.nml"):
        read_namelist(tmp_path / "nope.nml")
    bad = tmp_path / "input.nml"
    bad.write_text("&fv_core_nml\n npx = 'abc\n/\n")
    with pytest.raises(FV3ConfigError, match=rf"^{re.escape(str(bad))}: not a valid Fortran "):
        read_namelist(bad)
    bad.write_text(_with(npz="30"))
    with pytest.raises(FV3ConfigError, match=rf"^{re.escape(str(bad))}: cannot run:"):
        read_namelist(bad)
    assert read_namelist(bad, check_supported=False).npz == 30


def test_test_cases_map_to_fv3core_cases() -> None:
    """FV3 test_case 1, 2, 5, 6 are Williamson's; 7 (the barotropically unstable jet,
    test_cases.F90 case(7)) is fv3core's 'galewsky'."""
    for number, case in ((1, "williamson1"), (2, "williamson2"), (5, "williamson5"),
                         (6, "williamson6"), (7, "galewsky")):  # fmt: skip
        assert _nml(_with(test_case=str(number))).case == case


def test_from_namelist_with_a_case_this_build_cannot_run(tmp_path: Path) -> None:
    path = tmp_path / "input.nml"
    path.write_text(_with(test_case="3"))
    with pytest.raises(FV3ConfigError, match=r"test_case = 3 is not supported .*non-rotating "
                                             r"potential flow; the FV3 test cases fv3core's "
                                             r"shallow-water core knows: "
                                             r"1 \(williamson1\), 2"):  # fmt: skip
        FV3Config.from_namelist(path)
    path.write_text(_with(test_case="7"))
    assert FV3Config.from_namelist(path).case == "galewsky"
    assert FV3Config.from_namelist(path, case="williamson5").case == "williamson5"
    path.write_text(_with(n_split="0"))
    assert FV3Config.from_namelist(path).n_split == 3  # FV3's own choice
    path.write_text(NAMELIST)
    cfg = FV3Config.from_namelist(path, hord=5)
    assert (cfg.hord, cfg.hord_mt, cfg.hord_vt, cfg.hord_dp, cfg.nord) == (5, 5, 5, 5, 1)


def test_key_table_documents_every_key() -> None:
    table = {row["key"]: row for row in key_table()}
    for key in ("npx", "npy", "ntiles", "npz", "layout", "io_layout", "grid_type", "n_split",
                "k_split", "nord", "d4_bg", "d2_bg", "dddmp", "d_ext", "vtdm4", "do_vort_damp",
                "nord_tr", "hord_mt", "hord_vt", "hord_tm", "hord_dp", "hord_tr", "kord_mt",
                "kord_wz", "kord_tm", "kord_tr", "beta", "dt_atmos", "days", "hours", "minutes",
                "seconds", "test_case", "alpha", "print_freq", "hydrostatic", "adiabatic",
                "warm_start", "external_ic", "mountain", "nwat", "dnats", "na_init", "fv_debug",
                "do_schmidt", "is_ideal_case", "adjust_dry_mass"):  # fmt: skip
        row = table[key]
        assert row["meaning"] and re.search(r"\.F90:\d+", row["source"]), key
        assert row["role"] in {r.value for r in KeyRole}
    assert table["npz"]["supported"] == "1" and table["io_layout"]["role"] == "ignored"
    assert table["npx"]["default"] == "must be set" and table["d4_bg"]["default"] == "0.16"


# --- constants -----------------------------------------------------------------------------------


def test_constant_sets_are_fms_and_williamsons() -> None:
    from fv3core.testcases.williamson import A_EARTH, GRAVITY, OMEGA

    assert (UFS.radius, UFS.omega, UFS.grav, UFS.rdgas, UFS.cp_air) == (
        6.3712e6, 7.2921e-5, 9.80665, 287.05, 1004.6)  # fmt: skip
    assert UFS.kappa == UFS.rdgas / UFS.cp_air  # GFS: KAPPA = RDGAS/CP_AIR
    assert GFDL.kappa == 2.0 / 7.0 and GFDL.cp_air == GFDL.rdgas / GFDL.kappa  # GFDL: the reverse
    assert (GFDL.radius, GFDL.omega, GFDL.grav, GFDL.rdgas) == (6.371e6, 7.292e-5, 9.80, 287.04)
    assert (WILLIAMSON.radius, WILLIAMSON.omega, WILLIAMSON.grav) == (A_EARTH, OMEGA, GRAVITY)
    assert UFS.cp_vapor == 4 * 461.5 and UFS.zvir == pytest.approx(461.5 / 287.05 - 1)
    assert constants_by_name("UFS") is UFS and constants_by_name("williamson") is WILLIAMSON
    with pytest.raises(FV3ConfigError, match="constants='gfs' is unknown: use one of ufs, gfdl"):
        constants_by_name("gfs")
    assert FV3Config().physical_constants is UFS
    with pytest.raises(FV3ConfigError, match="constants='nope'"):
        FV3Config(constants="nope")


# --- FV3Config's scheme keys ------------------------------------------------------------------


def test_scheme_keys_and_their_refusals() -> None:
    """FV3's keys: hord_* default to hord; each out-of-range value is refused by name; the keys
    of retired configurations are refused with what replaced them."""
    assert FV3Config(hord=5).hord_mt == 5  # hord_* default to hord
    fv3 = FV3Config(case="williamson2", nord=3, dddmp=0.2, d2_bg=0.01, d4_bg=0.15)
    assert (fv3.hord_mt, fv3.hord_vt, fv3.hord_dp) == (8, 8, 8)
    assert FV3Config(case="williamson2", hord_mt=10, hord_vt=6, hord_dp=5).hord_mt == 10
    with pytest.raises(FV3ConfigError, match="hord_vt=7: use one of"):
        FV3Config(hord_vt=7)
    with pytest.raises(FV3ConfigError, match="nord=4: FV3's divergence damping order is 0"):
        FV3Config(nord=4)
    with pytest.raises(FV3ConfigError, match="d4_bg=0.2: .* 0 <= d4_bg <= 0.16"):
        FV3Config(d4_bg=0.2)
    with pytest.raises(FV3ConfigError, match="key 'dynamics': fv3core runs FV3's scheme only"):
        FV3Config.from_dict({"dynamics": "fv3"})
    with pytest.raises(FV3ConfigError, match="rename fv3_dddmp to dddmp"):
        FV3Config.from_dict({"fv3_dddmp": 0.2})
    assert FV3Config.from_dict(fv3.to_dict()) == fv3
    assert FV3Config.from_dict({"hord_mt": None, "n_split": 2.0}).n_split == 2
    with pytest.raises(FV3ConfigError, match="key 'n_split' must be int, got 2.5"):
        FV3Config.from_dict({"n_split": 2.5})


def test_the_docs_key_table_is_the_generated_one() -> None:
    from fv3core.config import namelist_table_markdown

    page = (Path(__file__).resolve().parents[2] / "docs" / "fv3core" / "README.md").read_text()
    table = page.split("<!-- namelist-keys:begin -->\n")[1].split("\n<!-- namelist-keys:end -->")[0]
    assert table == namelist_table_markdown(), "regenerate: fv3core.config.namelist_table_markdown()"


# --- the 3-D build (npz > 1) ----------------------------------------------------------------------

JW_NAMELIST = Path(__file__).parent / "data" / "fortran" / "jw_C24_L26" / "input.nml"


def _jw(**changes: str) -> str:
    """The Fortran JW run's namelist (tests/fv3core/data/fortran/jw_C24_L26) with keys of
    fv_core_nml set (``None``: removed)."""
    lines = []
    for line in JW_NAMELIST.read_text().splitlines():
        key = line.split("=")[0].strip().lower()
        if key in changes:
            if changes[key] is not None:
                lines.append(f"       {key} = {changes.pop(key)}")
            else:
                changes.pop(key)
            continue
        lines.append(line)
        if line.strip().lower() == "&fv_core_nml":
            lines += [f"       {k} = {v}" for k, v in changes.items() if v is not None]
    return "\n".join(lines) + "\n"


def test_the_fortran_jw_namelist_gives_fv3s_3d_configuration() -> None:
    """The namelist of the Fortran JW C24 L26 reference run (FV3's hydrostatic build): the
    config is the 3-D core with every key the namelist sets (k_split 2, n_split 4, hord 10,
    hord_tr 8, kord 8/-8/8, nord 1, d4_bg 0.12, d2_bg_k1 0.15, d2_bg_k2 0.02, n_sponge 1
    from the 3-D build's default, is_ideal_case) and FV3's defaults (fill and z_tracer false)."""
    cfg = FV3Config.from_namelist(JW_NAMELIST)
    assert (cfg.case, cfg.is_3d, cfg.resolution, cfg.nz, cfg.dt, cfg.days) == (
        "baroclinic", True, 24, 26, 3600.0, 1.0)  # fmt: skip
    assert (cfg.k_split, cfg.n_split, cfg.hord_mt, cfg.hord_tm, cfg.hord_tr) == (2, 4, 10, 10, 8)
    assert (cfg.kord_mt, cfg.kord_tm, cfg.kord_tr, cfg.nord, cfg.d4_bg) == (8, -8, 8, 1, 0.12)
    assert (cfg.n_sponge, cfg.d2_bg_k1, cfg.d2_bg_k2, cfg.is_ideal_case) == (1, 0.15, 0.02, True)
    assert (cfg.fill, cfg.z_tracer, cfg.checker_tr, cfg.constants) == (False, False, False, "ufs")
    opts = cfg.dynamics_options()
    assert (opts.k_split, opts.fill, opts.dyn_core.n_sponge, opts.dyn_core.d2_bg_k1) == (
        2, False, 1, 0.15)  # fmt: skip
    nml = FV3Namelist.from_text(JW_NAMELIST.read_text().replace("test_case = 13",
                                                                "test_case = 12"))  # fmt: skip
    assert nml.case == "baroclinic_steady" and nml.is_3d and nml.core == "hydrostatic 3-D core"


def _write(text: str, name: str) -> Path:
    import tempfile

    path = Path(tempfile.mkdtemp()) / name
    path.write_text(text)
    return path


def test_a_3d_namelist_takes_the_3d_builds_defaults() -> None:
    """FV3's 3-D build has other defaults than SW_DYNAMICS (fv_arrays.F90 lines 415-479):
    a 3-D namelist that leaves out d_ext, warm_start, adiabatic and nwat gets FV3's 0.02,
    .true., .false. and 3, which the adiabatic dry core refuses by name; n_sponge is 1."""
    text = _jw(d_ext=None, warm_start=None, adiabatic=None, nwat=None)
    nml = FV3Namelist.from_text(text, "jw.nml")
    assert (nml.d_ext, nml.warm_start, nml.adiabatic, nml.nwat, nml.inline_q) == (
        0.02, True, False, 3, False)  # fmt: skip
    assert FV3Namelist.from_text(_jw(n_sponge=None), "jw.nml").n_sponge == 1
    with pytest.raises(FV3ConfigError) as info:
        nml.check_supported("jw.nml")
    msg = str(info.value)
    for part in ("d_ext = 0.02 is not supported by fv3core's hydrostatic 3-D core",
                 "warm_start = .true. is not supported", "adiabatic = .false. is not supported",
                 "nwat = 3 is not supported by fv3core's hydrostatic 3-D core (nwat must be 0: "
                 "the adiabatic 3-D core has no condensate loading)"):  # fmt: skip
        assert part in msg, part


@pytest.mark.parametrize(("changes", "message"), [
    ({"nord_tr": "2"}, "nord_tr = 2 is not supported by fv3core's hydrostatic 3-D core "
                       "(nord_tr must be 0: tracer damping (nord_tr, trdm2) is not implemented)"),
    ({"trdm2": "0.1"}, "trdm2 = 0.1 is not supported"),
    ({"q_split": "3"}, "q_split = 3 is not supported"),
    ({"inline_q": ".T."}, "inline_q = .true. is not supported"),
    ({"npz_type": "'gfs'"}, "npz_type = 'gfs' is not supported"),
    ({"remap_te": ".T."}, "remap_te = .true. is not supported"),
    ({"hord_tr": "9"}, "hord_tr = 9 is not supported by fv3core's hydrostatic 3-D core "
                       "(fv3core's PPM implements hord 5, 6, 8, 10)"),
    ({"npz": "29"}, "npz = 29 is not supported by fv3core's hydrostatic 3-D core (npz must be "
                    "one of 5, 10, 24, 26, 30"),
])  # fmt: skip
def test_3d_keys_fv3core_does_not_implement_are_refused(changes: dict[str, str],
                                                         message: str) -> None:  # fmt: skip
    """The 3-D build reads keys the shallow-water build ignores; the values fv3core's 3-D core
    does not implement are refused by name (the same keys pass in a shallow-water namelist,
    test_keys_fv3core_does_not_implement_unknown_keys_and_groups)."""
    with pytest.raises(FV3ConfigError) as info:
        read_namelist(_write(_jw(**changes), "jw.nml"))
    assert message in str(info.value)


def test_3d_options_of_a_namelist_reach_the_config() -> None:
    """Keys the 3-D build reads set FV3Config's keys of the same name."""
    text = _jw(k_split="1", n_sponge="2", fill=".T.", z_tracer=".T.", kord_tm="9",
               hord_tm="8", d2_bg_k1="0.2")  # fmt: skip
    cfg = FV3Config.from_namelist(_write(text.replace("test_case = 13", "test_case = 13\n"
                                                      "    checker_tr = .T."), "jw.nml"))  # fmt: skip
    assert (cfg.k_split, cfg.n_sponge, cfg.fill, cfg.z_tracer, cfg.kord_tm) == (1, 2, True, True, 9)
    assert (cfg.hord_tm, cfg.d2_bg_k1, cfg.checker_tr) == (8, 0.2, True)


def test_non_hydrostatic_namelist_reaches_the_config() -> None:
    """hydrostatic = .false. and FV3's non-hydrostatic keys of fv_core_nml set FV3Config's keys
    of the same name; RIM_2D's a_imp is refused naming a_imp's solver."""
    text = _jw(hydrostatic=".false.", a_imp="1.0", p_fac="0.1", kord_wz="9", d2bg_zq="0.01")
    cfg = FV3Config.from_namelist(_write(text, "nh.nml"))
    assert (cfg.hydrostatic, cfg.a_imp, cfg.p_fac, cfg.kord_wz, cfg.d2bg_zq) == (False, 1.0, 0.1, 9, 0.01)
    with pytest.raises(FV3ConfigError, match="RIM_2D"):
        FV3Config.from_namelist(_write(_jw(hydrostatic=".false.", a_imp="0.4"), "rim.nml"))
