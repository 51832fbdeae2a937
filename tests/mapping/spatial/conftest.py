from __future__ import annotations

from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[3] / "mapping" / "spatial" / "examples"


@pytest.fixture
def examples() -> Path:
    return EXAMPLES
