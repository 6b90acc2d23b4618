"""The PyTorch engine's trainer: vomc's TrainConfig semantics, vomc's files.

A run directory (as `vomc train` makes it) holds config.json (the model),
train_config.json ({"train": TrainConfig, "data": data metadata}),
checkpoint.safetensors, train.jsonl and, at the end, model.safetensors.
run() trains the run in a directory: it resumes from the checkpoint when there
is one (vomc writes the step-0 checkpoint of the runs it starts, with vomc's
initial parameters) and otherwise starts it (initial parameters from --init,
or this engine's own GPT-2-style draw).

Semantics, those of vomc's transformer.TrainerOf.Run:
  * epoch e visits the training windows in the order PCG(seed, e).Perm(n),
    in batches of batch_size (the last one of an epoch may be smaller);
  * step s (0-based) uses the learning rate of LearningRate: linear warm-up
    over warmup_steps, then (lr_schedule "cosine") cosine decay to min_lr at
    the schedule's end (max_steps if set, else epochs x batches per epoch)
    or (lr_schedule "constant") the peak lr;
  * the gradient is that of the mean per-symbol cross-entropy (nats) or, with
    sum_over_window, of the window-summed loss averaged over the batch; the
    global norm is clipped at clip_norm (0: none), then AdamW (decoupled weight
    decay on every parameter) updates;
  * a non-finite loss or gradient norm stops the run before that update
    (the last good checkpoint stays);
  * log entries every log_every steps and at every epoch end; at an epoch end
    the validation loss, the best parameters, early stopping after patience
    epochs without improvement, and a checkpoint (also every
    checkpoint_every steps and when interrupted by SIGINT/SIGTERM);
  * at the end the best parameters (if validated) become the model.
The checkpoint is vomc's format ("vomc-checkpoint" version 1): vomc reads it,
resumes it on either engine, and evaluates the run's model.safetensors.
"""
from __future__ import annotations

import json
import math
import os
import re
import signal
import sys
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from . import stfile
from .arch import ArchError
from .data import DataError, Windows, run_windows
from .options import MAX_BATCH, TRAIN_FIELDS, validate_train_config  # noqa: F401 (the declared options)
from .model import HAS_SDPA, VomcTransformer, build_model, flat_params, is_transformer, param_layout, unflatten

CHECKPOINT_FILE = "checkpoint.safetensors"
MODEL_FILE = "model.safetensors"
CONFIG_FILE = "config.json"
TRAIN_CONFIG_FILE = "train_config.json"
LOG_FILE = "train.jsonl"
CKPT_FORMAT, CKPT_VERSION = "vomc-checkpoint", "1"
MODEL_FORMAT = "vomc-transformer"
SNAPSHOT_DIR = "snapshots"


def snapshot_path(dir: str, step: int) -> str:
    """The snapshot file of step in a run directory (vomc's trainrun.SnapshotPath)."""
    return os.path.join(dir, SNAPSHOT_DIR, "step-%09d.safetensors" % step)

TORCH_MODEL_FORMAT = "vomc-torch-module"

# TrainConfig fields (vomc's JSON names) and the order vomc writes them.
class Diverged(RuntimeError):
    """A step's loss or gradient norm is not finite (its update was not applied)."""

    def __init__(self, step: int, loss: float, gnorm: float) -> None:
        what = f"loss {loss:g}" if not math.isfinite(loss) else f"gradient norm {gnorm:g} (loss {loss:.6g})"
        super().__init__(f"training diverged at step {step + 1}: {what}")
        self.step = step


class Interrupted(RuntimeError):
    """SIGINT or SIGTERM arrived; the checkpoint was saved at step."""

    def __init__(self, step: int, sig: str) -> None:
        super().__init__(f"interrupted ({sig}) at step {step}")
        self.step = step


def learning_rate(step: int, warmup: int, total: int, peak: float, floor: float, schedule: str = "cosine") -> float:
    """vomc's LearningRate: linear warm-up from peak/warmup to peak over
    steps 0..warmup-1, then (schedule "cosine", "" too) cosine decay from
    peak to floor at step total, or (schedule "constant") peak."""
    if step < warmup:
        return peak * (step + 1) / warmup
    if schedule == "constant":
        return peak
    if step >= total or total <= warmup:
        return floor
    frac = (step - warmup) / (total - warmup)
    return floor + 0.5 * (peak - floor) * (1 + math.cos(math.pi * frac))


