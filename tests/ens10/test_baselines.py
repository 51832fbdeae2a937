"""Baselines trained on the sample: EMOS reaches the oracle when the truth lies in its family,
no baseline reaches it under the flow-dependent truth, every model beats the raw ensemble on the
test years, checkpoints have the documented format and training resumes exactly."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from ens10.baselines.data import fit_normalisation, load_split
from ens10.evaluate import evaluate
from ens10.train import load_checkpoint, train

TARGET = "t850"


@pytest.fixture(scope="module")
def trained(sample_nc, tmp_path_factory):
    """Checkpoints of every baseline (few epochs) for t850 on the sample."""
    out = tmp_path_factory.mktemp("ens10_ckpt")
    epochs = {"emos": 2, "emos_global": 2, "mlp": 4, "lenet": 2, "unet": 3, "transformer": 2}
    return {m: train(m, TARGET, sample_nc, out, epochs=e) for m, e in epochs.items()}


@pytest.fixture(scope="module")
def scores(sample_nc, trained, tmp_path_factory):
    out = tmp_path_factory.mktemp("ens10_eval")
    md = evaluate(sample_nc, list(trained.values()), out)
    return out, md, pd.read_csv(out / "scores.csv").set_index("model")


def test_emos_within_two_percent_of_the_oracle_when_the_truth_is_local_emos(sample_local_emos, tmp_path):
    """Truth 'local-emos' (the oracle N(clim + m, sigma) is a per-point EMOS): per-grid-point
    EMOS fitted by minimum CRPS has a test-year CRPS within 2% of the oracle's."""
    ckpt = train("emos", TARGET, sample_local_emos, tmp_path / "ck", epochs=2)
    evaluate(sample_local_emos, [ckpt], tmp_path / "eval")
    df = pd.read_csv(tmp_path / "eval" / "scores.csv").set_index("model")
    assert df.loc["emos", "crps"] <= 1.02 * df.loc["oracle (generator truth)", "crps"]


@pytest.mark.parametrize("model", ["emos", "emos_global", "mlp", "lenet", "unet", "transformer"])
def test_no_baseline_reaches_the_flow_oracle(scores, model):
    """Flow truth (outside every baseline family): each baseline's test-year CRPS is above the
    oracle's by more than 5%, and the paired block-bootstrap difference is significant."""
    out, _, df = scores
    oracle = "oracle (generator truth)"
    assert df.loc[model, "crps"] > 1.05 * df.loc[oracle, "crps"]
    pairs = pd.read_csv(out / "differences.csv")
    row = pairs[(pairs["model_a"] == model) & (pairs["model_b"] == oracle)]
    assert len(row) == 1 and row["significant"].item() == "yes" and row["low"].item() > 0


@pytest.mark.parametrize("model", ["emos", "emos_global", "mlp", "lenet", "unet", "transformer"])
def test_every_baseline_beats_the_raw_ensemble(scores, model):
    """Test-year CRPS and EECRPS of each baseline below the raw ensemble's."""
    _, _, df = scores
    raw = df.loc["raw ensemble"]
    assert df.loc[model, "crps"] < raw["crps"]
    assert df.loc[model, "eecrps"] < raw["eecrps"]


