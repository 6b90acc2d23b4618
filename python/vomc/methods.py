"""Predictors and in-context evaluation — vomc's methods and eval
packages through libvomc: the same code, numbers and tables as `vomc eval`."""
from __future__ import annotations

import json
import math
from typing import Callable, Dict, List, Mapping, Optional, Union

import numpy as np

from . import _arrays
from ._lib import call
from .sources import Dataset, Prior


def _data(windows, alphabet, prior):
    """The windows array and the alphabet: from a Dataset (its prior too) or
    an integer array."""
    if isinstance(windows, Dataset):
        if prior is None:
            prior = windows.prior
        windows = windows.symbols
    if prior is not None and not isinstance(prior, Prior):
        raise TypeError(f"prior: {type(prior).__name__}, want vomc.Prior")
    A = prior.A if (alphabet is None and prior is not None) else _arrays.alphabet_of(windows, alphabet)
    return _arrays.windows(windows, A), A, prior


def _defaults(x, A, prior, train, D, lam, alpha, workers):
    """The request's method defaults and the training windows (KN's tuning)."""
    req = {"A": A, "W": x.shape[0], "N": x.shape[1], "workers": int(workers)}
    if prior is not None:
        req["prior"] = prior.json
    for k, v in (("D", D), ("lambda", lam), ("alpha", alpha)):
        if v is not None:
            req[k] = v
    extra = []
    if train is not None:
        t = _arrays.windows(train.symbols if isinstance(train, Dataset) else train, A, "train")
        req["TW"], req["TN"] = t.shape
        extra.append(t)
    return req, extra


def predict(spec: str, windows, alphabet: Optional[int] = None, prior: Optional[Prior] = None, train=None,
            D: Optional[int] = None, lam: Optional[float] = None, alpha: Optional[float] = None,
            workers: int = 0) -> np.ndarray:
    """The predictive distributions of one method on every window, each from
    a fresh state: float64 of shape (W, N, A), row [w, t] = P(x_{t+1} = · |
    x_1..x_t) of window w — the layout of `vomc eval --export` and of the
    npy:path= method, with the same values.

    spec is any method of `vomc eval --methods` ("ctw:D=5", "bayes", "kn",
    "markov:k=3", "tf:path=RUN", …).  windows: (W, N) integer symbols (or a
    vomc.Dataset, whose prior is then the default); alphabet: A (default:
    the prior's, else 1 + the largest symbol); prior: the data's prior (bayes
    needs it; it also sets D, λ, α as for a data set); D, lam, alpha: the
    defaults otherwise (3, 0.15, 0.5, as `vomc eval --file`); train: the
    windows on which KN's discount is tuned (default: the windows).
    """
    x, A, prior = _data(windows, alphabet, prior)
    req, extra = _defaults(x, A, prior, train, D, lam, alpha, workers)
    req["spec"] = spec
    out = np.empty((x.shape[0], x.shape[1], A), dtype=np.float64)
    call("predict", req, [x, out] + extra)
    return out


def ctw_weights(windows, D: int = 3, lam: float = 0.15, alpha: float = 0.5, alphabet: Optional[int] = None,
                init: str = "pad"):
    """CTW's posterior weights and log marginal likelihoods per window.

    Returns (omega, logml): omega float64 (W, N, D+1), omega[w, t, l] the
    posterior probability ω that the length-l suffix of the context before
    symbol t is a leaf (vomc's ctw.State.Weights, the --weights CSV of `vomc
    ctw`); logml float64 (W,), ln P(x) of every window in nats.
    """
    A = _arrays.alphabet_of(windows, alphabet)
    x = _arrays.windows(windows, A)
    W, N = x.shape
    omega = np.empty((W, N, int(D) + 1), dtype=np.float64)
    logml = np.empty(W, dtype=np.float64)
    call("ctw_trace", {"A": A, "D": int(D), "lambda": float(lam), "alpha": float(alpha), "init": init,
                       "W": W, "N": N}, [x, omega, logml])
    return omega, logml


def model_probs(model, x: np.ndarray, A: int, batch: int = 64) -> np.ndarray:
    """The (W, N, A) distributions of a model on the windows x: a torch
    nn.Module mapping int64 tokens (B, T) to causal logits (B, T, A) (vomc's
    protocol: row 0 uniform, row t = softmax(logits[t-1])), or a callable
    mapping the (W, N) int64 windows to (W, N, A) probabilities."""
    try:
        import torch
    except ImportError:  # numpy only: plain callables
        torch = None
    if torch is not None and isinstance(model, torch.nn.Module):
        W, N = x.shape
        out = np.empty((W, N, A), dtype=np.float64)
        out[:, 0, :] = 1.0 / A
        dev = next((p.device for p in model.parameters()), torch.device("cpu"))
        was = model.training
        model.eval()
        try:
            with torch.no_grad():
                for s in range(0, W, batch):
                    idx = torch.from_numpy(x[s:s + batch].astype(np.int64)).to(dev)
                    logits = model(idx)
                    if isinstance(logits, tuple):
                        logits = logits[0]
                    if logits.shape[-1] != A:
                        raise ValueError(f"the model gives {logits.shape[-1]} logits per position, the data's alphabet is {A}")
                    out[s:s + batch, 1:, :] = torch.softmax(logits[:, :-1].double(), dim=-1).cpu().numpy()
        finally:
            model.train(was)
        return out
    p = model(x.astype(np.int64))
    if torch is not None and isinstance(p, torch.Tensor):
        p = p.detach().cpu().numpy()
    return p