def go_float(v: float):
    """A float for vomc's checkpoint state: finite as is, else "+Inf"/"-Inf"/"NaN"."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return v


def parse_go_float(v) -> float:
    if isinstance(v, str):
        return {"+Inf": math.inf, "Inf": math.inf, "-Inf": -math.inf, "NaN": math.nan}.get(v, None) or float(v)
    return float(v)


def log_entry_json(e: dict) -> str:
    """One train.jsonl line, with vomc's keys (LogEntry.MarshalJSON)."""
    j = {"step": e["step"], "epoch": e["epoch"], "train_loss": e["train_loss"]}
    if e.get("epoch_end"):
        j["epoch_end"] = True
        for k in ("epoch_train_loss", "val_loss", "best_val_loss"):
            if e.get(k) is not None and math.isfinite(e[k]):
                j[k] = e[k]
    j.update(lr=e["lr"], grad_norm=e["grad_norm"], tokens_per_s=e["tokens_per_s"], elapsed_s=e["elapsed_s"])
    return json.dumps(j, allow_nan=False)


@dataclass
class EngineOptions:
    """How the engine runs: each speed feature optional, with a fallback;
    what was used is recorded in train.jsonl."""
    device: str = "auto"  # auto | cpu | cuda | cuda:N
    amp: str = "auto"  # auto (bf16 on CUDA when supported) | bf16 | off
    sdpa: bool = True  # F.scaled_dot_product_attention where torch has it
    tf32: bool = True  # TF32 matmuls on CUDA
    fused_adamw: bool = True  # fused AdamW on CUDA where torch has it
    compile: bool = False  # torch.compile the model (torch >= 2)
    pin_memory: bool = True  # pinned host batches, copied asynchronously (CUDA)
    checkpoint_every: int = 100  # steps between checkpoints (0: epoch ends only)
    snapshot_steps: tuple = ()  # steps after which the model is saved as snapshots/step-%09d.safetensors
    threads: int = 0  # torch CPU threads (0: torch's default)
    quiet: bool = False
    used: Dict[str, object] = field(default_factory=dict)


def resolve_device(name: str) -> torch.device:
    """The torch device for --device: auto picks CUDA when available; cuda:N
    must name an existing GPU (it becomes the current device)."""
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cpu":
        return torch.device("cpu")
    m = re.fullmatch(r"cuda(?::(\d+))?", name)
    if not m:
        raise ValueError(f"--device {name!r}: want auto, cpu or cuda[:N]")
    if not torch.cuda.is_available():
        raise EnvironmentError(f"--device {name}: CUDA asked for but not available (torch {torch.__version__}, "
                               f"torch.cuda.is_available() is false)")
    idx = int(m.group(1) or 0)
    if idx >= torch.cuda.device_count():
        raise EnvironmentError(f"--device {name}: this machine has {torch.cuda.device_count()} CUDA device(s)")
    torch.cuda.set_device(idx)
    return torch.device("cuda", idx)


def bf16_native(dev: torch.device) -> bool:
    """Whether dev computes in bf16 natively (CUDA compute capability >= 8.0:
    Ampere and later; torch >= 2.3 reports emulated bf16 as supported)."""
    return dev.type == "cuda" and torch.cuda.get_device_capability(dev) >= (8, 0)


