"""Models the PyTorch engine trains: vomc's transformer, an LSTM, or any
nn.Module.

The protocol (what the trainer needs of a model): an nn.Module whose forward
maps int64 tokens of shape (B, T), symbols 0..A-1, to logits of shape
(B, T, A), causally: the logits at position t depend on tokens 0..t only and
give the distribution of token t+1.  Build one with build_model from a run's
config.json (a dict):

  * vomc's transformer Config (no "arch" key, or "arch": "transformer");
  * {"arch": "lstm", "alphabet": A, "context": N, "embed": E, "hidden": H,
    "layers": L} for the LSTM below;
  * {"arch": "MODULE:FACTORY", "alphabet": A, "context": N, ...}: any
    factory(config) -> nn.Module (bring your own architecture), MODULE a
    .py file or an importable name; a run records the module's file and
    its hash under "arch_source" and loads it from there (arch.py).

VomcTransformer is vomc's transformer (transformer/config.go, model.go),
parameter for parameter, with vomc's tensor names, so its state_dict is a
vomc model file's tensors and vice versa:

  x = wte[idx] + pos[0..T-1]      pos: learned wpe, or the fixed sinusoidal
                                  table PE[p, 2i] = sin(p w_i), PE[p, 2i+1] =
                                  cos(p w_i), w_i = 10000^(-2i/E)
  per layer l (prefix h.l.):
    x = x + attn.proj(MHA(ln1(x)))            ln1 only with LayerNorm; qkv
        rows are [q; k; v], head m uses rows m*hs..(m+1)*hs-1 of each;
        causal softmax(q k^T / sqrt(hs)) v
    x = x + mlp.proj(act(mlp.fc(ln2(x))))     FF only (width 4E); act is the
                                              exact-erf GELU or ReLU
  logits = head(lnf(x))                       lnf only with LayerNorm
  LayerNorm eps 1e-5; no dropout; no BOS token.
"""
from __future__ import annotations

import importlib
import math
from typing import Dict, List, Tuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .arch import SOURCE_KEY, ArchError, build, load_factory, split

# F.scaled_dot_product_attention exists from torch 2.0 on (flash / memory-
# efficient kernels on CUDA); torch 1.13 uses the explicit masked softmax.
HAS_SDPA = hasattr(F, "scaled_dot_product_attention")


class Attention(nn.Module):
    """Causal multi-head self-attention with a fused qkv projection."""

    def __init__(self, E: int, heads: int) -> None:
        super().__init__()
        self.E, self.heads = E, heads
        self.qkv = nn.Linear(E, 3 * E)
        self.proj = nn.Linear(E, E)
        self.use_sdpa = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, E = x.shape
        H, hs = self.heads, E // self.heads
        q, k, v = self.qkv(x).split(E, dim=2)
        q, k, v = (t.view(B, T, H, hs).transpose(1, 2) for t in (q, k, v))
        if self.use_sdpa:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
            mask = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
            y = torch.softmax(att.masked_fill(mask, float("-inf")), dim=-1) @ v
        return self.proj(y.transpose(1, 2).reshape(B, T, E))


class MLP(nn.Module):
    """The feed-forward sub-layer: Linear(E, 4E), activation, Linear(4E, E)."""

    def __init__(self, E: int, act: str) -> None:
        super().__init__()
        self.fc = nn.Linear(E, 4 * E)
        self.proj = nn.Linear(4 * E, E)
        self.act = nn.GELU() if act == "gelu" else nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(self.act(self.fc(x)))


class Block(nn.Module):
    """One pre-LayerNorm transformer layer (LayerNorms and FF optional)."""

    def __init__(self, E: int, heads: int, ff: bool, ln: bool, act: str) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(E) if ln else None
        self.attn = Attention(E, heads)
        self.ln2 = nn.LayerNorm(E) if (ln and ff) else None
        self.mlp = MLP(E, act) if ff else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x) if self.ln1 is not None else x)
        if self.mlp is not None:
            x = x + self.mlp(self.ln2(x) if self.ln2 is not None else x)
        return x


