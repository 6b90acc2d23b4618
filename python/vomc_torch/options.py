"""vomc's training options, as vomc declares them once (transformer.Options
in Go): their keys, flags, types, defaults and bounds come from
train_options.json, which `go generate ./python` writes from that
declaration (do not edit it).  The train config's fields (TRAIN_FIELDS),
their checks (validate_train_config) and the training flags of
`python -m vomc_torch train` (add_train_arguments) all derive from it, and
vomc's tests check that they agree with the declaration.  Needs only the
standard library."""
from __future__ import annotations

import argparse
import json
import math
import os
from typing import Any, Dict, List, Optional

SCHEMA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "train_options.json")


def _load() -> List[dict]:
    with open(SCHEMA_FILE, encoding="utf-8") as f:
        opts = json.load(f)["options"]
    for o in opts:  # JSON writes a float default 1.0 as 1
        if o["type"] == "float":
            o["default"] = float(o["default"])
    return opts


OPTIONS: List[dict] = _load()
BY_KEY: Dict[str, dict] = {o["key"]: o for o in OPTIONS}
TRAIN_FIELDS: List[str] = [o["key"] for o in OPTIONS if o["train_config"]]
DEFAULTS: Dict[str, Any] = {o["key"]: o["default"] for o in OPTIONS}
MAX_BATCH: int = int(BY_KEY["batch_size"]["max"]["value"])

_TYPE_WANT = {"bool": "true or false", "int": "an integer", "uint": "an unsigned 64-bit integer",
              "float": "a number", "string": "a string"}


def engine_flag(o: dict) -> Optional[str]:
    """The flag under which the engine's train command takes option o
    (None: none)."""
    return o.get("engine_flag") or o.get("flag")


def _typed(o: dict, v: Any) -> bool:
    t = o["type"]
    if t == "bool":
        return isinstance(v, bool)
    if isinstance(v, bool):
        return False
    if t == "int":
        return isinstance(v, int)
    if t == "uint":
        return isinstance(v, int) and 0 <= v < 1 << 64
    if t == "float":
        return isinstance(v, (int, float))
    return isinstance(v, str)


def _bound(b: dict, c: dict) -> float:
    return c[b["option"]] if b.get("option") else b["value"]


def problem(o: dict, v: Any, c: dict) -> Optional[str]:
    """What is wrong with value v of option o given the other options'
    values in c (None: nothing), as vomc's Option.Check judges it."""
    if not _typed(o, v):
        return f"{o['key']} {v!r}: want {o.get('want') or _TYPE_WANT[o['type']]}"
    if o.get("choices"):
        return None if v == "" or v in o["choices"] else f"{o['key']} {v!r}: want {o['want']}"
    if o["type"] not in ("int", "uint", "float"):
        return None
    x = float(v)
    lo, hi = o.get("min"), o.get("max")
    bad = math.isnan(x) or (o.get("finite", False) and math.isinf(x))
    bad = bad or (lo is not None and (x < _bound(lo, c) or lo.get("open", False) and x == _bound(lo, c)))
    bad = bad or (hi is not None and (x > _bound(hi, c) or hi.get("open", False) and x == _bound(hi, c)))
    if bad:
        return f"{o['key']} {v!r}: want {o['want']}"
    other = o.get("product_below_one")
    if other and _typed(BY_KEY[other], c.get(other)) and x * c[other] >= 1:
        return f"{other} {c[other]!r} with {o['key']} {v!r}: want {other} * {o['key']} < 1"
    return None


def validate_train_config(c: dict) -> dict:
    """A complete train config (omitted max_steps / log_every are 0, an
    omitted lr_schedule is cosine, as vomc writes it), checked as vomc's
    TrainConfig.Validate checks it."""
    c = dict(c)
    c.setdefault("max_steps", 0)
    c.setdefault("log_every", 0)
    if not c.get("lr_schedule"):
        c["lr_schedule"] = "cosine"
    for k in TRAIN_FIELDS:
        if k not in c:
            raise ValueError(f"train config without {k!r}")
    unknown = set(c) - set(TRAIN_FIELDS)
    if unknown:
        raise ValueError(f"train config: unknown fields {sorted(unknown)}")
    for k in TRAIN_FIELDS:
        msg = problem(BY_KEY[k], c[k], c)
        if msg:
            raise ValueError(f"train config: {msg}")
    return c


def check_flag(key: str, v: Any) -> None:
    """Refuses a bad value of a run option given as a flag (ValueError
    naming the flag)."""
    o = BY_KEY[key]
    msg = problem(o, v, DEFAULTS)
    if msg:
        raise ValueError("--" + engine_flag(o) + msg[len(key):])


def add_train_arguments(p: argparse.ArgumentParser) -> None:
    """The training flags of `train`: every declared option that has one,
    with its default (vomc train's) and documentation."""
    for o in OPTIONS:
        flag = engine_flag(o)
        if not flag:
            continue
        doc = o["doc"] if not o.get("engine_flag") else "comma list of steps after which the model is kept in snapshots/ (vomc resolves --" + o["flag"] + ")"
        if o["type"] == "bool":
            p.add_argument("--" + flag, action="store_true", default=o["default"], help=doc)
        else:
            kind = {"int": int, "uint": int, "float": float, "string": str}[o["type"]]
            p.add_argument("--" + flag, type=kind, default=o["default"], choices=o.get("choices"), help=doc)


def train_config_of(args: argparse.Namespace) -> dict:
    """The train config of parsed `train` flags: each option's flag's value,
    the declared default for those without a flag."""
    tc = {}
    for k in TRAIN_FIELDS:
        flag = engine_flag(BY_KEY[k])
        tc[k] = getattr(args, flag.replace("-", "_")) if flag else DEFAULTS[k]
    return tc


def accepted(parser: argparse.ArgumentParser) -> dict:
    """What the engine accepts, for vomc's tests: the train config's fields
    and the training flags of `train` with their defaults."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["train"]
    flags = {}
    for a in sub._actions:
        for s in a.option_strings:
            if s.startswith("--"):
                flags[s[2:]] = a.default
    return {"train_fields": TRAIN_FIELDS, "flags": flags}