class Trainer:
    """Trains a model on windows with vomc's TrainConfig semantics and keeps
    vomc's TrainerState (the fields of a checkpoint's "state")."""

    def __init__(self, model: nn.Module, cfg: dict, train: Windows, val: Optional[Windows], opts: EngineOptions) -> None:
        self.cfg = validate_train_config(cfg)
        self.train, self.val, self.opts = train, val, opts
        self.T = train.n
        self.n = len(train)
        if self.n == 0:
            raise DataError("no training windows")
        self.dev = resolve_device(opts.device)
        cuda = self.dev.type == "cuda"
        if opts.threads > 0:
            torch.set_num_threads(opts.threads)
        used = opts.used
        used.update(engine="torch", torch=torch.__version__, device=str(self.dev),
                    gpu=torch.cuda.get_device_name(self.dev) if cuda else None)
        if cuda:  # set either way: a plain run after an engine run in one process (bench) must not inherit TF32
            torch.backends.cuda.matmul.allow_tf32 = opts.tf32
            torch.backends.cudnn.allow_tf32 = opts.tf32
        used["tf32"] = bool(cuda and opts.tf32)
        amp = opts.amp
        if amp == "auto":
            amp = "bf16" if cuda and bf16_native(self.dev) else "off"
        if amp == "bf16" and not cuda:
            amp = "off"  # bf16 autocast is a GPU speed feature; the CPU trains in float32
            used["amp_note"] = "bf16 asked for on the CPU: float32 used"
        if amp not in ("bf16", "off"):
            raise ValueError(f"--amp {opts.amp!r}: want auto, bf16 or off")
        self.amp = amp == "bf16"
        used["amp"] = "bf16" if self.amp else "off"
        self.model = model.to(self.dev)
        sdpa = opts.sdpa and HAS_SDPA and isinstance(model, VomcTransformer)
        if isinstance(model, VomcTransformer):
            model.set_sdpa(sdpa)
        used["sdpa"] = sdpa
        kw = dict(lr=self.cfg["lr"], betas=(self.cfg["beta1"], self.cfg["beta2"]), eps=self.cfg["eps"],
                  weight_decay=self.cfg["weight_decay"])
        self.opt, fused = None, False
        if cuda and opts.fused_adamw:
            try:
                self.opt, fused = torch.optim.AdamW(self.model.parameters(), fused=True, **kw), True
            except (TypeError, RuntimeError, ValueError):
                pass
        if self.opt is None:
            self.opt = torch.optim.AdamW(self.model.parameters(), **kw)
        used["fused_adamw"] = fused
        self.fused = fused
        self.fwd = self.model
        self._compile_ok = False
        self.on_engine_change = None  # called when a feature falls back after the start
        used["compile"] = False
        if opts.compile:
            if hasattr(torch, "compile"):
                self.fwd = torch.compile(self.model)
                used["compile"] = True
            else:
                used["compile_fallback"] = f"torch {torch.__version__} has no torch.compile"
        self.pin = bool(cuda and opts.pin_memory)
        self._pinned: Optional[torch.Tensor] = None
        used["pinned_batches"] = self.pin
        self.params = [p for p in self.model.parameters()]
        # TrainerState
        self.step = self.epoch = self.index = 0
        self.best_val, self.since_best, self.stopped = math.inf, 0, False
        self.epoch_loss, self.epoch_targets = 0.0, 0
        self.interval_loss, self.interval_targets = 0.0, 0
        self.lr = self.grad_norm = 0.0
        self.elapsed = 0.0  # seconds before this process
        self.best_params: Optional[np.ndarray] = None
        self.history: List[dict] = []
        self._perm, self._perm_epoch = None, -1
        self._run_start = None
        self.on_log = None  # called with every log entry
        self.on_step = None  # called with the step count after every step
        self.on_checkpoint = None  # called at checkpoint moments

    # --- the schedule -------------------------------------------------
    def batch_size(self) -> int:
        return min(self.cfg["batch_size"], self.n)

    def total_steps(self) -> int:
        per = (self.n + self.cfg["batch_size"] - 1) // self.cfg["batch_size"]
        total = self.cfg["epochs"] * per
        ms = self.cfg["max_steps"]
        return ms if 0 < ms < total else total

    def maxed(self) -> bool:
        return self.cfg["max_steps"] > 0 and self.step >= self.cfg["max_steps"]

    def done(self) -> bool:
        return self.stopped or self.epoch >= self.cfg["epochs"] or self.maxed()

    def elapsed_total(self) -> float:
        return self.elapsed + (time.perf_counter() - self._run_start if self._run_start else 0.0)

    def epoch_perm(self) -> np.ndarray:
        from .gorand import perm
        if self._perm_epoch != self.epoch or self._perm is None:
            self._perm, self._perm_epoch = perm(self.cfg["seed"], self.epoch, self.n), self.epoch
        return self._perm

    # --- steps --------------------------------------------------------
    def to_device(self, batch: np.ndarray) -> torch.Tensor:
        """A (B, T) uint8 batch as int64 tokens on the device: copied as
        bytes (from a reused pinned buffer on CUDA, asynchronously) and
        widened there.  Reusing the buffer is safe because every step
        synchronises (its loss is read) before the next batch is copied in."""
        x = torch.from_numpy(np.ascontiguousarray(batch))
        if self.pin:
            if self._pinned is None or self._pinned.shape[0] < x.shape[0] or self._pinned.shape[1] != x.shape[1]:
                self._pinned = torch.empty(x.shape, dtype=torch.uint8).pin_memory()
            buf = self._pinned[: x.shape[0]]
            buf.copy_(x)
            x = buf
        return x.to(self.dev, non_blocking=self.pin).long()

    def loss_sum(self, x: torch.Tensor) -> torch.Tensor:
        """The summed next-symbol cross-entropy (nats) over the B*(T-1) targets."""
        with torch.autocast(device_type=self.dev.type, dtype=torch.bfloat16, enabled=self.amp):
            if self.fwd is not self.model and not self._compile_ok:
                try:  # torch.compile fails at the first call when it fails (no triton, no compiler)
                    logits = self.fwd(x)
                    self._compile_ok = True
                except Exception as e:  # noqa: BLE001 - any compiler failure falls back to eager
                    self.fwd = self.model
                    self.opts.used["compile"] = False
                    self.opts.used["compile_fallback"] = f"torch.compile failed: {type(e).__name__}: {str(e)[:300]}"
                    if self.on_engine_change:
                        self.on_engine_change()
                    logits = self.fwd(x)
            else:
                logits = self.fwd(x)
        A = logits.shape[-1]
        return F.cross_entropy(logits[:, :-1].reshape(-1, A).float(), x[:, 1:].reshape(-1), reduction="sum")

    def train_step(self, x: torch.Tensor) -> tuple:
        """One optimisation step; returns (mean per-symbol loss, gradient norm
        before clipping).  Non-finite: no update."""
        B, T = x.shape
        s = self.loss_sum(x)
        scale = 1.0 / B if self.cfg["sum_over_window"] else 1.0 / (B * (T - 1))
        self.opt.zero_grad(set_to_none=True)
        (s * scale).backward()
        clip = self.cfg["clip_norm"] if self.cfg["clip_norm"] > 0 else math.inf
        gnorm = float(torch.nn.utils.clip_grad_norm_(self.params, clip))
        loss = float(s.detach()) / (B * (T - 1))
        if not (math.isfinite(loss) and math.isfinite(gnorm)):
            return loss, gnorm
        lr = learning_rate(self.step, self.cfg["warmup_steps"], self.total_steps(), self.cfg["lr"], self.cfg["min_lr"], self.cfg["lr_schedule"])
        for g in self.opt.param_groups:
            g["lr"] = lr
        self.opt.step()
        self.step += 1
        return loss, gnorm

    @torch.no_grad()
    def mean_loss(self, ws: Windows) -> float:
        """Mean per-symbol loss (nats) over every target of ws."""
        if ws is None or len(ws) == 0:
            return math.nan
        self.model.eval()
        B = min(self.cfg["batch_size"], len(ws))
        total, targets = 0.0, 0
        for s in range(0, len(ws), B):
            idx = np.arange(s, min(s + B, len(ws)))
            x = self.to_device(ws.batch(idx))
            total += float(self.loss_sum(x))
            targets += len(idx) * (ws.n - 1)
        self.model.train()
        return total / targets

    def add_entry(self, e: dict) -> None:
        e.update(step=self.step, epoch=self.epoch + self.index / self.n,
                 train_loss=self.interval_loss / self.interval_targets if self.interval_targets else math.nan,
                 lr=self.lr, grad_norm=self.grad_norm)
        now = time.perf_counter()
        dt = now - self._mark
        e["tokens_per_s"] = self._mark_tokens / dt if dt > 0 else 0.0
        e["elapsed_s"] = self.elapsed_total()
        self.interval_loss, self.interval_targets = 0.0, 0
        self._mark, self._mark_tokens = now, 0
        self.history.append(e)
        if self.on_log:
            self.on_log(e)

    def run(self, stop_requested=lambda: None) -> None:
        """Train to the end (Epochs, MaxSteps or early stopping).  Between
        steps stop_requested() may name a signal: the state is then complete
        (the caller saves a checkpoint) and Interrupted is raised."""
        n, B, T = self.n, self.batch_size(), self.T
        self._run_start = time.perf_counter()
        self._mark, self._mark_tokens = self._run_start, 0
        self.model.train()
        delay = float(os.environ.get("VOMC_TORCH_TEST_DELAY", "0") or 0)  # tests: seconds of sleep per step
        try:
            while not self.done():
                perm = self.epoch_perm()
                while self.index < n and not self.maxed():
                    sig = stop_requested()
                    if sig:
                        raise Interrupted(self.step, sig)
                    b = min(B, n - self.index)
                    x = self.to_device(self.train.batch(perm[self.index:self.index + b]))
                    self.lr = learning_rate(self.step, self.cfg["warmup_steps"], self.total_steps(), self.cfg["lr"], self.cfg["min_lr"], self.cfg["lr_schedule"])
                    loss, g = self.train_step(x)
                    if not (math.isfinite(loss) and math.isfinite(g)):
                        raise Diverged(self.step, loss, g)
                    if delay > 0:
                        time.sleep(delay)
                    self.grad_norm = g
                    self.index += b
                    tot = loss * b * (T - 1)
                    self.epoch_loss += tot
                    self.interval_loss += tot
                    self.epoch_targets += b * (T - 1)
                    self.interval_targets += b * (T - 1)
                    self._mark_tokens += b * T
                    if self.on_step:
                        self.on_step(self.step)
                    if self.index >= n or self.maxed():
                        break
                    if self.cfg["log_every"] > 0 and self.step % self.cfg["log_every"] == 0:
                        self.add_entry({})
                    ce = self.opts.checkpoint_every
                    if self.on_checkpoint and ce > 0 and self.step % ce == 0:
                        self.on_checkpoint()
                self.epoch += 1
                self.index = 0
                train_loss = self.epoch_loss / self.epoch_targets
                val_loss = math.nan
                if self.val is not None and len(self.val) > 0:
                    val_loss = self.mean_loss(self.val)
                    if val_loss < self.best_val:
                        self.best_val, self.since_best = val_loss, 0
                        self.best_params = flat_params(self.model)
                    else:
                        self.since_best += 1
                if self.cfg["patience"] > 0 and self.since_best >= self.cfg["patience"]:
                    self.stopped = True
                self.add_entry({"epoch_end": True, "epoch_train_loss": train_loss, "val_loss": val_loss,
                                "best_val_loss": self.best_val})
                self.epoch_loss, self.epoch_targets = 0.0, 0
                if self.on_checkpoint:
                    self.on_checkpoint()
        finally:
            self.elapsed += time.perf_counter() - self._run_start
            self._run_start = None
        if self.best_params is not None:
            self.set_flat(self.best_params)

    # --- parameters and checkpoints -----------------------------------
    def set_flat(self, flat: np.ndarray) -> None:
        sd = unflatten(self.model, flat)
        with torch.no_grad():
            for name, p in self.model.named_parameters():
                p.copy_(sd[name].to(p.device))

    def moments(self) -> tuple:
        """AdamW's (first, second) moments, flat in param_layout order, and its step count."""
        names = dict((id(p), n) for n, p in self.model.named_parameters())
        m, v, t = {}, {}, 0
        for p in self.params:
            st = self.opt.state.get(p, {})
            name = names[id(p)]
            m[name] = st.get("exp_avg", torch.zeros_like(p))
            v[name] = st.get("exp_avg_sq", torch.zeros_like(p))
            if "step" in st:
                t = int(float(st["step"]))
        return flat_params(self.model, m), flat_params(self.model, v), t

    def set_moments(self, m: np.ndarray, v: np.ndarray, t: int) -> None:
        if t == 0:
            return
        mm, vv = unflatten(self.model, m), unflatten(self.model, v)
        names = dict((id(p), n) for n, p in self.model.named_parameters())
        sd = self.opt.state_dict()
        # fused AdamW wants its step counts on the parameters' device (torch 2.0
        # does not move them in load_state_dict); the others on the CPU
        step = lambda p: torch.tensor(float(t), dtype=torch.float32, device=p.device if self.fused else "cpu")
        sd["state"] = {i: {"step": step(p), "exp_avg": mm[names[id(p)]].to(p.device),
                           "exp_avg_sq": vv[names[id(p)]].to(p.device)} for i, p in enumerate(self.params)}
        self.opt.load_state_dict(sd)

    def state_json(self, adam_t: int) -> dict:
        return {"step": self.step, "epoch": self.epoch, "index": self.index, "best_val": go_float(self.best_val),
                "since_best": self.since_best, "stopped": self.stopped, "epoch_loss": go_float(self.epoch_loss),
                "epoch_targets": self.epoch_targets, "interval_loss": go_float(self.interval_loss),
                "interval_targets": self.interval_targets, "lr": go_float(self.lr), "grad_norm": go_float(self.grad_norm),
                "elapsed_ns": int(round(self.elapsed_total() * 1e9)), "adam_t": adam_t,
                "train_windows": self.n, "val_windows": len(self.val) if self.val is not None else 0,
                "window_len": self.T}


