"""The per-test memory record (tests/memory_peaks.py): the peak is reset per test, covers what a
test allocates and what the processes it starts hold (not what a child forked from a large
worker inherits), reaches the summary and the JSON table, and a test over the limit fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from tests.memory_peaks import peak_mb, reset_peak

REPO = Path(__file__).resolve().parents[1]


def test_the_peak_follows_an_allocation_and_resets() -> None:
    assert reset_peak()
    base = peak_mb()
    block = np.ones(200 * 2**20 // 8)  # 200 MiB, touched
    high = peak_mb()
    del block
    assert high - base > 190
    assert reset_peak()
    assert peak_mb() < high - 150


def test_a_session_records_each_test_and_fails_over_the_limit(tmp_path: Path) -> None:
    (tmp_path / "test_alloc.py").write_text(
        "import subprocess\nimport sys\n\nimport numpy as np\n\n"
        "def test_big():\n    a = np.ones(300 * 2**20 // 8)\n    assert a.sum() > 0\n\n"
        "def test_small():\n    assert True\n\n"
        "KEPT = []\n\n"
        "def test_child():\n"
        "    code = 'import numpy as np, time; a = np.ones(300 * 2**20 // 8); time.sleep(0.5)'\n"
        "    subprocess.run([sys.executable, '-c', code], check=True)\n\n"
        "def test_small_child_of_a_large_process():\n"
        "    KEPT.append(np.ones(600 * 2**20 // 8))\n"
        "    subprocess.run(['sleep', '0.3'], check=True)\n"
    )
    table = tmp_path / "memory.json"
    env = {**os.environ, "STRATOFLOW_TEST_MEMORY": str(table)}
    argv = [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "tests.memory_peaks",
            "--rootdir", str(tmp_path), str(tmp_path / "test_alloc.py")]  # fmt: skip
    ok = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "test memory: largest peak" in ok.stdout and "test_big" in ok.stdout
    peaks = json.loads(table.read_text())["tests"]
    big = next(v for k, v in peaks.items() if k.endswith("test_big"))
    small = next(v for k, v in peaks.items() if k.endswith("test_small"))
    assert big["self_mb"] - small["self_mb"] > 250
    child = next(v for k, v in peaks.items() if k.endswith("test_child"))
    assert child["children_mb"] > 250 and child["child_hwm_mb"] > 300 and child["self_mb"] < 100
    forked = next(v for k, v in peaks.items() if k.endswith("large_process"))
    assert forked["self_mb"] > 550 and forked["children_mb"] < 50 and forked["child_hwm_mb"] < 50
    env["STRATOFLOW_TEST_MEMORY_LIMIT_MB"] = str(small["self_mb"] + 150)
    env["STRATOFLOW_TEST_MEMORY_STRICT"] = "1"
    over = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert over.returncode == 1, over.stdout + over.stderr
    assert "test(s) above the" in over.stdout and "test_big" in over.stdout
