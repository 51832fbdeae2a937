"""ENS-10 post-processing baselines (PyTorch, CPU). Every model maps a batch of whole fields to a
Gaussian (mu, sigma) per grid point and trains on the Gaussian CRPS; see :mod:`ens10.baselines.models`."""

from ens10.baselines.models import MODELS, build_model

__all__ = ["MODELS", "build_model"]