def model_config_string(cfg: dict) -> tuple:
    """(model format, config string) of a checkpoint: "" and vomc's compact
    Config JSON for the transformer, else TORCH_MODEL_FORMAT and the config."""
    if is_transformer(cfg):
        keys = ["layers", "heads", "embed", "context", "alphabet", "feed_forward", "layer_norm", "activation", "positional"]
        return "", json.dumps({k: cfg[k] for k in keys}, separators=(",", ":"))
    return TORCH_MODEL_FORMAT, json.dumps(cfg, separators=(",", ":"), sort_keys=True)


def checkpoint_bytes(tr: Trainer, model_cfg: dict, meta: Dict[str, str]) -> bytes:
    """The trainer's complete state in vomc's checkpoint format."""
    fmt, conf = model_config_string(model_cfg)
    m, v, adam_t = tr.moments()
    md = {"format": CKPT_FORMAT, "version": CKPT_VERSION, "config": conf,
          "train_config": json.dumps({k: tr.cfg[k] for k in TRAIN_FIELDS}, separators=(",", ":")),
          "state": json.dumps(tr.state_json(adam_t), separators=(",", ":")),
          "history": "[" + ",".join(log_entry_json(e) for e in tr.history) + "]",
          "meta": json.dumps(meta, separators=(",", ":"), sort_keys=True)}
    if fmt:
        md["model"] = fmt
    ts = [("params", flat_params(tr.model)), ("adam.m", m), ("adam.v", v)]
    if tr.best_params is not None:
        ts.append(("best_params", tr.best_params))
    return stfile.encode(md, ts)


