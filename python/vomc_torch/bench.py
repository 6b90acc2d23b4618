"""Training throughput of the PyTorch engine (what `vomc bench train
--engine torch` runs): timed optimisation steps of vomc's transformer on a
batch of random windows (gathered on the host and copied to the device every
step, as in training), with the engine's speed features (bf16 autocast,
scaled_dot_product_attention, TF32, fused AdamW, optionally torch.compile)
or as a plain eager float32 loop (plain=True), so the two can be compared in
the same run."""
from __future__ import annotations

import time

import numpy as np
import torch

from .data import Dataset, Windows
from .model import VomcTransformer
from .train import EngineOptions, Trainer


def bench(cfg: dict, batch: int, steps: int, warmup: int, opts: EngineOptions, plain: bool = False, seed: int = 1) -> dict:
    """Time steps (after warmup untimed ones) of a training step on batch
    random windows of cfg["context"] symbols; returns a report dict
    (tokens_per_s = batch * N / mean step time)."""
    if plain:
        opts = EngineOptions(device=opts.device, amp="off", sdpa=False, tf32=False, fused_adamw=False,
                             compile=False, pin_memory=False, threads=opts.threads, quiet=True)
    T, A = cfg["context"], cfg["alphabet"]
    rng = np.random.default_rng(seed)
    sym = rng.integers(0, A, size=(batch, T), dtype=np.uint8)
    ds = Dataset(path="(random)", manifest={"prior": {"alphabet": A}, "n": T, "k": batch}, symbols=sym,
                 tree_of=np.arange(batch, dtype=np.int32), checksum="")
    model = VomcTransformer(cfg)
    model.init_gpt2(seed)
    tc = {"batch_size": batch, "epochs": 1, "max_steps": 0, "lr": 1e-3, "min_lr": 1e-5, "warmup_steps": 100,
          "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.01, "clip_norm": 1.0, "patience": 0,
          "sum_over_window": False, "seed": seed, "log_every": 0}
    tr = Trainer(model, tc, Windows(ds, np.arange(batch), T), None, opts)
    perm = rng.permutation(batch)

    def step() -> float:
        # the training path: gather the batch on the host, copy it to the device, step
        return tr.train_step(tr.to_device(tr.train.batch(perm)))[0]
    cuda = tr.dev.type == "cuda"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    if cuda:
        torch.cuda.reset_peak_memory_stats(tr.dev)
    loss = float("nan")
    for _ in range(warmup):
        loss = step()
    sync()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        loss = step()
        sync()
        times.append(time.perf_counter() - t0)
    mean = sum(times) / len(times)
    return {"mode": "plain" if plain else "engine", "features": opts.used, "model": cfg, "batch": batch,
            "params": sum(p.numel() for p in model.parameters()), "steps": steps, "warmup": warmup,
            "mean_step_s": mean, "min_step_s": min(times), "tokens_per_s": batch * T / mean, "loss": loss,
            "threads": torch.get_num_threads(),
            "peak_gpu_bytes": torch.cuda.max_memory_allocated(tr.dev) if cuda else 0}
