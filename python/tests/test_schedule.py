"""learning_rate and validate_train_config against vomc's
transformer.LearningRate (testdata/lr.json from the generator) and
TrainConfig.Validate's rules."""
from __future__ import annotations

import pytest

from conftest import reference
from vomc_torch.train import learning_rate, validate_train_config


@pytest.mark.parametrize("r", reference("lr.json"), ids=lambda r: f"{r['Schedule']},s{r['Step']},w{r['Warmup']},t{r['Total']}")
def test_learning_rate(r: dict) -> None:
    """Warm-up, then cosine and floor or the constant peak, as Go computes them at every step of the
    table, for both schedules (Go's math.Cos may differ by an ulp)."""
    got = learning_rate(r["Step"], r["Warmup"], r["Total"], r["Peak"], r["Floor"], r["Schedule"])
    assert got == pytest.approx(r["LR"], rel=1e-14, abs=0)


GOOD = {"batch_size": 8, "epochs": 2, "max_steps": 0, "lr": 1e-3, "min_lr": 1e-5, "warmup_steps": 5, "beta1": 0.9,
        "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.01, "clip_norm": 1.0, "patience": 0, "sum_over_window": False,
        "seed": 1, "log_every": 0}


@pytest.mark.parametrize("change,field", [
    ({"batch_size": 0}, "batch_size"), ({"epochs": 0}, "epochs"), ({"max_steps": -1}, "max_steps"),
    ({"lr": float("nan")}, "lr"), ({"min_lr": 1.0}, "min_lr"), ({"beta1": 1.0}, "beta1"), ({"beta2": -0.1}, "beta2"),
    ({"eps": 0.0}, "eps"), ({"weight_decay": -1.0}, "weight_decay"), ({"lr": 2.0, "min_lr": 0, "weight_decay": 0.5}, "lr"),
    ({"clip_norm": float("inf")}, "clip_norm"), ({"patience": -1}, "patience"), ({"seed": -1}, "seed"),
    ({"seed": 1 << 64}, "seed"), ({"sum_over_window": 1}, "sum_over_window"), ({"bogus": 1}, "unknown"),
    ({"lr_schedule": "linear"}, "lr_schedule"), ({"lr_schedule": 1}, "lr_schedule"),
])
def test_validate_train_config(change: dict, field: str) -> None:
    """Each rule of TrainConfig.Validate refuses, naming the field; GOOD passes."""
    validate_train_config(GOOD)
    with pytest.raises(ValueError, match=field):
        validate_train_config(dict(GOOD, **change))


def test_validate_defaults() -> None:
    """max_steps and log_every may be omitted (0), lr_schedule too (cosine,
    which vomc leaves out of what it writes), nothing else."""
    c = {k: v for k, v in GOOD.items() if k not in ("max_steps", "log_every")}
    assert validate_train_config(c)["max_steps"] == 0
    assert validate_train_config(c)["lr_schedule"] == "cosine"
    assert validate_train_config(dict(c, lr_schedule="constant"))["lr_schedule"] == "constant"
    with pytest.raises(ValueError, match="without 'lr'"):
        validate_train_config({k: v for k, v in GOOD.items() if k != "lr"})
