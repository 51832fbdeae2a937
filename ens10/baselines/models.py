"""The baselines as plain ``nn.Module``s (Linear/Conv2d/ReLU/... only).

Every model's ``forward(x, mean, std, members=None)`` takes
  x       (B, C, H, W)  normalised predictors (ensemble mean/std of every variable at the
                         target's level, location features, ...; see ``inputs`` in a checkpoint)
  mean    (B, H, W)     raw 48 h ensemble mean of the target (physical units)
  std     (B, H, W)     raw 48 h ensemble std of the target
  members (B, M, H, W)  raw 48 h members of the target (the ensemble Transformer only)
and returns (mu, sigma), each (B, H, W), in physical units. Networks predict a correction of the
raw ensemble (see :class:`GaussianHead`), so an untrained network reproduces the raw ensemble.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from ens10.schema import MODELS

SOFTPLUS_ONE = math.log(math.e - 1.0)  # softplus(SOFTPLUS_ONE) = 1


class GaussianHead(nn.Module):
    """(B, 2, H, W) raw outputs o -> mu = mean + scale * o0,
    sigma = (std + 1e-3 scale) * softplus(o1 + log(e - 1))."""

    def __init__(self, target_scale: float) -> None:
        super().__init__()
        self.register_buffer("scale", torch.tensor(float(target_scale)))

    def forward(self, out: torch.Tensor, mean: torch.Tensor, std: torch.Tensor):
        mu = mean + self.scale * out[:, 0]
        sigma = (std + 1e-3 * self.scale) * F.softplus(out[:, 1] + SOFTPLUS_ONE)
        return mu, sigma


class EMOS(nn.Module):
    """Ensemble model output statistics (Gneiting et al. 2005) fitted by minimum CRPS:
    mu = a + b * mean,  sigma^2 = c^2 + d^2 * std^2.

    ``per_point=True``: one (a, b, c, d) per grid point (the classic local EMOS), in coordinates
    standardised per grid point by the training-set mean ``loc`` and std ``spread`` of the
    ensemble mean; ``per_point=False``: one global (a, b, c, d), standardised globally (the global
    variant of the reference code). Initialised to the raw ensemble (a=0, b=1, c~0, d=1).
    """

    full_batch = True

    def __init__(self, shape: tuple[int, int], loc, spread, per_point: bool = True) -> None:
        super().__init__()
        pshape = shape if per_point else (1, 1)
        self.register_buffer("loc", torch.as_tensor(loc, dtype=torch.float32).expand(pshape).clone())
        self.register_buffer("spread", torch.as_tensor(spread, dtype=torch.float32).expand(pshape).clone())
        self.a = nn.Parameter(torch.zeros(pshape))
        self.b = nn.Parameter(torch.ones(pshape))
        self.c = nn.Parameter(torch.full(pshape, 1e-2))
        self.d = nn.Parameter(torch.ones(pshape))

    def forward(self, x, mean, std, members=None):
        xm = (mean - self.loc) / self.spread
        mu = self.loc + self.spread * (self.a + self.b * xm)
        s = std / self.spread
        sigma = self.spread * torch.sqrt(self.c**2 + (self.d * s) ** 2 + 1e-12)
        return mu, sigma


class MLP(nn.Module):
    """Per-grid-point MLP on the predictors of that point (Linear layers over the channel axis)."""

    def __init__(self, n_inputs: int, target_scale: float, hidden: int = 32, layers: int = 2) -> None:
        super().__init__()
        mods: list[nn.Module] = []
        width = n_inputs
        for _ in range(layers):
            mods += [nn.Linear(width, hidden), nn.ReLU()]
            width = hidden
        mods.append(nn.Linear(width, 2))
        self.net = nn.Sequential(*mods)
        nn.init.zeros_(self.net[-1].weight)
        nn.init.zeros_(self.net[-1].bias)
        self.head = GaussianHead(target_scale)

    def forward(self, x, mean, std, members=None):
        out = self.net(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        return self.head(out, mean, std)


def pad_sphere(x: torch.Tensor, py: int, px: int) -> torch.Tensor:
    """Pad a (B, C, H, W) lat-lon field: periodic in longitude, replicated at the poles."""
    if px:
        x = F.pad(x, (px, px, 0, 0), mode="circular")
    if py:
        x = F.pad(x, (0, 0, py, py), mode="replicate")
    return x


class LeNet(nn.Module):
    """LeNet-style CNN on the ``patch`` x ``patch`` neighbourhood of every grid point:
    Conv3-ReLU-MaxPool2-Conv3-ReLU-Linear-ReLU-Linear, one (mu, sigma) per patch centre."""

    def __init__(self, n_inputs: int, target_scale: float, patch: int = 9, channels: int = 16,
                 hidden: int = 32) -> None:
        super().__init__()
        if patch != 9:
            raise ValueError("LeNet is laid out for 9 x 9 patches")
        self.patch = patch
        self.features = nn.Sequential(
            nn.Conv2d(n_inputs, channels, 3), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(channels, 2 * channels, 3), nn.ReLU(),
        )
        self.classifier = nn.Sequential(nn.Linear(2 * channels, hidden), nn.ReLU(), nn.Linear(hidden, 2))
        nn.init.zeros_(self.classifier[-1].weight)
        nn.init.zeros_(self.classifier[-1].bias)
        self.head = GaussianHead(target_scale)

    def forward(self, x, mean, std, members=None):
        b, c, h, w = x.shape
        r = self.patch // 2
        cols = F.unfold(pad_sphere(x, r, r), self.patch)  # (B, C*k*k, H*W)
        patches = cols.transpose(1, 2).reshape(b * h * w, c, self.patch, self.patch)
        out = self.classifier(self.features(patches).flatten(1))  # (B*H*W, 2)
        out = out.reshape(b, h, w, 2).permute(0, 3, 1, 2)
        return self.head(out, mean, std)


class _Block(nn.Sequential):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__(nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(),
                         nn.Conv2d(cout, cout, 3, padding=1), nn.ReLU())


class UNet(nn.Module):
    """U-Net (Ronneberger et al. 2015) on the whole field: two poolings, skip connections.
    The field is padded (periodic longitude, replicated poles) to a multiple of 4."""

    def __init__(self, n_inputs: int, target_scale: float, width: int = 16) -> None:
        super().__init__()
        self.enc1, self.enc2 = _Block(n_inputs, width), _Block(width, 2 * width)
        self.mid = _Block(2 * width, 4 * width)
        self.up2 = nn.ConvTranspose2d(4 * width, 2 * width, 2, stride=2)
        self.dec2 = _Block(4 * width, 2 * width)
        self.up1 = nn.ConvTranspose2d(2 * width, width, 2, stride=2)
        self.dec1 = _Block(2 * width, width)
        self.out = nn.Conv2d(width, 2, 1)
        nn.init.zeros_(self.out.weight)
        nn.init.zeros_(self.out.bias)
        self.head = GaussianHead(target_scale)

    def forward(self, x, mean, std, members=None):
        _, _, h, w = x.shape
        ph, pw = (-h) % 4, (-w) % 4
        x = F.pad(pad_sphere(x, 0, 0), (0, pw, 0, ph), mode="replicate") if ph or pw else x
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        m = self.mid(F.max_pool2d(e2, 2))
        d2 = self.dec2(torch.cat([self.up2(m), e2], 1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], 1))
        out = self.out(d1)[:, :, :h, :w]
        return self.head(out, mean, std)


class EnsembleTransformer(nn.Module):
    """Self-attention across the members at each grid point (after Finn 2021).

    Tokens: one per member, [normalised member value, member anomaly / ensemble std, location
    features]; a Transformer encoder mixes the members; each token outputs a correction of its
    member, and the pooled tokens a spread factor. mu = mean of the corrected members,
    sigma = their std times softplus(pooled output + log(e - 1)).
    """

    needs_members = True

    def __init__(self, n_location: int, target_scale: float, loc: float, d_model: int = 16,
                 heads: int = 2, layers: int = 1) -> None:
        super().__init__()
        self.register_buffer("scale", torch.tensor(float(target_scale)))
        self.register_buffer("loc", torch.tensor(float(loc)))
        self.n_location = n_location
        self.embed = nn.Linear(2 + n_location, d_model)
        layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=2 * d_model,
                                           dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.member_out = nn.Linear(d_model, 1)
        self.spread_out = nn.Linear(d_model, 1)
        for lin in (self.member_out, self.spread_out):
            nn.init.zeros_(lin.weight)
            nn.init.zeros_(lin.bias)

    def forward(self, x, mean, std, members=None):
        if members is None:
            raise ValueError("the ensemble Transformer needs the members of the target")
        b, m, h, w = members.shape
        xm = members.permute(0, 2, 3, 1).reshape(-1, m, 1)  # (P, M, 1)
        mn = mean.reshape(-1, 1, 1)
        sd = std.reshape(-1, 1, 1) + 1e-3 * self.scale
        locf = x[:, -self.n_location:].permute(0, 2, 3, 1).reshape(-1, 1, self.n_location)
        tokens = torch.cat([(xm - self.loc) / self.scale, (xm - mn) / sd, locf.expand(-1, m, -1)], -1)
        hdn = self.encoder(self.embed(tokens))
        corrected = xm[..., 0] + self.scale * self.member_out(hdn)[..., 0]  # (P, M)
        mu = corrected.mean(1)
        spread = corrected.std(1, unbiased=False) + 1e-3 * self.scale
        sigma = spread * F.softplus(self.spread_out(hdn.mean(1))[:, 0] + SOFTPLUS_ONE)
        return mu.reshape(b, h, w), sigma.reshape(b, h, w)




def build_model(name: str, n_inputs: int, shape: tuple[int, int], norm: dict, **kw) -> nn.Module:
    """Build a baseline from its name, the number of predictor channels, the grid shape and the
    normalisation statistics (``target_scale``, ``target_loc``, ``emos_loc``/``emos_spread`` maps,
    ``n_location``)."""
    scale = norm["target_scale"]
    if name == "emos":
        return EMOS(shape, norm["emos_loc"], norm["emos_spread"], per_point=True)
    if name == "emos_global":
        return EMOS(shape, norm["target_loc"], scale, per_point=False)
    if name == "mlp":
        return MLP(n_inputs, scale, **kw)
    if name == "lenet":
        return LeNet(n_inputs, scale, **kw)
    if name == "unet":
        return UNet(n_inputs, scale, **kw)
    if name == "transformer":
        return EnsembleTransformer(norm["n_location"], scale, norm["target_loc"], **kw)
    raise ValueError(f"unknown model {name!r}: choose one of {', '.join(MODELS)}")