def model_bytes(model: nn.Module, model_cfg: dict) -> bytes:
    """model.safetensors: vomc's model file for the transformer (tensors by
    Layout, metadata format vomc-transformer and the Config), else the
    module's parameters with format vomc-torch-module and its config."""
    fmt, conf = model_config_string(model_cfg)
    params = dict(model.named_parameters())
    ts = [(n, params[n].detach().float().cpu().numpy()) for n, _ in param_layout(model)]
    return stfile.encode({"format": fmt or MODEL_FORMAT, "config": conf}, ts)


def load_model_file(path: str) -> tuple:
    """(model, config) from a model.safetensors written by vomc or by this
    engine (verified)."""
    meta, arrays = stfile.load(path)
    if meta.get("format") not in (MODEL_FORMAT, TORCH_MODEL_FORMAT):
        raise stfile.FormatError(f"{path}: metadata format {meta.get('format')!r}, not a vomc model file")
    cfg = json.loads(meta["config"])
    model = build_model_of(cfg, f"{path}'s metadata")
    names = [n for n, _ in param_layout(model)]
    if sorted(names) != sorted(arrays):
        raise stfile.FormatError(f"{path}: tensors {sorted(arrays)} do not match the config's {sorted(names)}")
    with torch.no_grad():
        for n, p in model.named_parameters():
            if list(arrays[n].shape) != list(p.shape):
                raise stfile.FormatError(f"{path}: tensor {n} has shape {list(arrays[n].shape)}, want {list(p.shape)}")
            p.copy_(torch.from_numpy(np.array(arrays[n], dtype=np.float32)))
    return model, cfg