def sinusoidal_table(N: int, E: int) -> torch.Tensor:
    """vomc's SinusoidalTable(N, E) (computed in float64, stored as float32)."""
    pos = np.arange(N, dtype=np.float64)[:, None]
    j = np.arange(E)
    w = np.power(10000.0, -(j // 2 * 2) / E)
    return torch.tensor(np.where(j % 2 == 0, np.sin(pos * w), np.cos(pos * w)), dtype=torch.float32)


def check_transformer_config(c: dict) -> None:
    """Raise ValueError naming the first problem of a transformer Config."""
    for k in ("layers", "heads", "embed", "context", "alphabet", "feed_forward", "layer_norm", "activation", "positional"):
        if k not in c:
            raise ValueError(f"transformer config without {k!r}")
    L, E = c["layers"], c["embed"]
    if not (isinstance(L, int) and 0 <= L <= 1024 and isinstance(E, int) and 1 <= E <= 1 << 16):
        raise ValueError(f"transformer config: layers {L!r}, embed {E!r}")
    heads = [] if c["heads"] is None else c["heads"]  # Go writes a model of 0 layers with "heads": null
    if not (isinstance(heads, list) and len(heads) == L and all(isinstance(h, int) and h >= 1 and E % h == 0 for h in heads)):
        raise ValueError(f"transformer config: heads {c['heads']!r} for {L} layers of width {E}")
    if not (1 <= c["alphabet"] <= 256 and 1 <= c["context"] <= 1 << 20):
        raise ValueError(f"transformer config: alphabet {c['alphabet']!r}, context {c['context']!r}")
    if c["activation"] not in ("gelu", "relu") or c["positional"] not in ("learned", "sinusoidal"):
        raise ValueError(f"transformer config: activation {c['activation']!r}, positional {c['positional']!r}")


class VomcTransformer(nn.Module):
    """vomc's transformer; cfg is vomc's Config JSON (config.json)."""

    def __init__(self, cfg: dict) -> None:
        super().__init__()
        check_transformer_config(cfg)
        self.cfg = dict(cfg)
        E, N, A = cfg["embed"], cfg["context"], cfg["alphabet"]
        self.wte = nn.Parameter(torch.zeros(A, E))
        if cfg["positional"] == "learned":
            self.wpe = nn.Parameter(torch.zeros(N, E))
        else:
            self.wpe = None
            self.register_buffer("sin", sinusoidal_table(N, E), persistent=False)
        self.h = nn.ModuleList(Block(E, cfg["heads"][l], cfg["feed_forward"], cfg["layer_norm"], cfg["activation"])
                               for l in range(cfg["layers"]))
        self.lnf = nn.LayerNorm(E) if cfg["layer_norm"] else None
        self.head = nn.Linear(E, A)

    def set_sdpa(self, on: bool) -> None:
        """Use F.scaled_dot_product_attention (torch >= 2) in every layer."""
        for b in self.h:
            b.attn.use_sdpa = on and HAS_SDPA

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        T = idx.shape[1]
        pos = self.wpe if self.wpe is not None else self.sin
        x = F.embedding(idx, self.wte) + pos[:T]
        for b in self.h:
            x = b(x)
        if self.lnf is not None:
            x = self.lnf(x)
        return self.head(x)

    def layout(self) -> List[Tuple[str, List[int]]]:
        """vomc's Config.Layout: (tensor name, shape) in storage order."""
        E, A, N = self.cfg["embed"], self.cfg["alphabet"], self.cfg["context"]
        out = [("wte", [A, E])]
        if self.wpe is not None:
            out.append(("wpe", [N, E]))
        for l in range(self.cfg["layers"]):
            p = f"h.{l}."
            if self.cfg["layer_norm"]:
                out += [(p + "ln1.weight", [E]), (p + "ln1.bias", [E])]
            out += [(p + "attn.qkv.weight", [3 * E, E]), (p + "attn.qkv.bias", [3 * E]),
                    (p + "attn.proj.weight", [E, E]), (p + "attn.proj.bias", [E])]
            if self.cfg["feed_forward"]:
                if self.cfg["layer_norm"]:
                    out += [(p + "ln2.weight", [E]), (p + "ln2.bias", [E])]
                out += [(p + "mlp.fc.weight", [4 * E, E]), (p + "mlp.fc.bias", [4 * E]),
                        (p + "mlp.proj.weight", [E, 4 * E]), (p + "mlp.proj.bias", [E])]
        if self.cfg["layer_norm"]:
            out += [("lnf.weight", [E]), ("lnf.bias", [E])]
        return out + [("head.weight", [A, E]), ("head.bias", [A])]

    @torch.no_grad()
    def init_gpt2(self, seed: int) -> None:
        """GPT-2-style initialisation as vomc's (weights N(0, 0.02^2), the
        residual output projections N(0, (0.02/sqrt(2L))^2), biases 0,
        LayerNorm gains 1), drawn from torch's generator seeded with seed:
        the same distribution as vomc's InitParams, not the same numbers
        (use --init to start from vomc's)."""
        g = torch.Generator().manual_seed(seed)
        resid = 0.02 / math.sqrt(2 * max(self.cfg["layers"], 1))
        params = dict(self.named_parameters())
        for name, shape in self.layout():
            p = params[name]
            if len(shape) == 1:
                p.fill_(1.0 if name.endswith(("ln1.weight", "ln2.weight")) or name == "lnf.weight" else 0.0)
            else:
                std = resid if name.endswith(("attn.proj.weight", "mlp.proj.weight")) else 0.02
                p.copy_(torch.randn(shape, generator=g) * std)


class LSTMModel(nn.Module):
    """An LSTM language model: embedding (A -> E), L LSTM layers of width H,
    linear head (H -> A).  A non-transformer example of the protocol."""

    def __init__(self, cfg: dict) -> None:
        super().__init__()
        for k in ("alphabet", "embed", "hidden", "layers"):
            if not (isinstance(cfg.get(k), int) and cfg[k] >= 1):
                raise ValueError(f"lstm config: {k} {cfg.get(k)!r}, want an integer >= 1")
        self.cfg = dict(cfg)
        self.emb = nn.Embedding(cfg["alphabet"], cfg["embed"])
        self.lstm = nn.LSTM(cfg["embed"], cfg["hidden"], num_layers=cfg["layers"], batch_first=True)
        self.head = nn.Linear(cfg["hidden"], cfg["alphabet"])

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        y, _ = self.lstm(self.emb(idx))
        return self.head(y)


def is_transformer(cfg: dict) -> bool:
    return cfg.get("arch", "transformer") == "transformer"


def build_model(cfg: dict) -> nn.Module:
    """The model of a run's config (see the module's doc for the forms)."""
    arch = cfg.get("arch", "transformer")
    if arch == "transformer":
        c = {k: v for k, v in cfg.items() if k != "arch"}
        return VomcTransformer(c)
    if arch == "lstm":
        return LSTMModel(cfg)
    if ":" in arch:
        if SOURCE_KEY in cfg:  # recorded when the run started (arch.py)
            factory = load_factory(arch, cfg[SOURCE_KEY])
        else:
            mod, fn = split(arch)
            try:
                factory = getattr(importlib.import_module(mod), fn)
            except (ImportError, AttributeError) as e:
                raise ArchError(f"arch {arch!r}: cannot import {fn} from {mod}: {e}") from None
        m = build(arch, cfg, factory)
        if not isinstance(m, nn.Module):
            raise ArchError(f"arch {arch!r}: the factory returned {type(m).__name__}, not an nn.Module")
        return m
    raise ValueError(f"unknown arch {arch!r} (want transformer, lstm or module:factory)")


def param_layout(model: nn.Module) -> List[Tuple[str, List[int]]]:
    """The flat parameter order of a model: vomc's Layout for the
    transformer, named_parameters() order for any other module."""
    if isinstance(model, VomcTransformer):
        return model.layout()
    return [(n, list(p.shape)) for n, p in model.named_parameters()]


def flat_params(model: nn.Module, tensors: Dict[str, torch.Tensor] = None) -> np.ndarray:
    """The parameters (or the same-named tensors of a dict) concatenated in
    param_layout order, as a float32 vector on the host."""
    src = dict(model.named_parameters()) if tensors is None else tensors
    parts = [src[n].detach().float().reshape(-1).cpu() for n, _ in param_layout(model)]
    return torch.cat(parts).numpy() if parts else np.zeros(0, np.float32)


def unflatten(model: nn.Module, flat: np.ndarray) -> Dict[str, torch.Tensor]:
    """Split a flat vector in param_layout order into {name: tensor}."""
    out, off = {}, 0
    for n, shape in param_layout(model):
        size = int(np.prod(shape, dtype=np.int64))
        out[n] = torch.from_numpy(np.array(flat[off:off + size], dtype=np.float32).reshape(shape))
        off += size
    if off != len(flat):
        raise ValueError(f"{len(flat)} parameters, the model has {off}")
    return out
