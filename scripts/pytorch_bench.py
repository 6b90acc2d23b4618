#!/usr/bin/env python3
"""PyTorch twin of vomc's transformer: training speed and a logits check.

The model below is the architecture of vomc's transformer package
(transformer/config.go, model.go, ops.go), parameter for parameter, with the
same tensor names as vomc's safetensors files, so a vomc model loads with
load_state_dict(strict=True):

  x = wte[idx] + pos[0..T-1]      (pos: learned wpe, or the fixed sinusoidal
                                   table sin/cos(pos * 10000^(-2i/E)))
  per layer l (prefix h.l.):
    x = x + attn.proj(MHA(ln1(x)))            ln1 only with LayerNorm
        MHA: qkv = Linear(E, 3E) rows [q; k; v]; head m uses columns
        m*hs..(m+1)*hs-1 of each; causal softmax(q k^T / sqrt(hs)) v
    x = x + mlp.proj(act(mlp.fc(ln2(x))))     FF only; act = exact-erf GELU
                                              (nn.GELU()) or ReLU; width 4E
  logits = head(lnf(x))           lnf only with LayerNorm; head untied, with bias
  LayerNorm eps 1e-5 (PyTorch's default); no dropout; no BOS.

Loss: mean cross-entropy of position t predicting x[t+1], t = 0..T-2.
Training step: forward, backward, clip_grad_norm_(1.0), AdamW (lr 1e-3,
betas (0.9, 0.999), eps 1e-8, weight decay 0.01 on every parameter), as
vomc's Trainer.TrainStep.

Usage (scripts/bench_train.sh sets up the environment):
  pytorch_bench.py --vomc PATH/TO/vomc [--threads 2] [--steps 5] [--skip-logits]
prints tokens/s for C1 and C2 in PyTorch, runs `vomc bench train` on the same
configurations and prints the ratio vomc/PyTorch; then trains three small
vomc models (`vomc data`, `vomc train`), loads their safetensors files here
and compares PyTorch's logits with `vomc bench logits` (max |diff| <= 1e-4).
"""
import argparse
import json
import math
import os
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CONFIGS = {  # name: (layers, heads, E, N, batch); A = 3
    "C1": (2, 4, 64, 256, 32),
    "C2": (4, 8, 128, 512, 16),
}


class Attention(nn.Module):
    def __init__(self, E, heads):
        super().__init__()
        self.E, self.heads = E, heads
        self.qkv = nn.Linear(E, 3 * E)
        self.proj = nn.Linear(E, E)

    def forward(self, x, mask):
        B, T, E = x.shape
        H, hs = self.heads, E // self.heads
        q, k, v = self.qkv(x).split(E, dim=2)
        q = q.view(B, T, H, hs).transpose(1, 2)
        k = k.view(B, T, H, hs).transpose(1, 2)
        v = v.view(B, T, H, hs).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
        att = att.masked_fill(mask[:T, :T], float("-inf"))
        y = torch.softmax(att, dim=-1) @ v
        return self.proj(y.transpose(1, 2).reshape(B, T, E))


class MLP(nn.Module):
    def __init__(self, E, act):
        super().__init__()
        self.fc = nn.Linear(E, 4 * E)
        self.proj = nn.Linear(4 * E, E)
        self.act = nn.GELU() if act == "gelu" else nn.ReLU()

    def forward(self, x):
        return self.proj(self.act(self.fc(x)))


class Block(nn.Module):
    def __init__(self, E, heads, ff, ln, act):
        super().__init__()
        self.ln1 = nn.LayerNorm(E) if ln else None
        self.attn = Attention(E, heads)
        self.ln2 = nn.LayerNorm(E) if (ln and ff) else None
        self.mlp = MLP(E, act) if ff else None

    def forward(self, x, mask):
        x = x + self.attn(self.ln1(x) if self.ln1 is not None else x, mask)
        if self.mlp is not None:
            x = x + self.mlp(self.ln2(x) if self.ln2 is not None else x)
        return x


