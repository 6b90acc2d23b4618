"""vomc model files in torch, with hook points named as TransformerLens
names them.

load_model(DIR) reads a vomc model file (vomc_torch's reader: checksums,
layout) into HookedVomcTransformer, vomc's transformer (vomc_torch.model's
VomcTransformer, the same parameters and state_dict) whose forward passes
every intermediate through a HookPoint:

  hook_embed, hook_pos_embed                 (B, T, E)
  blocks.{l}.hook_resid_pre                  (B, T, E)
  blocks.{l}.attn.hook_q, hook_k, hook_v     (B, T, H, hs)
  blocks.{l}.attn.hook_attn_scores           (B, H, Q, K), masked, before softmax
  blocks.{l}.attn.hook_pattern               (B, H, Q, K), the attention weights
  blocks.{l}.attn.hook_z                     (B, T, H, hs), weighted values
  blocks.{l}.hook_attn_out                   (B, T, E)
  blocks.{l}.hook_resid_mid                  (B, T, E)  (with a feed-forward)
  blocks.{l}.mlp.hook_pre, hook_post         (B, T, 4E) (with a feed-forward)
  blocks.{l}.hook_mlp_out                    (B, T, E)  (with a feed-forward)
  blocks.{l}.hook_resid_post                 (B, T, E)
  hook_resid_final                           (B, T, E), before the final LayerNorm

run_with_cache(tokens) returns (logits, cache) with cache[name] the
activations; run_with_hooks(tokens, fwd_hooks=[(name, fn)]) calls fn(act,
hook) and uses its result when it returns one.  The model's vomc_path is
the file it came from, which vomc.explore and vomc.attention_maps accept.
"""
from __future__ import annotations

import math
import os
from contextlib import contextmanager
from typing import Callable, Dict, Iterable, List, Optional, Tuple, Union

import torch
import torch.nn as nn

from vomc_torch.model import VomcTransformer
from vomc_torch.train import load_model_file


class HookPoint(nn.Module):
    """An identity module at a named place of the forward pass: forward hooks
    on it see (and may replace) the activation."""

    def __init__(self) -> None:
        super().__init__()
        self.name = ""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


