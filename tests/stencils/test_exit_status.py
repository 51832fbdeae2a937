"""Process exit statuses in words.

Reference: POSIX signal numbers on Linux (SIGKILL 9, SIGSEGV 11) and Python's ``subprocess``
convention that a child ended by signal N has returncode -N.
"""

from __future__ import annotations

import subprocess
import sys

from stencils.exit_status import exit_description, signal_name


def test_signals_are_named_and_unknown_numbers_stay_numbers() -> None:
    assert signal_name(11) == "SIGSEGV" and signal_name(9) == "SIGKILL"
    assert signal_name(200) == "signal 200"


def test_exit_description_reads_subprocess_returncodes() -> None:
    """A child that kills itself with SIGSEGV reads ``SIGSEGV``; one that exits 3 reads ``exit 3``."""
    segv = subprocess.run([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"])
    three = subprocess.run([sys.executable, "-c", "raise SystemExit(3)"])
    assert exit_description(segv.returncode) == "SIGSEGV"
    assert exit_description(three.returncode) == "exit 3"
    assert exit_description(0) == "exit 0" and exit_description(-200) == "signal 200"