def build_model_of(cfg: dict, where: str) -> nn.Module:
    """build_model(cfg), a custom architecture's error naming where its
    record is (a run's config.json, a model file's metadata)."""
    try:
        return build_model(cfg)
    except ArchError as e:
        raise ArchError(f"{e} (the record is in {where})") from None


def read_json(path: str) -> dict:
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        raise DataError(f"{path} does not exist") from None
    except json.JSONDecodeError as e:
        raise DataError(f"{path}: not valid JSON: {e}") from None


def _say(opts: EngineOptions, msg: str) -> None:
    """Progress on stderr; once stderr is gone (vomc, reading it, died), quiet:
    training goes on to its next checkpoint or signal."""
    if not opts.quiet:
        try:
            print(msg, file=sys.stderr, flush=True)
        except OSError:
            opts.quiet = True
            sys.stderr = open(os.devnull, "w")  # else the exit's flush fails again (status 120)


def run(dir: str, opts: EngineOptions, init: Optional[str] = None, data: Optional[str] = None,
        val: Optional[str] = None) -> Trainer:
    """Train the run in dir (see the module's doc) and write its outputs.
    Raises Interrupted (checkpoint saved), Diverged (last good checkpoint
    kept), DataError / ValueError / stfile.FormatError (nothing trained)."""
    model_cfg = read_json(os.path.join(dir, CONFIG_FILE))
    tcj = read_json(os.path.join(dir, TRAIN_CONFIG_FILE))
    if not isinstance(tcj, dict) or "train" not in tcj or "data" not in tcj:
        raise DataError(f"{os.path.join(dir, TRAIN_CONFIG_FILE)}: want an object with 'train' and 'data'")
    ckpt_path = os.path.join(dir, CHECKPOINT_FILE)
    ckpt = None
    if os.path.exists(ckpt_path):
        for name in os.listdir(dir):  # temporaries of an interrupted write
            if name.startswith(("." + CHECKPOINT_FILE + ".tmp", "." + MODEL_FILE + ".tmp")):
                os.unlink(os.path.join(dir, name))
        cmeta, ct = stfile.load(ckpt_path)
        if cmeta.get("format") != CKPT_FORMAT or cmeta.get("version") != CKPT_VERSION:
            raise stfile.FormatError(f"{ckpt_path}: not a {CKPT_FORMAT} version {CKPT_VERSION} file")
        meta = json.loads(cmeta["meta"])
        tc = json.loads(cmeta["train_config"])
        fmt, conf = model_config_string(model_cfg)
        if conf != cmeta["config"] or fmt != cmeta.get("model", ""):
            raise DataError(f"{ckpt_path}: its model config differs from {CONFIG_FILE}")
        ckpt = (cmeta, ct)
    else:
        meta, tc = dict(tcj["data"]), tcj["train"]
    for key, p in (("data", data), ("val", val)):  # moved data sets (their checksums must match)
        if p:
            meta[key] = os.path.abspath(p)
    train, val, A, meta = run_windows(meta)
    if model_cfg.get("alphabet") != A:
        raise DataError(f"the model's alphabet is {model_cfg.get('alphabet')}, the data's {A}")
    if train.n > model_cfg.get("context", train.n) or train.n < 2:
        raise DataError(f"windows of {train.n} symbols, the model takes 2..{model_cfg.get('context')}")
    if ckpt is None:
        torch.manual_seed(int(tc.get("seed", 0)))  # the initialisation of modules other than vomc's transformer
    model = build_model_of(model_cfg, os.path.join(dir, CONFIG_FILE))
    tr = Trainer(model, tc, train, val, opts)
    if ckpt is not None:
        cmeta, ct = ckpt
        st = json.loads(cmeta["state"])
        nv = len(val) if val is not None else 0
        if st["train_windows"] != len(train) or st["val_windows"] != nv or st["window_len"] != train.n:
            raise DataError(f"{ckpt_path}: the run was trained on {st['train_windows']} training and {st['val_windows']} "
                            f"validation windows of {st['window_len']} symbols, the data gives {len(train)} and {nv} of {train.n}")
        tr.set_flat(np.asarray(ct["params"]))
        tr.set_moments(np.asarray(ct["adam.m"]), np.asarray(ct["adam.v"]), int(st["adam_t"]))
        if "best_params" in ct:
            tr.best_params = np.array(ct["best_params"], dtype=np.float32)
        tr.step, tr.epoch, tr.index = st["step"], st["epoch"], st["index"]
        tr.best_val, tr.since_best, tr.stopped = parse_go_float(st["best_val"]), st["since_best"], st["stopped"]
        tr.epoch_loss, tr.epoch_targets = parse_go_float(st["epoch_loss"]), st["epoch_targets"]
        tr.interval_loss, tr.interval_targets = parse_go_float(st["interval_loss"]), st["interval_targets"]
        tr.lr, tr.grad_norm = parse_go_float(st["lr"]), parse_go_float(st["grad_norm"])
        tr.elapsed = st["elapsed_ns"] / 1e9
        tr.history = [_entry_from_json(e) for e in json.loads(cmeta["history"])]
        if tr.step > 0 or tr.epoch > 0:
            _say(opts, f"resuming {dir} at step {tr.step} (epoch {tr.epoch + 1}, window {tr.index} of {len(train)})")
    else:
        if init is not None:
            m, _ = load_model_file(init)
            tr.set_flat(flat_params(m))
        elif isinstance(model, VomcTransformer):
            model.init_gpt2(tr.cfg["seed"])
        # other modules keep their own initialisation (seeded by the caller)
    save = lambda: stfile.write_atomic(ckpt_path, checkpoint_bytes(tr, model_cfg, meta))
    if ckpt is None:
        save()
    tr.on_checkpoint = save
    log_path = os.path.join(dir, LOG_FILE)
    exts = json.loads(meta.get("extensions") or "[]")  # a run's extensions (trainrun.ExtensionRecord), each after the entries up to its step
    with open(log_path, "w") as f:  # the log as of the checkpoint, then this process's engine line
        for e in tr.history:
            while exts and exts[0]["at_step"] < e["step"]:
                f.write(json.dumps({"extended": exts.pop(0)}, separators=(",", ":"), ensure_ascii=False) + "\n")
            f.write(log_entry_json(e) + "\n")
        for x in exts:
            f.write(json.dumps({"extended": x}, separators=(",", ":"), ensure_ascii=False) + "\n")
        f.write(json.dumps({"engine": opts.used}) + "\n")
    logf = open(log_path, "a")
    total = tr.total_steps()

    def on_log(e: dict) -> None:
        logf.write(log_entry_json(e) + "\n")
        logf.flush()
        val = f" best val {tr.best_val:.4f}" if math.isfinite(tr.best_val) else ""
        per = (tr.n + tr.cfg["batch_size"] - 1) // tr.cfg["batch_size"]  # epochs as 'vomc train' counts them: steps / steps per epoch
        _say(opts, f"step {e['step']}/{total} epoch {e['step'] / per:.2f} loss {e['train_loss']:.4f}{val} {e['tokens_per_s']:.0f} tok/s")
    tr.on_log = on_log
    tr.on_engine_change = lambda: (logf.write(json.dumps({"engine": opts.used}) + "\n"), logf.flush())
    snaps = set(opts.snapshot_steps)
    if snaps:
        os.makedirs(os.path.join(dir, SNAPSHOT_DIR), exist_ok=True)

        def on_step(step: int) -> None:
            if step in snaps:
                stfile.write_atomic(snapshot_path(dir, step), model_bytes(tr.model, model_cfg))
        tr.on_step = on_step
    nparams = sum(p.numel() for p in model.parameters())
    _say(opts, f"torch engine: {json.dumps(opts.used)}; {nparams} parameters; {len(train)} training and "
               f"{len(val) if val is not None else 0} validation windows of {train.n} symbols; <= {total} steps")
    sigs: List[str] = []

    def handler(signum, _frame):
        sigs.append(signal.Signals(signum).name)
    old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        tr.run(lambda: sigs[0] if sigs else None)
    except Interrupted:
        save()
        raise
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        logf.close()
    stfile.write_atomic(os.path.join(dir, MODEL_FILE), model_bytes(tr.model, model_cfg))
    return tr


def _entry_from_json(j: dict) -> dict:
    e = dict(j)
    if e.get("epoch_end"):
        e.setdefault("val_loss", math.nan)
        e.setdefault("best_val_loss", math.inf)
    return e