class HookedVomcTransformer(VomcTransformer):
    """vomc's transformer with hook points (see the module's documentation)."""

    def __init__(self, cfg: dict) -> None:
        super().__init__(cfg)
        self.vomc_path: Optional[str] = None
        self.hook_dict: Dict[str, HookPoint] = {}
        self.hook_embed, self.hook_pos_embed, self.hook_resid_final = self._hooks("", "hook_embed", "hook_pos_embed",
                                                                                  "hook_resid_final")
        for l, b in enumerate(self.h):
            b.hook_resid_pre, b.hook_attn_out, b.hook_resid_post = self._hooks(
                f"blocks.{l}.", "hook_resid_pre", "hook_attn_out", "hook_resid_post")
            a = b.attn
            a.hook_q, a.hook_k, a.hook_v, a.hook_attn_scores, a.hook_pattern, a.hook_z = self._hooks(
                f"blocks.{l}.attn.", "hook_q", "hook_k", "hook_v", "hook_attn_scores", "hook_pattern", "hook_z")
            if b.mlp is not None:
                b.hook_resid_mid, b.hook_mlp_out = self._hooks(f"blocks.{l}.", "hook_resid_mid", "hook_mlp_out")
                b.mlp.hook_pre, b.mlp.hook_post = self._hooks(f"blocks.{l}.mlp.", "hook_pre", "hook_post")

    def _hooks(self, prefix: str, *names: str) -> List[HookPoint]:
        out = []
        for n in names:
            h = HookPoint()
            h.name = prefix + n
            self.hook_dict[h.name] = h
            out.append(h)
        return out

    def _attention(self, a, x: torch.Tensor) -> torch.Tensor:
        B, T, E = x.shape
        H, hs = a.heads, E // a.heads
        q, k, v = a.qkv(x).split(E, dim=2)
        q, k, v = (hp(t.view(B, T, H, hs)) for hp, t in ((a.hook_q, q), (a.hook_k, k), (a.hook_v, v)))
        att = (q.transpose(1, 2) @ k.transpose(1, 2).transpose(-2, -1)) * (1.0 / math.sqrt(hs))
        mask = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
        att = a.hook_attn_scores(att.masked_fill(mask, float("-inf")))
        pattern = a.hook_pattern(torch.softmax(att, dim=-1))
        z = a.hook_z((pattern @ v.transpose(1, 2)).transpose(1, 2))
        return a.proj(z.reshape(B, T, E))

    def _block(self, b, x: torch.Tensor) -> torch.Tensor:
        x = b.hook_resid_pre(x)
        x = x + b.hook_attn_out(self._attention(b.attn, b.ln1(x) if b.ln1 is not None else x))
        if b.mlp is not None:
            x = b.hook_resid_mid(x)
            m = b.mlp
            pre = m.hook_pre(m.fc(b.ln2(x) if b.ln2 is not None else x))
            x = x + b.hook_mlp_out(m.proj(m.hook_post(m.act(pre))))
        return b.hook_resid_post(x)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        T = idx.shape[1]
        pos = self.wpe if self.wpe is not None else self.sin
        x = self.hook_embed(torch.nn.functional.embedding(idx, self.wte)) + self.hook_pos_embed(pos[:T].unsqueeze(0))
        for b in self.h:
            x = self._block(b, x)
        x = self.hook_resid_final(x)
        if self.lnf is not None:
            x = self.lnf(x)
        return self.head(x)

    def _names(self, names: Union[None, str, Iterable[str], Callable[[str], bool]]) -> List[str]:
        if names is None:
            return list(self.hook_dict)
        if callable(names):
            return [n for n in self.hook_dict if names(n)]
        names = [names] if isinstance(names, str) else list(names)
        for n in names:
            if n not in self.hook_dict:
                raise KeyError(f"no hook point {n!r} (e.g. {', '.join(list(self.hook_dict)[:4])}, …)")
        return names

    @contextmanager
    def hooks(self, fwd_hooks: Iterable[Tuple[str, Callable]] = ()):
        """A context in which fn(activation, hook) runs at each named hook
        point; a non-None result replaces the activation."""
        handles = []
        try:
            for name, fn in fwd_hooks:
                for n in self._names(name if callable(name) or not isinstance(name, str) else [name]):
                    hp = self.hook_dict[n]
                    handles.append(hp.register_forward_hook(lambda mod, inp, out, fn=fn: fn(out, mod)))
            yield self
        finally:
            for h in handles:
                h.remove()

    def run_with_hooks(self, tokens, fwd_hooks: Iterable[Tuple[str, Callable]] = ()) -> torch.Tensor:
        with self.hooks(fwd_hooks):
            return self(_tokens(tokens, self))

    def run_with_cache(self, tokens, names_filter=None) -> Tuple[torch.Tensor, Dict[str, torch.Tensor]]:
        """(logits, cache): the logits (B, T, A) and cache[name] the detached
        activation at every hook point (names_filter: a name, a list of names
        or a predicate; default all)."""
        cache: Dict[str, torch.Tensor] = {}

        def keep(act, hook):
            cache[hook.name] = act.detach()

        with torch.no_grad():
            logits = self.run_with_hooks(tokens, [(n, keep) for n in self._names(names_filter)])
        return logits, cache

    def attention_patterns(self, tokens) -> torch.Tensor:
        """The attention weights (B, L, H, T, T) on tokens: what
        vomc.label_heads takes."""
        _, cache = self.run_with_cache(tokens, lambda n: n.endswith("hook_pattern"))
        return torch.stack([cache[f"blocks.{l}.attn.hook_pattern"] for l in range(len(self.h))], dim=1)


def _tokens(tokens, model: nn.Module) -> torch.Tensor:
    t = torch.as_tensor(tokens)
    if t.dim() == 1:
        t = t.unsqueeze(0)
    dev = next(model.parameters()).device
    return t.to(device=dev, dtype=torch.int64)


def load_model(path: str, device: str = "cpu") -> nn.Module:
    """The model of a vomc run directory (its model.safetensors) or model
    file: vomc's transformer as HookedVomcTransformer, any other
    architecture as vomc_torch builds it; model.vomc_path is the file."""
    path = os.fspath(path)
    file = os.path.join(path, "model.safetensors") if os.path.isdir(path) else path
    if not os.path.exists(file):
        raise FileNotFoundError(f"{file}: no such model file (a run directory of `vomc train`, or its model.safetensors)")
    model, cfg = load_model_file(file)
    if isinstance(model, VomcTransformer):
        hooked = HookedVomcTransformer(model.cfg)
        hooked.load_state_dict(model.state_dict())
        model = hooked
    model.vomc_path = path
    return model.to(device).eval()


def save_model(model: nn.Module, path: str) -> str:
    """Write model (vomc's transformer, e.g. vomc_torch.model.VomcTransformer
    or a HookedVomcTransformer) as a vomc model directory path holding
    model.safetensors in vomc's format (vomc_torch's writer): what `vomc eval
    --methods tf:path=DIR`, `vomc attention`, `vomc explore` and
    vomc.load_model read.  Returns path and sets model.vomc_path to it."""
    from vomc_torch import stfile
    from vomc_torch.train import model_bytes
    if not isinstance(model, VomcTransformer):
        raise TypeError(f"save_model writes vomc's transformer, not {type(model).__name__}")
    os.makedirs(path, exist_ok=True)
    stfile.write_atomic(os.path.join(path, "model.safetensors"), model_bytes(model, model.cfg))
    model.vomc_path = os.fspath(path)
    return model.vomc_path
