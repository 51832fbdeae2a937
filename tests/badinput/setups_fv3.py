"""Set-ups of the bad-input cases of `stratoflow fv3` that a text file cannot express."""

from __future__ import annotations

import shutil
from pathlib import Path

NAMELIST = Path(__file__).resolve().parents[1] / "fv3core" / "data" / "tc2_C24_d1_input.nml"


def reference_namelist(case_dir: Path) -> None:
    """``input.nml``: the Fortran reference run tc2_C24_d1's namelist (valid as it is)."""
    shutil.copyfile(NAMELIST, case_dir / "input.nml")


def folder_named_db(case_dir: Path) -> None:
    """``db``: a folder where a database file is expected."""
    (case_dir / "db").mkdir()
