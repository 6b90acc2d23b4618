"""vomc's PyTorch engine from the command line.

  python -m vomc_torch check   [--device auto|cpu|cuda]
  python -m vomc_torch train   --out DIR --data DIR [model and training flags]
  python -m vomc_torch train   --out DIR --resume [--data DIR] [--val DIR]
  python -m vomc_torch predict --model FILE|DIR (--data DIR | --symbols FILE --n N --alphabet A) --out FILE.npy
  python -m vomc_torch bench   --config JSON --batch B [--plain]
  python -m vomc_torch arch    MODULE:FACTORY

`arch` prints, as JSON, where a custom architecture's module is (its file,
the file's SHA-256, the folder it imports from: arch.py), the record a new
run keeps in its config as "arch_source".

`vomc train --engine torch` runs `train --out DIR --resume` on a run
directory it has prepared (config.json, train_config.json and the step-0
checkpoint with vomc's initial parameters); the flags of `train` are those of
`vomc train`.  Exit status: 0 done, 2 bad input (nothing trained), 3
diverged (last good checkpoint kept), 4 environment (no CUDA), 130
interrupted (checkpoint saved; continue with --resume).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys

from .options import add_train_arguments

EXIT_BAD, EXIT_DIVERGED, EXIT_ENV, EXIT_INTERRUPTED = 2, 3, 4, 130


def _err(msg: str) -> None:
    """A message on stderr; nothing if stderr is gone (vomc died)."""
    try:
        print(msg, file=sys.stderr, flush=True)
    except OSError:
        sys.stderr = open(os.devnull, "w")  # else the exit's flush fails again (status 120)


def _check(args) -> int:
    import numpy
    import torch
    import torch.nn.functional as F
    from .train import resolve_device
    info = {"python": platform.python_version(), "torch": torch.__version__, "numpy": numpy.__version__,
            "cuda_available": torch.cuda.is_available(), "sdpa": hasattr(F, "scaled_dot_product_attention"),
            "compile": hasattr(torch, "compile")}
    dev = resolve_device(args.device)
    info["device"] = str(dev)
    if dev.type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(dev)
        info["bf16"] = torch.cuda.is_bf16_supported()
    print(json.dumps(info))
    return 0


RUN_FILES = ["checkpoint.safetensors", "model.safetensors", "config.json", "train_config.json", "train.jsonl",
             "curve.png", "curve.svg"]


def _prepare(args) -> list:
    """Write config.json and train_config.json of a new run (standalone use);
    returns what it created (the files, and --out itself if it was made)."""
    from .data import read_dataset
    from .options import TRAIN_FIELDS, train_config_of, validate_train_config
    held = [f for f in RUN_FILES if os.path.exists(os.path.join(args.out, f))]
    if held and not args.force:
        raise ValueError(f"{args.out} holds a training run ({held[0]}): continue it with --resume, or start afresh with --force")
    if not args.data:
        raise ValueError("--data DIR is required")
    ds = read_dataset(args.data)  # checked again when training; here for A and N
    T = args.N or ds.N
    if args.arch == "transformer":
        hs = [int(h) for h in args.heads.split(",")]
        if len(hs) == 1:
            hs = hs * args.layers
        cfg = {"layers": args.layers, "heads": hs, "embed": args.E, "context": T, "alphabet": ds.A,
               "feed_forward": args.ff, "layer_norm": args.layernorm, "activation": args.act, "positional": args.pos}
        from .model import check_transformer_config
        check_transformer_config(cfg)
    else:
        cfg = {"arch": args.arch, "alphabet": ds.A, "context": T, "embed": args.E, "hidden": args.hidden or args.E,
               "layers": args.layers}
        if ":" in args.arch:
            from .arch import SOURCE_KEY, resolve
            cfg[SOURCE_KEY] = resolve(args.arch)
    tc = {k: validate_train_config(train_config_of(args))[k] for k in TRAIN_FIELDS}
    if not (0 <= args.val_frac < 1):
        raise ValueError(f"--val-frac {args.val_frac} outside [0, 1)")
    meta = {"data": os.path.abspath(args.data), "val": os.path.abspath(args.val) if args.val else "",
            "val_frac": repr(args.val_frac) if args.val_frac != int(args.val_frac) else str(int(args.val_frac)),
            "N": str(args.N), "split_seed": str(args.seed)}
    for f in held:  # --force, and every check passed: the old run goes
        os.unlink(os.path.join(args.out, f))
    made = [] if os.path.isdir(args.out) else [args.out]
    os.makedirs(args.out, exist_ok=True)
    from .stfile import write_atomic
    write_atomic(os.path.join(args.out, "config.json"), (json.dumps(cfg, indent=2) + "\n").encode())
    write_atomic(os.path.join(args.out, "train_config.json"),
                 (json.dumps({"train": tc, "data": meta, "engine": "torch"}, indent=2) + "\n").encode())
    return made + [os.path.join(args.out, f) for f in ("config.json", "train_config.json")]


def _steps(s: str) -> tuple:
    """A comma list of positive steps."""
    try:
        steps = tuple(int(x) for x in s.split(",") if x.strip())
    except ValueError:
        raise ValueError(f"--snapshot-steps {s!r}: want a comma list of steps") from None
    if any(x < 1 for x in steps):
        raise ValueError(f"--snapshot-steps {s!r}: steps must be >= 1")
    return steps


def _train(args) -> int:
    from .options import check_flag
    from .train import Diverged, EngineOptions, Interrupted, run
    snaps = _steps(args.snapshot_steps)  # before anything is written
    made = [] if args.resume else _prepare(args)
    opts = EngineOptions(device=args.device, amp=args.amp, sdpa=not args.no_sdpa, tf32=not args.no_tf32,
                         fused_adamw=not args.no_fused, compile=args.compile, pin_memory=not args.no_pin,
                         checkpoint_every=args.checkpoint_every, threads=args.threads, quiet=args.quiet,
                         snapshot_steps=snaps)
    try:
        check_flag("checkpoint_every", args.checkpoint_every)
        tr = run(args.out, opts, init=args.init, data=args.data if args.resume else None,
                 val=args.val if args.resume else None)
    except Interrupted as e:
        _err(f"vomc_torch: {e}; checkpoint saved, continue with --resume")
        return EXIT_INTERRUPTED
    except Diverged as e:
        _err(f"vomc_torch: {e}; the last good checkpoint is kept; lower --lr and train afresh")
        return EXIT_DIVERGED
    except BaseException:
        if not os.path.exists(os.path.join(args.out, "checkpoint.safetensors")):  # nothing trained: leave --out as it was
            for p in reversed(made):
                os.rmdir(p) if os.path.isdir(p) else os.unlink(p)
        raise
    best = f"; best validation loss {tr.best_val:.4f} nats/symbol" if tr.best_val < float("inf") else ""
    if not args.no_summary:
        _err(f"trained {tr.step} steps, {tr.epoch} epochs in {tr.elapsed:.0f} s{best}; wrote {args.out}/model.safetensors")
    return 0


def _predict(args) -> int:
    from .data import read_dataset
    from .predict import predict, save_npy
    from .train import load_model_file, resolve_device
    path = os.path.join(args.model, "model.safetensors") if os.path.isdir(args.model) else args.model
    model, cfg = load_model_file(path)
    if args.symbols:
        from .predict import read_windows
        ds = read_windows(args.symbols, args.n, args.alphabet)
    elif args.n or args.alphabet:
        raise ValueError("--n and --alphabet go with --symbols (a data set has its own)")
    else:
        ds = read_dataset(args.data)
    if cfg.get("alphabet") != ds.A:
        raise ValueError(f"the model's alphabet is {cfg.get('alphabet')}, the data's {ds.A}")
    if "context" in cfg and ds.N > cfg["context"] and cfg.get("arch", "transformer") == "transformer":
        raise ValueError(f"windows of {ds.N} symbols, longer than the model's context {cfg['context']}")
    if os.path.exists(args.out) and not args.force:
        raise ValueError(f"{args.out} exists (use --force to replace it)")
    save_npy(args.out, predict(model, ds, resolve_device(args.device), args.batch))
    print(f"wrote {args.out}: ({len(ds.symbols)}, {ds.N}, {ds.A}) float32", file=sys.stderr)
    return 0


def _bench(args) -> int:
    from .bench import bench
    from .model import check_transformer_config
    from .train import EngineOptions
    cfg = json.loads(args.config)
    check_transformer_config(cfg)
    opts = EngineOptions(device=args.device, amp=args.amp, sdpa=not args.no_sdpa, tf32=not args.no_tf32,
                         fused_adamw=not args.no_fused, compile=args.compile, pin_memory=not args.no_pin,
                         threads=args.threads, quiet=True)
    for plain in ([False, True] if args.plain else [False]):
        print(json.dumps(bench(cfg, args.batch, args.steps, args.warmup, opts, plain=plain, seed=args.seed)), flush=True)
    return 0


def _arch(args) -> int:
    from .arch import resolve
    print(json.dumps(resolve(args.arch)))
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m vomc_torch", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check", help="print the environment as JSON; fail if --device is unavailable")
    c.add_argument("--device", default="auto")
    t = sub.add_parser("train", help="train a model on a vomc data set (vomc train's flags)")
    t.add_argument("--out", required=True, help="run directory")
    t.add_argument("--data", help="training data set (from 'vomc data')")
    t.add_argument("--val", help="validation data set (default: --val-frac of the training trees)")
    t.add_argument("--val-frac", type=float, default=0.05)
    t.add_argument("-N", "--N", type=int, default=0, help="cut windows into windows of N symbols (0: as they are)")
    t.add_argument("--resume", action="store_true", help="continue the run in --out (or start one vomc prepared)")
    t.add_argument("--force", action="store_true")
    t.add_argument("--init", help="initial parameters: a vomc model file (transformer only)")
    t.add_argument("--arch", default="transformer", help="transformer, lstm, or MODULE:FACTORY (MODULE: a .py file or a module name)")
    t.add_argument("--layers", type=int, default=2)
    t.add_argument("--heads", default="8")
    t.add_argument("-E", "--E", type=int, default=128)
    t.add_argument("--hidden", type=int, default=0, help="LSTM width (default: E)")
    t.add_argument("--ff", action=argparse.BooleanOptionalAction, default=True)
    t.add_argument("--layernorm", action=argparse.BooleanOptionalAction, default=True)
    t.add_argument("--act", default="gelu", choices=["gelu", "relu"])
    t.add_argument("--pos", default="learned", choices=["learned", "sinusoidal"])
    add_train_arguments(t)  # the training options, as vomc declares them (options.py)
    t.add_argument("--no-summary", action="store_true", help=argparse.SUPPRESS)  # vomc prints its own
    b = sub.add_parser("bench", help="time training steps; prints one JSON report per mode")
    b.add_argument("--config", required=True, help="vomc's transformer Config as JSON")
    b.add_argument("--batch", type=int, required=True)
    b.add_argument("--steps", type=int, default=5)
    b.add_argument("--warmup", type=int, default=2)
    b.add_argument("--seed", type=int, default=1)
    b.add_argument("--plain", action="store_true", help="also time a plain eager float32 loop")
    for a in (t, b):
        a.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N")
        a.add_argument("--amp", default="auto", help="auto (bf16 on CUDA), bf16 or off")
        a.add_argument("--compile", action="store_true", help="torch.compile the model (torch >= 2)")
        a.add_argument("--no-sdpa", action="store_true", help="explicit attention instead of scaled_dot_product_attention")
        a.add_argument("--no-tf32", action="store_true")
        a.add_argument("--no-fused", action="store_true", help="AdamW without the fused CUDA kernel")
        a.add_argument("--no-pin", action="store_true", help="no pinned-memory batches")
        a.add_argument("--threads", type=int, default=0, help="CPU threads (0: torch's default)")
        a.add_argument("--quiet", action="store_true")
    r = sub.add_parser("predict", help="write a model's per-position distributions on a data set as .npy")
    r.add_argument("--model", required=True, help="model.safetensors (vomc's or this engine's) or its run directory")
    src = r.add_mutually_exclusive_group(required=True)
    src.add_argument("--data", help="a vomc data set directory")
    src.add_argument("--symbols", help="windows as raw bytes, one symbol a byte, windows x --n of them (vomc eval's torch: method)")
    r.add_argument("--n", type=int, default=0, help="with --symbols: the window length N")
    r.add_argument("--alphabet", type=int, default=0, help="with --symbols: the alphabet size A")
    r.add_argument("--out", required=True)
    r.add_argument("--device", default="auto")
    r.add_argument("--batch", type=int, default=64)
    r.add_argument("--force", action="store_true")
    a = sub.add_parser("arch", help="print where a custom architecture's module is, as JSON")
    a.add_argument("arch", help="MODULE:FACTORY (MODULE: a .py file or a module name)")
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    try:
        return {"check": _check, "train": _train, "predict": _predict, "bench": _bench, "arch": _arch}[args.cmd](args)
    except KeyboardInterrupt:  # SIGINT before training installed its handler (e.g. while torch loads)
        _err("vomc_torch: interrupted before training started")
        return EXIT_INTERRUPTED
    except EnvironmentError as e:
        _err(f"vomc_torch: {e}")
        if isinstance(e, (FileNotFoundError, PermissionError, IsADirectoryError)):
            return EXIT_BAD
        return EXIT_ENV
    except ImportError as e:  # torch or numpy missing (a custom module's imports are ArchErrors)
        _err(f"vomc_torch: this Python, {sys.executable} ({platform.python_version()}), cannot import {e.name or e} ({e}): "
             f"install it (Debian: apt-get install python3-torch python3-numpy; elsewhere: pip install torch numpy) or "
             f"run the engine with an interpreter that has it (vomc: set VOMC_PYTHON to its path)")
        return EXIT_ENV
    except (ValueError, KeyError) as e:
        _err(f"vomc_torch: {e}")
        return EXIT_BAD


if __name__ == "__main__":
    sys.exit(main())