def sinusoidal(N, E):
    pos = np.arange(N, dtype=np.float64)[:, None]
    j = np.arange(E)
    w = np.power(10000.0, -(j // 2 * 2) / E)
    t = np.where(j % 2 == 0, np.sin(pos * w), np.cos(pos * w))
    return torch.tensor(t, dtype=torch.float32)


class VomcTransformer(nn.Module):
    """vomc's transformer; cfg is vomc's Config JSON (transformer/config.go)."""

    def __init__(self, cfg):
        super().__init__()
        E, N, A = cfg["embed"], cfg["context"], cfg["alphabet"]
        self.wte = nn.Parameter(torch.randn(A, E) * 0.02)
        if cfg["positional"] == "learned":
            self.wpe = nn.Parameter(torch.randn(N, E) * 0.02)
        else:
            self.wpe = None
            self.register_buffer("sin", sinusoidal(N, E), persistent=False)
        self.h = nn.ModuleList(Block(E, cfg["heads"][l], cfg["feed_forward"], cfg["layer_norm"], cfg["activation"])
                               for l in range(cfg["layers"]))
        self.lnf = nn.LayerNorm(E) if cfg["layer_norm"] else None
        self.head = nn.Linear(E, A)
        self.register_buffer("mask", torch.triu(torch.ones(N, N, dtype=torch.bool), 1), persistent=False)

    def forward(self, idx):
        T = idx.shape[1]
        pos = self.wpe if self.wpe is not None else self.sin
        x = F.embedding(idx, self.wte) + pos[:T]
        for b in self.h:
            x = b(x, self.mask)
        if self.lnf is not None:
            x = self.lnf(x)
        return self.head(x)


def default_config(L, H, E, N, A=3):
    return {"layers": L, "heads": [H] * L, "embed": E, "context": N, "alphabet": A, "feed_forward": True,
            "layer_norm": True, "activation": "gelu", "positional": "learned"}


def load_safetensors(path):
    """Reads a safetensors file by its specification (8-byte little-endian
    header length, JSON header, raw little-endian data); F32 only."""
    with open(path, "rb") as f:
        b = f.read()
    (n,) = struct.unpack("<Q", b[:8])
    header = json.loads(b[8:8 + n])
    meta = header.pop("__metadata__", {})
    data = b[8 + n:]
    tensors = {}
    for name, t in header.items():
        assert t["dtype"] == "F32", (name, t["dtype"])
        lo, hi = t["data_offsets"]
        arr = np.frombuffer(data[lo:hi], dtype="<f4").reshape(t["shape"])
        tensors[name] = torch.from_numpy(arr.copy())
    return meta, tensors


def blas_library():
    """The BLAS shared library mapped into this process (after a matmul)."""
    a = torch.randn(64, 64)
    _ = a @ a
    libs = set()
    with open("/proc/self/maps") as f:
        for line in f:
            p = line.split()[-1]
            if "blas" in p or "mkl" in p:
                libs.add(p)
    return sorted(libs)


def sgemm_gflops(n=512, reps=20):
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b
    t = time.perf_counter()
    for _ in range(reps):
        a @ b
    return 2 * n ** 3 * reps / (time.perf_counter() - t) / 1e9


def bench_pytorch(name, steps, warmup, seed=1):
    L, H, E, N, B = CONFIGS[name]
    torch.manual_seed(seed)
    model = VomcTransformer(default_config(L, H, E, N))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)
    x = torch.randint(0, 3, (B, N))

    def step():
        logits = model(x)
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, 3), x[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss.item()

    for _ in range(warmup):
        step()
    times = []
    for _ in range(steps):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    mean = sum(times) / len(times)
    return {"name": name, "params": sum(p.numel() for p in model.parameters()), "mean_step_s": mean,
            "min_step_s": min(times), "tokens_per_s": B * N / mean}


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True, **kw).stdout