def test_evaluate_outputs(scores):
    """scores.md/csv, differences.csv and the PNG figures exist; EECRPS, the threshold-weighted
    CRPS (between 0 and the CRPS) and the members' fair CRPS are computed; every CRPS lies inside its 95% interval; the paired table holds every
    two forecasts once, each difference inside its interval, flagged significant exactly when
    the interval excludes 0, with the p-value of the row's comparison to the raw ensemble."""
    out, md, df = scores
    text = md.read_text()
    assert text.startswith("# ENS-10 scores") and "## Paired CRPS differences" in text
    assert np.isfinite(df["eecrps"]).all()
    assert np.isfinite(df.loc["raw ensemble", "crps_members_fair"])
    assert ((df["crps_low"] <= df["crps"]) & (df["crps"] <= df["crps_high"])).all()
    assert np.isnan(df.loc["raw ensemble", "p_vs_raw"])
    others = df.drop(index="raw ensemble")
    assert ((others["p_vs_raw"] > 0) & (others["p_vs_raw"] <= 1)).all()
    pairs = pd.read_csv(out / "differences.csv")
    n = len(df)
    assert len(pairs) == n * (n - 1) // 2
    assert ((pairs["low"] <= pairs["crps_a_minus_b"]) & (pairs["crps_a_minus_b"] <= pairs["high"])).all()
    excludes_zero = (pairs["low"] > 0) | (pairs["high"] < 0)
    assert (pairs["significant"].eq("yes") == excludes_zero).all()
    vs_raw = pairs[pairs["model_a"] == "raw ensemble"].set_index("model_b")["p_value"]
    np.testing.assert_allclose(vs_raw.sort_index(), others["p_vs_raw"].sort_index(), rtol=0, atol=0)
    assert ((df["twcrps_q90"] > 0) & (df["twcrps_q90"] < df["crps"])).all()  # its weight is <= 1
    for name in (f"crps_improvement_{TARGET}.png", f"crpss_{TARGET}.png", f"reliability_{TARGET}.png",
                 f"reliability_q90_{TARGET}.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_checkpoint_format(trained):
    """The documented checkpoint keys; state dicts of EMOS/MLP/LeNet are plain tensors."""
    for model in ("emos", "mlp", "lenet"):
        ck = load_checkpoint(trained[model])
        assert {"model", "config", "state_dict", "normalisation", "inputs"} <= set(ck)
        assert ck["model"] == model and ck["target"] == TARGET
        assert len(ck["normalisation"]["channel_mean"]) == len(ck["inputs"])
        assert all(isinstance(v, torch.Tensor) for v in ck["state_dict"].values())
        assert ck["inputs"][:2] == ["Z_mean", "Z_std"]


def test_resume_reproduces_an_uninterrupted_run(sample_nc, tmp_path):
    """1 epoch, then resumed to 2, gives bit-identical weights to 2 epochs in one go
    (deterministic seeds, optimizer state in the .last.pt)."""
    a = train("mlp", TARGET, sample_nc, tmp_path / "a", epochs=2, seed=1)
    first = load_checkpoint(train("mlp", TARGET, sample_nc, tmp_path / "b", epochs=1, seed=1))
    b = train("mlp", TARGET, sample_nc, tmp_path / "b", epochs=2, seed=1)
    hist = load_checkpoint(b)["history"]
    assert len(hist) == 2 and hist[0] == first["history"][0]  # epoch 1 was resumed, not redone
    sa, sb = load_checkpoint(a)["state_dict"], load_checkpoint(b)["state_dict"]
    for k in sa:
        torch.testing.assert_close(sa[k], sb[k], rtol=0, atol=0)


def test_refit_on_the_reference_training_years(trained, sample_nc, tmp_path):
    """The exported model is refitted on 1998-2015 (the reference code's training years) for the
    epoch count that was best on the 2014-2015 carve-out, with the normalisation of those years
    (recomputed here from load_split); --no-refit keeps the selection run's best weights, which
    differ from the refitted ones."""
    ck = load_checkpoint(trained["mlp"])
    refit = ck["refit"]
    assert refit["years"] == [1998, 2015]
    assert refit["epochs"] == min(ck["history"], key=lambda h: h["val_crps"])["epoch"]
    assert len(refit["train_crps"]) == refit["epochs"]
    norm = fit_normalisation(load_split(sample_nc, TARGET, "train"))
    assert ck["normalisation"]["target_loc"] == pytest.approx(norm["target_loc"], rel=1e-12)
    np.testing.assert_allclose(ck["normalisation"]["channel_mean"], norm["channel_mean"], rtol=1e-12)
    kept = load_checkpoint(train("mlp", TARGET, sample_nc, tmp_path, epochs=4, refit=False))
    assert kept["refit"] is None
    assert any(not torch.equal(kept["state_dict"][k], ck["state_dict"][k]) for k in kept["state_dict"])
