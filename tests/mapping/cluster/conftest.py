"""Fixtures of the halo-exchange tests (helpers live in ``cluster_helpers``)."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261130)


@pytest.fixture(autouse=True)
def _lean_mpi_children(request, monkeypatch) -> None:
    """mpi-pytest starts one pytest per rank; skip auto-loading unrelated plugins (hypothesis,
    faker: ~3 s of CPU per rank) in those children, loading only mpi-pytest itself."""
    if request.node.get_closest_marker("parallel") is not None:
        monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        monkeypatch.setenv("PYTEST_ADDOPTS", "-p pytest_mpi.plugin")