def logits_check(vomc, tmp):
    data = os.path.join(tmp, "data")
    run([vomc, "data", "-A", "3", "-D", "2", "-K", "30", "-N", "64", "--NK", "128", "--fresh=false", "--seed", "3",
         "--out", data])
    variants = [
        ("full-C1-like", ["--layers", "2", "--heads", "4", "--E", "64"]),
        ("heads2,1-relu-sin", ["--layers", "2", "--heads", "2,1", "--E", "16", "--act", "relu", "--pos", "sinusoidal"]),
        ("attn-only-noLN", ["--layers", "2", "--heads", "2", "--E", "16", "--no-ff", "--layernorm=false"]),
    ]
    rng = np.random.default_rng(7)
    x = [int(v) for v in rng.integers(0, 3, 64)]
    worst = 0.0
    for name, flags in variants:
        out = os.path.join(tmp, name)
        run([vomc, "train", "--data", data, "--out", out, "--batch", "8", "--max-steps", "6", "--warmup", "2",
             "--lr", "0.01", "--val-frac", "0"] + flags)
        meta, tensors = load_safetensors(os.path.join(out, "model.safetensors"))
        cfg = json.loads(meta["config"])
        model = VomcTransformer(cfg)
        model.load_state_dict(tensors, strict=True)  # same names and shapes as vomc's layout
        model.eval()
        with torch.no_grad():
            ours = model(torch.tensor([x]))[0].numpy()
        ref = json.loads(run([vomc, "bench", "logits", "--model", out, "--input", ",".join(map(str, x))]))
        theirs = np.array(ref["logits"], dtype=np.float32)
        diff = float(np.max(np.abs(ours - theirs)))
        worst = max(worst, diff)
        print(f"  {name:20s} {sum(t.numel() for t in tensors.values()):7d} params  max |logit diff| = {diff:.3g}")
    ok = worst <= 1e-4
    print(f"logits check: max |diff| = {worst:.3g} ({'OK' if ok else 'FAIL'}, bound 1e-4)")
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vomc", required=True, help="path to the vomc binary")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--configs", default="C1,C2")
    ap.add_argument("--skip-logits", action="store_true")
    ap.add_argument("--skip-bench", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    print(f"PyTorch {torch.__version__}, {torch.get_num_threads()} threads, BLAS: {', '.join(blas_library()) or '?'}")
    print(f"PyTorch sgemm 512x512: {sgemm_gflops():.1f} GFLOP/s")
    ok = True
    if not args.skip_bench:
        names = args.configs.split(",")
        pt = {n: bench_pytorch(n, args.steps, args.warmup) for n in names}
        out = run([args.vomc, "bench", "train", "--json", "--configs", args.configs, "--threads", str(args.threads),
                   "--steps", str(args.steps), "--warmup", str(args.warmup)])
        vo = {r["name"]: r for r in json.loads(out)}
        backends = sorted({r.get("backend", "?") for r in vo.values()})
        print(f"training tokens/s (forward+backward+clip+AdamW, float32, {args.threads} threads, "
              f"mean of {args.steps} steps after {args.warmup}); vomc backend {', '.join(backends)}, "
              f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', 'auto')}")
        print(f"{'config':6s} {'params':>8s} {'PyTorch':>10s} {'vomc':>10s} {'vomc/PyTorch':>13s} "
              f"{'(best steps)':>13s} {'vomc peak heap':>15s}")
        for n in names:
            p, v = pt[n], vo[n]
            if p["params"] != v["params"]:
                print(f"parameter counts differ for {n}: PyTorch {p['params']}, vomc {v['params']}")
                ok = False
            best = p["min_step_s"] / (v["min_step_ns"] / 1e9)
            print(f"{n:6s} {p['params']:8d} {p['tokens_per_s']:10.0f} {v['tokens_per_s']:10.0f} "
                  f"{v['tokens_per_s'] / p['tokens_per_s']:13.2f} {best:13.2f} {v['peak_heap_bytes'] / 2**20:12.1f} MiB")
    if not args.skip_logits:
        with tempfile.TemporaryDirectory() as tmp:
            ok = logits_check(args.vomc, tmp) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
