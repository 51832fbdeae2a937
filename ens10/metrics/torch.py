"""CRPS in torch (differentiable; the training loss of every baseline)."""

from __future__ import annotations

import math

import torch
from torch import nn

_INV_SQRT_PI = 1.0 / math.sqrt(math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def crps_gaussian(mu: torch.Tensor, sigma: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Closed-form CRPS of N(mu, sigma^2) at y, elementwise."""
    z = (y - mu) / sigma
    cdf = 0.5 * (1.0 + torch.erf(z / math.sqrt(2.0)))
    pdf = _INV_SQRT_2PI * torch.exp(-0.5 * z * z)
    return sigma * (z * (2.0 * cdf - 1.0) + 2.0 * pdf - _INV_SQRT_PI)


def crps_ensemble(members: torch.Tensor, y: torch.Tensor, dim: int = 0, fair: bool = False) -> torch.Tensor:
    """Ensemble CRPS (standard or fair) of ``members`` along ``dim`` at ``y``."""
    x = members.movedim(dim, 0)
    m = x.shape[0]
    skill = (x - y.unsqueeze(0)).abs().mean(0)
    xs, _ = torch.sort(x, dim=0)
    rank = (2.0 * torch.arange(1, m + 1, dtype=x.dtype, device=x.device) - m - 1)
    pair_sum = 2.0 * (rank.reshape((m,) + (1,) * (x.ndim - 1)) * xs).sum(0)
    return skill - pair_sum / (2.0 * m * (m - 1) if fair else 2.0 * m * m)


class GaussianCRPSLoss(nn.Module):
    """Area-weighted mean Gaussian CRPS over the finite targets of a (B, H, W) batch.

    ``lat_weights`` (H,) are cos-latitude weights of mean 1; NaN targets are skipped.
    """

    def __init__(self, lat_weights: torch.Tensor | None = None) -> None:
        super().__init__()
        self.register_buffer("lat_weights", lat_weights if lat_weights is not None else torch.ones(1))

    def forward(self, mu: torch.Tensor, sigma: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        valid = torch.isfinite(y)
        y0 = torch.where(valid, y, mu.detach())
        w = self.lat_weights.reshape(1, -1, 1) * valid
        return (crps_gaussian(mu, sigma, y0) * w).sum() / w.sum().clamp_min(1.0)