class Interval:
    """A mean over windows with its confidence interval (nats)."""

    __slots__ = ("mean", "sd", "lo", "hi")

    def __init__(self, d: dict) -> None:
        for k in self.__slots__:
            v = d[k]
            setattr(self, k, math.nan if v is None else float(v))

    def __repr__(self) -> str:
        return f"{self.mean:.6g} [{self.lo:.6g}, {self.hi:.6g}]"


class MethodResult:
    """One method's results: window, second_half, excess_window,
    excess_second_half (Interval); position and excess: float64 (N, 4)
    arrays of mean, sd, lo, hi per position (1..N); second_half_windows,
    first_half_windows: per-window means (W,)."""

    def __init__(self, d: dict) -> None:
        self.name = d["name"]
        for k in ("window", "second_half", "excess_window", "excess_second_half"):
            setattr(self, k, Interval(d[k]))
        for k in ("position", "excess"):
            s = d[k]
            setattr(self, k, np.array([[math.nan if v is None else v for v in s[c]] for c in ("mean", "sd", "lo", "hi")],
                                      dtype=np.float64).T.copy())
        for k in ("second_half_windows", "first_half_windows"):
            setattr(self, k, np.array([math.nan if v is None else v for v in d.get(k) or []], dtype=np.float64))

    def __repr__(self) -> str:
        return f"<{self.name}: window {self.window}, excess {self.excess_window} nats>"


class EvalResult:
    """The outcome of evaluate: json (vomc's results.json, the same bytes as
    `vomc eval` writes: json_text), table (its summary table), reference
    (the reference's name) and the methods by name (result["CTW(…)"])."""

    def __init__(self, json_text: str, table: str) -> None:
        self.json_text, self.table = json_text, table
        self.json = json.loads(json_text)
        c = self.json["config"]
        self.windows, self.N, self.A = c["windows"], c["window_length"], c["alphabet_size"]
        self.reference, self.confidence = c["reference"], c["confidence"]
        self.methods: Dict[str, MethodResult] = {m["name"]: MethodResult(m) for m in self.json["methods"]}

    @property
    def names(self) -> List[str]:
        return list(self.methods)

    def __getitem__(self, name: str) -> MethodResult:
        try:
            return self.methods[name]
        except KeyError:
            raise KeyError(f"no method {name!r}; the methods are {', '.join(self.methods)}") from None

    def loss(self) -> np.ndarray:
        """Mean loss per position (nats), (methods, N), in names order."""
        return np.stack([m.position[:, 0] for m in self.methods.values()])

    def __str__(self) -> str:
        return self.table

    def _repr_pretty_(self, p, cycle) -> None:  # IPython
        p.text(self.table)

    def _repr_html_(self) -> str:
        import html
        return "<pre>" + html.escape(self.table) + "</pre>"


def _method_list(methods) -> List[str]:
    if methods is None:
        return []
    if isinstance(methods, str):
        return [m.strip() for m in methods.split(",") if m.strip()]
    return [str(m) for m in methods]


def evaluate(windows, models: Optional[Mapping[str, object]] = None, reference: Optional[str] = "bayes",
             methods: Union[str, List[str], None] = None, alphabet: Optional[int] = None,
             prior: Optional[Prior] = None, train=None, D: Optional[int] = None, lam: Optional[float] = None,
             alpha: Optional[float] = None, confidence: float = 0.95, workers: int = 0) -> EvalResult:
    """Evaluate in context, each window from a fresh state, as `vomc eval`:
    per-position losses with confidence intervals, the window and second-half
    means and the paired excess over the reference, in nats.

    models: {name: distributions} where each value is a (W, N, A) array of
    probabilities (the npy layout), a torch nn.Module (vomc's protocol:
    causal logits) or a callable giving that array from the (W, N) windows;
    each is checked as `vomc eval` checks an npy file.  methods: further vomc
    method specs ("ctw,kn,markov:k=3").  reference: a key of models, or a
    method spec evaluated first (default "bayes", which needs the prior;
    None: eval's default, the first Bayes, else CTW, else first method).
    The rest as predict.  The table and numbers are those `vomc eval`
    prints and writes for the same methods on the same windows.
    """
    x, A, prior = _data(windows, alphabet, prior)
    req, extra = _defaults(x, A, prior, train, D, lam, alpha, workers)
    specs = _method_list(methods)
    models = dict(models or {})
    ref_index = None
    if reference is not None and reference in models:
        ref_index = len(specs) + list(models).index(reference)
    elif reference is not None:
        if reference in specs:
            ref_index = specs.index(reference)
        else:
            specs.insert(0, reference)
            ref_index = 0
    W, N = x.shape
    arrays = [x]
    names = []
    for name, m in models.items():
        p = m if isinstance(m, np.ndarray) else (model_probs(m, x, A) if callable(m) else m)
        arrays.append(_arrays.floats(p, (W, N, A), str(name)))
        names.append(str(name))
    if not specs and not names:
        raise ValueError("nothing to evaluate: give models or methods")
    req.update(spec=",".join(specs), names=names, confidence=float(confidence))
    if ref_index is not None:
        req["ref_index"] = ref_index
    _, blobs = call("evaluate", req, arrays + extra)
    return EvalResult(blobs[0].decode(), blobs[1].decode())
